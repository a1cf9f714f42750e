// sys.h — thin wrappers over the Linux calls the vfs uses (internal to nfs/vfs).
#pragma once

#include <fcntl.h>
#include <linux/openat2.h>
#include <sys/stat.h>

#include <cstdint>
#include <string_view>

#include "nfs/vfs/result.h"
#include "nfs/vfs/unique_fd.h"

namespace nfsrdmad::vfs::sys {

// "/proc/self/fd/N": reopening it applies a fresh permission check with the calling
// thread's credentials, which is how an O_PATH fd becomes a readable/writable one.
struct ProcFdPath {
    char buf[32];
    const char* c_str() const { return buf; }
};
ProcFdPath proc_fd_path(int fd);

inline constexpr unsigned kStatxMask = STATX_BASIC_STATS | STATX_BTIME;

// statx(fd, "", AT_EMPTY_PATH): works on O_PATH descriptors and symlinks.
Result<struct statx> stat_fd(int fd);
// The same into `out` (the kernel writes all of it), without a copy through a Result:
// 0, or the errno.
int stat_fd_into(int fd, struct statx& out);

// The flags every single-component lookup uses: never leave the directory, never follow a
// symlink (magic or not), never cross into another mount (RFC 1813 §3.3.3: LOOKUP does
// not cross mount points; the client must mount them separately).
inline constexpr uint64_t kResolveBeneath =
    RESOLVE_BENEATH | RESOLVE_NO_MAGICLINKS | RESOLVE_NO_XDEV | RESOLVE_NO_SYMLINKS;

// openat2(dirfd, name, {flags | O_CLOEXEC, mode, resolve}); retries EAGAIN/EINTR.
Result<UniqueFd> openat2(int dirfd, const char* name, uint64_t flags, uint64_t resolve,
                         uint64_t mode = 0);

// Opens name in dirfd as O_PATH|O_NOFOLLOW with kResolveBeneath.
Result<UniqueFd> open_child_path(int dirfd, const char* name);

// open("/proc/self/fd/N", flags | O_CLOEXEC) with the thread's current credentials.
Result<UniqueFd> reopen(int fd, int flags);

Result<UniqueFd> dup_fd(int fd);

// NUL-terminated copy of a validated name (names are at most 255 bytes).
struct NameBuf {
    char buf[256];
    const char* c_str() const { return buf; }
};
NameBuf name_buf(std::string_view name);

}  // namespace nfsrdmad::vfs::sys
