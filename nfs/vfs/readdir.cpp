#include "nfs/vfs/readdir.h"

#include <dirent.h>
#include <fcntl.h>
#include <unistd.h>

#include <cerrno>
#include <climits>
#include <cstring>

#include "nfs/vfs/siphash.h"
#include "nfs/vfs/sys.h"

namespace nfsrdmad::vfs {
namespace {

constexpr SipKey kCookieVerifierKey = {'n', 'f', 's', 'r', 'd', 'm', 'a', 'd',
                                       '-', 'c', 'v', 'e', 'r', 'f', '-', '1'};
constexpr size_t kDentsBufferSize = 32 * 1024;

Result<UniqueFd> open_for_listing(const Node& dir, uint64_t cookie, const Identity& id) {
    auto fd = with_identity(id, [&] { return sys::reopen(dir.fd.get(), O_RDONLY | O_DIRECTORY); });
    if (!fd) return fd;
    if (cookie != 0) {
        if (cookie > static_cast<uint64_t>(LLONG_MAX)) return fail(EINVAL);
        if (::lseek(fd->get(), static_cast<off_t>(cookie), SEEK_SET) < 0) return fail(errno);
    }
    return fd;
}

// Delivers one getdents64 batch. Returns false when the callback declined an entry.
bool deliver(const char* buf, size_t len, DirCallback& callback) {
    for (size_t off = 0; off < len;) {
        struct dirent64 d;
        std::memcpy(&d, buf + off, offsetof(struct dirent64, d_name));  // header only
        const char* name = buf + off + offsetof(struct dirent64, d_name);
        const DirEntry entry{std::string_view(name), d.d_ino, d.d_type,
                             static_cast<uint64_t>(d.d_off)};
        if (!callback(entry)) return false;
        off += d.d_reclen;
    }
    return true;
}

}  // namespace

Result<ReaddirResult> readdir(const Node& dir, uint64_t cookie, DirCallback callback,
                              const Identity& id) {
    auto fd = open_for_listing(dir, cookie, id);
    if (!fd) return fd.failure();
    alignas(struct dirent64) char buf[kDentsBufferSize];
    for (;;) {
        const ssize_t n = ::getdents64(fd->get(), buf, sizeof buf);
        if (n < 0) return fail(errno);
        if (n == 0) return ReaddirResult{true};
        if (!deliver(buf, static_cast<size_t>(n), callback)) return ReaddirResult{false};
    }
}

uint64_t cookie_verifier(const struct statx& st) {
    uint64_t fields[5] = {st.stx_dev_major, st.stx_dev_minor, st.stx_ino, 0, 0};
    if (st.stx_mask & STATX_BTIME) {
        fields[3] = static_cast<uint64_t>(st.stx_btime.tv_sec);
        fields[4] = st.stx_btime.tv_nsec;
    }
    const uint64_t h =
        siphash24(kCookieVerifierKey, {reinterpret_cast<const uint8_t*>(fields), sizeof fields});
    return h == 0 ? 1 : h;
}

Result<uint64_t> cookie_verifier(const Node& dir) {
    auto st = sys::stat_fd(dir.fd.get());
    if (!st) return st.failure();
    return cookie_verifier(*st);
}

}  // namespace nfsrdmad::vfs
