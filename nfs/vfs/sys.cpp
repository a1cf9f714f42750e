#include "nfs/vfs/sys.h"

#include <sys/syscall.h>
#include <unistd.h>

#include <cerrno>
#include <cstdio>
#include <cstring>

#include "nfs/vfs/fd_pressure.h"

namespace nfsrdmad::vfs::sys {

ProcFdPath proc_fd_path(int fd) {
    ProcFdPath p;
    std::snprintf(p.buf, sizeof p.buf, "/proc/self/fd/%d", fd);
    return p;
}

int stat_fd_into(int fd, struct statx& out) {
    return ::statx(fd, "", AT_EMPTY_PATH | AT_STATX_SYNC_AS_STAT, kStatxMask, &out) != 0 ? errno
                                                                                         : 0;
}

Result<struct statx> stat_fd(int fd) {
    struct statx st {};
    if (int err = stat_fd_into(fd, st); err != 0) return fail(err);
    return st;
}

Result<UniqueFd> openat2(int dirfd, const char* name, uint64_t flags, uint64_t resolve,
                         uint64_t mode) {
    struct open_how how {};
    how.flags = flags | O_CLOEXEC;
    how.mode = mode;
    how.resolve = resolve;
    for (int attempt = 0; attempt < 16; ++attempt) {
        const int fd = open_reclaiming([&] {
            return static_cast<int>(::syscall(SYS_openat2, dirfd, name, &how, sizeof how));
        });
        if (fd >= 0) return UniqueFd(fd);
        if (errno != EAGAIN && errno != EINTR) return fail(errno);
    }
    return fail(EAGAIN);
}

Result<UniqueFd> open_child_path(int dirfd, const char* name) {
    return openat2(dirfd, name, O_PATH | O_NOFOLLOW, kResolveBeneath);
}

Result<UniqueFd> reopen(int fd, int flags) {
    const ProcFdPath path = proc_fd_path(fd);
    const int nfd = open_reclaiming([&] {
        int r;
        do {
            r = ::open(path.c_str(), flags | O_CLOEXEC);
        } while (r < 0 && errno == EINTR);
        return r;
    });
    if (nfd < 0) return fail(errno);
    return UniqueFd(nfd);
}

Result<UniqueFd> dup_fd(int fd) {
    const int nfd = open_reclaiming([&] { return ::fcntl(fd, F_DUPFD_CLOEXEC, 0); });
    if (nfd < 0) return fail(errno);
    return UniqueFd(nfd);
}

NameBuf name_buf(std::string_view name) {
    NameBuf b;
    const size_t n = name.size() < sizeof b.buf ? name.size() : sizeof b.buf - 1;
    std::memcpy(b.buf, name.data(), n);
    b.buf[n] = '\0';
    return b;
}

}  // namespace nfsrdmad::vfs::sys
