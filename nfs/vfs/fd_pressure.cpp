#include "nfs/vfs/fd_pressure.h"

#include <algorithm>
#include <atomic>
#include <mutex>
#include <vector>

namespace nfsrdmad::vfs {
namespace {

// Per EMFILE: close a few, so that the threads failing at the same moment find one each
// and the cache is not emptied by a single burst.
constexpr size_t kReclaimBatch = 8;
constexpr int kMaxRounds = 8;
// Descriptors a running request may hold at once: directory and child O_PATH fds, the
// fsync reopen, a readdir or cache-miss reopen, a lookup walk's parent.
constexpr uint64_t kFdsPerWorker = 6;

std::mutex g_mu;
std::vector<FdReclaimer*>& reclaimers() {
    static std::vector<FdReclaimer*> v;
    return v;
}

std::atomic<uint64_t> g_retries{0}, g_reclaimed{0}, g_exhausted{0};

}  // namespace

void add_fd_reclaimer(FdReclaimer* r) {
    std::lock_guard lock(g_mu);
    reclaimers().push_back(r);
}

void remove_fd_reclaimer(FdReclaimer* r) {
    std::lock_guard lock(g_mu);
    auto& v = reclaimers();
    v.erase(std::remove(v.begin(), v.end(), r), v.end());
}

size_t reclaim_fds(size_t want) {
    size_t freed = 0;
    std::lock_guard lock(g_mu);
    for (FdReclaimer* r : reclaimers()) {
        if (freed >= want) break;
        freed += r->reclaim_fds(want - freed);
    }
    g_reclaimed.fetch_add(freed, std::memory_order_relaxed);
    return freed;
}

int open_reclaiming(FunctionRef<int()> open) {
    for (int round = 0;; ++round) {
        const int fd = open();
        if (fd >= 0) return fd;
        const int err = errno;
        if (!is_fd_exhaustion(err)) return fd;
        if (round == kMaxRounds || reclaim_fds(kReclaimBatch) == 0) {
            g_exhausted.fetch_add(1, std::memory_order_relaxed);
            errno = err;
            return fd;
        }
        g_retries.fetch_add(1, std::memory_order_relaxed);
    }
}

FdPressureStats fd_pressure_stats() {
    return {g_retries.load(std::memory_order_relaxed), g_reclaimed.load(std::memory_order_relaxed),
            g_exhausted.load(std::memory_order_relaxed)};
}

uint64_t FdReserve::total() const {
    return connections + 2 * pipes + kFdsPerWorker * workers + 2 * exports + other +
           lock_descriptions;
}

size_t fd_cache_capacity(uint64_t nofile, const FdReserve& reserve) {
    const uint64_t need = reserve.total();
    const uint64_t left = nofile > need ? nofile - need : 0;
    uint64_t cap = std::max(left, nofile / 4);
    cap = std::min<uint64_t>(cap, kMaxFdCache);
    return static_cast<size_t>(std::max<uint64_t>(cap, kMinFdCache));
}

}  // namespace nfsrdmad::vfs
