// fd_pressure.h — running out of descriptors is a reason to wait, not an error.
//
// Every descriptor the vfs opens for a request (open_by_handle_at, openat2, the
// /proc/self/fd reopen, dup, the fsync reopen) goes through open_reclaiming(). When the
// kernel says EMFILE (this process is at RLIMIT_NOFILE) or ENFILE (the system is at
// fs.file-max), the registered reclaimers (the descriptor caches) close descriptors that
// nobody is using, least recently used first, and the open is tried again. Only when
// nothing can be freed does the error reach the caller; the NFS layer answers it with
// NFS3ERR_JUKEBOX (RFC 1813 §2.6), which makes the client retry later, never NFS3ERR_IO.
//
// fd_cache_capacity() sizes the descriptor cache from the limit, so that the cache alone
// never exhausts it: sockets, pipes, the descriptors requests hold while they run and the
// daemon's own are reserved first.
#pragma once

#include <cerrno>
#include <cstddef>
#include <cstdint>

#include "nfs/vfs/function_ref.h"

namespace nfsrdmad::vfs {

// Something that holds descriptors it can give back on demand.
class FdReclaimer {
  public:
    // Closes up to `want` descriptors nobody is using; returns how many it closed.
    virtual size_t reclaim_fds(size_t want) = 0;

  protected:
    ~FdReclaimer() = default;
};

// Reclaimers are asked in registration order. Thread-safe; a reclaimer must be removed
// before it is destroyed.
void add_fd_reclaimer(FdReclaimer* r);
void remove_fd_reclaimer(FdReclaimer* r);

// Asks every reclaimer in turn until `want` descriptors were closed; returns the count.
size_t reclaim_fds(size_t want);

inline bool is_fd_exhaustion(int err) {
    return err == EMFILE || err == ENFILE;
}

// Runs open() (a descriptor, or -1 with errno). On EMFILE/ENFILE, reclaims descriptors
// and runs it again, as long as something was freed (at most a few rounds). Returns
// open()'s last result with its errno.
int open_reclaiming(FunctionRef<int()> open);

struct FdPressureStats {
    uint64_t retries;    // opens tried again after descriptors were reclaimed
    uint64_t reclaimed;  // descriptors closed for it
    uint64_t exhausted;  // EMFILE/ENFILE that nothing could be freed for (-> JUKEBOX)
};
FdPressureStats fd_pressure_stats();

// How many descriptors the daemon needs besides the descriptor cache.
struct FdReserve {
    uint64_t connections = 0;        // TCP connections at once (tcp.max_connections)
    uint64_t pipes = 0;              // splice pipes (tcp.max_pipes); two descriptors each
    uint64_t workers = 0;            // threads running requests; each holds a few descriptors
    uint64_t exports = 0;            // two descriptors each (O_PATH root + mount fd)
    uint64_t other = 0;              // stdio, epoll/eventfd/timerfd of the reactors, listeners, ...
    uint64_t lock_descriptions = 0;  // state::OfdBudget's total: held, never reclaimable

    uint64_t total() const;
};

inline constexpr size_t kMinFdCache = 1;
inline constexpr size_t kMaxFdCache = 65536;

// The descriptor cache's capacity under a limit of `nofile` descriptors: what is left
// after the reserve, but never more than kMaxFdCache and never less than a quarter of
// the limit (when the reserve alone exceeds the limit, e.g. max_connections above it,
// the cache still works; EMFILE is then handled by reclaiming). Always below nofile.
size_t fd_cache_capacity(uint64_t nofile, const FdReserve& reserve);

}  // namespace nfsrdmad::vfs
