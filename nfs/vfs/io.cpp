#include "nfs/vfs/io.h"

#include <fcntl.h>
#include <sys/stat.h>
#include <sys/uio.h>
#include <unistd.h>

#include <cerrno>
#include <climits>

#include "nfs/vfs/attrs.h"
#include "nfs/vfs/sys.h"

namespace nfsrdmad::vfs {
namespace {

constexpr uint64_t kMaxOffset = static_cast<uint64_t>(LLONG_MAX);

// Returns the attributes it looked at, for the caller's EOF computation. POSIX ACLs count
// (access_of); may_switch false: EWOULDBLOCK where one would have to be read as id.
Result<struct statx> check_io_permission(const OpenFile& file, const Identity& id, OpenFor op,
                                         Unlinked unlinked, const struct statx* known = nullptr,
                                         bool may_switch = true) {
    Result<struct statx> st = known ? Result<struct statx>(*known) : sys::stat_fd(file.fd.get());
    if (!st) return st;
    // Removed: the handle is stale, unless the caller holds the file open (NFSv4).
    if (st->stx_nlink == 0 && unlinked == Unlinked::Stale) return fail(ESTALE);
    if (id.uid == st->stx_uid) return st;  // owner override
    const uint32_t needed = op == OpenFor::Read ? (kAccessRead | kAccessExecute) : kAccessModify;
    auto granted = access_of(file.fd.get(), *st, id, needed, may_switch);
    if (!granted) return granted.failure();
    if (*granted == 0) return fail(EACCES);
    return st;
}

Result<uint32_t> pread_full(int fd, uint64_t offset, uint32_t count, void* dst) {
    auto* out = static_cast<uint8_t*>(dst);
    uint32_t done = 0;
    while (done < count) {
        const ssize_t n = ::pread(fd, out + done, count - done, static_cast<off_t>(offset + done));
        if (n < 0 && errno == EINTR) continue;
        if (n < 0) {
            if (done > 0) break;
            return fail(errno);
        }
        if (n == 0) break;
        done += static_cast<uint32_t>(n);
    }
    return done;
}

// pread_full from the page cache only: EWOULDBLOCK unless every byte up to `count` (or
// end of file) is there; a short read is never returned, since the rest may be on disk.
Result<uint32_t> pread_cached(int fd, uint64_t offset, uint32_t count, void* dst) {
    auto* out = static_cast<uint8_t*>(dst);
    uint32_t done = 0;
    while (done < count) {
        struct iovec iov {
            out + done, count - done
        };
        const ssize_t n = ::preadv2(fd, &iov, 1, static_cast<off_t>(offset + done), RWF_NOWAIT);
        if (n < 0 && errno == EINTR) continue;
        if (n < 0) return fail(errno == EAGAIN || errno == EOPNOTSUPP ? EWOULDBLOCK : errno);
        if (n == 0) break;  // end of file
        done += static_cast<uint32_t>(n);
    }
    return done;
}

int rwf_flags(StableHow stable) {
    switch (stable) {
        case StableHow::Unstable:
            return 0;
        case StableHow::DataSync:
            return RWF_DSYNC;
        case StableHow::FileSync:
            return RWF_SYNC;
    }
    return RWF_SYNC;
}

Result<uint32_t> pwrite_full(int fd, uint64_t offset, std::span<const uint8_t> data, int flags) {
    size_t done = 0;
    while (done < data.size()) {
        struct iovec iov {
            const_cast<uint8_t*>(data.data() + done), data.size() - done
        };
        const ssize_t n = ::pwritev2(fd, &iov, 1, static_cast<off_t>(offset + done), flags);
        if (n < 0 && errno == EINTR) continue;
        if (n < 0) {
            if (done > 0) break;  // report the progress; the client retries the rest
            return fail(errno);
        }
        if (n == 0) break;
        done += static_cast<size_t>(n);
    }
    return static_cast<uint32_t>(done);
}

// The READ both ways share: permission, the offset limit, then `transfer` moves up to
// `count` bytes and says how many (and whether it stopped for a reason other than EOF).
template <class Transfer>
Result<ReadResult> read_with(const OpenFile& file, uint64_t offset, uint32_t count,
                             const Identity& id, Unlinked unlinked, Transfer&& transfer,
                             bool may_switch = true) {
    auto st = check_io_permission(file, id, OpenFor::Read, unlinked, nullptr, may_switch);
    if (!st) return st.failure();
    // Past the largest offset a file can have: nothing to read, the attributes as read.
    if (offset >= kMaxOffset) return ReadResult{0, true, *st};
    if (count > kMaxOffset - offset) count = static_cast<uint32_t>(kMaxOffset - offset);

    bool stopped_early = false;
    Result<uint32_t> done = transfer(count, stopped_early);
    if (!done) return done.failure();
    const uint64_t end = offset + *done;
    bool eof = !stopped_early && (*done < count || end >= st->stx_size);
    if (eof && *done == count && count > 0) {
        // Full read ending at the old size: the file may have grown meanwhile.
        auto now = sys::stat_fd(file.fd.get());
        if (now) eof = end >= now->stx_size;
    }
    return ReadResult{*done, eof, *st};
}

}  // namespace

Result<ReadResult> read(const OpenFile& file, uint64_t offset, uint32_t count, void* dst,
                        const Identity& id, Unlinked unlinked) {
    return read_with(file, offset, count, id, unlinked,
                     [&](uint32_t n, bool&) { return pread_full(file.fd.get(), offset, n, dst); });
}

Result<ReadResult> read_nowait(const OpenFile& file, uint64_t offset, uint32_t count, void* dst,
                               const Identity& id, Unlinked unlinked) {
    if (count > kNowaitReadMax) return fail(EWOULDBLOCK);
    return read_with(
        file, offset, count, id, unlinked,
        [&](uint32_t n, bool&) { return pread_cached(file.fd.get(), offset, n, dst); },
        /*may_switch=*/false);
}

Result<ReadResult> read_to_pipe(const OpenFile& file, uint64_t offset, uint32_t count, int pipe_fd,
                                const Identity& id, Unlinked unlinked) {
    return read_with(
        file, offset, count, id, unlinked, [&](uint32_t n, bool& stopped_early) -> Result<uint32_t> {
            loff_t off = static_cast<loff_t>(offset);
            uint32_t done = 0;
            while (done < n) {
                // Non-blocking on the pipe side only: a full pipe ends the read short.
                const ssize_t got =
                    ::splice(file.fd.get(), &off, pipe_fd, nullptr, n - done, SPLICE_F_NONBLOCK);
                if (got == 0) break;  // end of file
                if (got < 0) {
                    if (errno == EINTR) continue;
                    if (errno == EAGAIN && done > 0) {
                        stopped_early = true;
                        break;
                    }
                    if (done == 0) return fail(errno);
                    stopped_early = true;  // report the progress, like pread_full
                    break;
                }
                done += static_cast<uint32_t>(got);
            }
            return done;
        });
}

Result<WriteResult> write(const OpenFile& file, uint64_t offset, std::span<const uint8_t> data,
                          StableHow stable, const Identity& id, Unlinked unlinked,
                          const struct statx* attrs) {
    if (!file.writable) return fail(EBADF);
    if (data.size() > UINT32_MAX) return fail(EINVAL);
    if (offset > kMaxOffset || data.size() > kMaxOffset - offset) return fail(EFBIG);
    if (auto st = check_io_permission(file, id, OpenFor::Write, unlinked, attrs); !st)
        return st.failure();

    auto done = with_identity(
        id, [&] { return pwrite_full(file.fd.get(), offset, data, rwf_flags(stable)); });
    if (!done) return done.failure();
    return WriteResult{*done, stable};
}

Result<void> commit(const OpenFile& file, uint64_t /*offset*/, uint32_t /*count*/) {
    return check_syscall(::fsync(file.fd.get()));
}

Result<struct statx> getattr(const OpenFile& file) {
    return sys::stat_fd(file.fd.get());
}

Result<void> touch(const OpenFile& file) {
    const struct timespec times[2] = {{0, UTIME_OMIT}, {0, UTIME_NOW}};
    return check_syscall(::futimens(file.fd.get(), times));
}

}  // namespace nfsrdmad::vfs
