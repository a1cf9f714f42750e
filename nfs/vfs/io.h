// io.h — READ, WRITE, COMMIT on cached descriptors (fd_cache.h).
//
// Data moves directly between the file and the caller's memory (pread into dst, pwrite
// from data): no intermediate buffer, so dst/data may be RDMA-registered memory.
// Permission is checked against the caller's identity *before* the shared root-opened
// descriptor is used (POSIX ACLs included: vfs::access_of), with Linux nfsd's owner override: the
// owner may read/write their own file whatever its mode (a client writes through a file it created
// 0444 and still holds open; the client checked permission at open time).
#pragma once

#include <sys/stat.h>

#include <cstdint>
#include <span>

#include "nfs/vfs/fd_cache.h"
#include "nfs/vfs/identity.h"
#include "nfs/vfs/result.h"

namespace nfsrdmad::vfs {

struct ReadResult {
    uint32_t count = 0;  // bytes placed at dst
    bool eof = false;    // the read reached end of file (RFC 1813 §3.3.6)
    // The file's attributes the read was checked against: a READ reply's post_op_attr,
    // without a second statx. Read before the data, they are never newer than it, so a
    // client that caches the data under them sees a write that raced the read change
    // them later (attributes read after the data could cover such a write).
    struct statx attrs {};
};

// RFC 1813 §3.3.7 stable_how (same numeric values).
enum class StableHow { Unstable = 0, DataSync = 1, FileSync = 2 };

struct WriteResult {
    uint32_t count = 0;   // bytes written (may be short on ENOSPC/EDQUOT after progress)
    StableHow committed;  // how durable the data is now (>= requested)
};

// RFC 1813 §3.3.6 READ of up to count bytes at offset into dst (which must hold count
// bytes). Permission: owner, or read or execute permission (execute: a client running a
// binary must be able to page it in). EACCES otherwise; ESTALE if the file was deleted.
// What I/O on a file whose last name is gone answers: ESTALE for a handle (NFSv3: the
// file is gone), or the data for NFSv4 I/O through an open stateid (RFC 8881 §9: the
// file lives until the last CLOSE).
enum class Unlinked { Stale, Allowed };

Result<ReadResult> read(const OpenFile& file, uint64_t offset, uint32_t count, void* dst,
                        const Identity& id, Unlinked unlinked = Unlinked::Stale);

// The same READ for a caller that must not block (rpc::CallContext::nowait): from the page
// cache only (preadv2 RWF_NOWAIT), EWOULDBLOCK when any of the bytes it would return is
// not there (or the file system cannot say: EOPNOTSUPP), with nothing returned. One
// blocking step is left that RWF_NOWAIT does not cover: an access-time update, which
// relatime (the default) makes at most once a day per file. A caller whom a POSIX ACL
// concerns (access_of: neither root nor the owner, and the file has one) gets
// EWOULDBLOCK too: only a worker may take the caller's identity to ask the kernel. The
// probe for an ACL is an fgetxattr of the open file (in-inode on ext4 and XFS).
// At most kNowaitReadMax bytes (more: EWOULDBLOCK): the copy runs on the caller's thread, a
// reactor serving other connections, where a worker's copies of large READs run in parallel.
inline constexpr uint32_t kNowaitReadMax = 64u << 10;
Result<ReadResult> read_nowait(const OpenFile& file, uint64_t offset, uint32_t count, void* dst,
                               const Identity& id, Unlinked unlinked = Unlinked::Stale);

// The same READ, but the data never enters userspace: splice(2) moves page-cache pages
// (references, not copies) into the pipe `pipe_fd`, which must be empty and hold
// `count` bytes (a pipe slot per page touched: one more than count/4096 when the offset
// is unaligned); the transport splices it on to its socket. Stops early (a short read,
// eof false) if the pipe fills. EINVAL when the file system cannot splice: read() then.
Result<ReadResult> read_to_pipe(const OpenFile& file, uint64_t offset, uint32_t count, int pipe_fd,
                                const Identity& id, Unlinked unlinked = Unlinked::Stale);

// RFC 1813 §3.3.7 WRITE of data at offset. file must come from FdCache::get(...,
// OpenFor::Write) (else EBADF). Permission: owner or write permission -> else EACCES.
// The write itself runs with id's credentials, so the kernel clears setuid/setgid bits
// and applies quotas and the ext4 root reserve to the caller, not to root.
// DataSync uses RWF_DSYNC, FileSync RWF_SYNC (one pwritev2 call, no separate fsync).
// Offset + length beyond 2^63 - 1 -> EFBIG.
// The process must ignore SIGXFSZ (RLIMIT_FSIZE), or a large write could kill it.
// `attrs`: the file's attributes, read just before by the caller (NFSv3's pre-op wcc
// data), for the permission check; nullptr: read them here.
Result<WriteResult> write(const OpenFile& file, uint64_t offset, std::span<const uint8_t> data,
                          StableHow stable, const Identity& id, Unlinked unlinked = Unlinked::Stale,
                          const struct statx* attrs = nullptr);

// RFC 1813 §3.3.21 COMMIT: fsync(2) of the whole file (offset/count are accepted for the
// protocol; Linux has no durable range sync). Pair the reply with write_verifier().
Result<void> commit(const OpenFile& file, uint64_t offset, uint32_t count);

// Attributes through the cached descriptor (post-op attributes for READ/WRITE).
Result<struct statx> getattr(const OpenFile& file);

// Sets the file's modification time (and so its ctime) to now, with the daemon's own
// credentials: an NFSv4.1 write delegation's holder said it has changes the file does not
// show yet (RFC 8881 §10.4.3: "the server SHOULD update the file's metadata record").
Result<void> touch(const OpenFile& file);

}  // namespace nfsrdmad::vfs
