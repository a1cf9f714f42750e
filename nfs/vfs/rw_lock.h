// rw_lock.h — a reader-writer lock whose readers write no line another core's readers write.
//
// For a table that every call reads and few calls change (the descriptor cache). A mutex
// put threads hitting it at once to sleep (on two cores, two threads of NFSv3 GETATTR made
// fewer calls a second than one: bench/host/README.md, "calls on two threads"), and even a
// shared lock's reader count is one word every reader writes. Here a reader takes only the
// mutex of its thread's stripe (transport/rpc/stripes.h: a cache line of its own while
// there are no more threads than stripes), and a writer takes every stripe's, in order:
// a hit costs what an uncontended mutex costs, and a change (a miss inserting its entry,
// an eviction) 16 of them, waiting at each stripe only for that stripe's reader (one
// thread's, while threads are no more than stripes), so no stream of readers holds it off.
// Meets Lockable and SharedLockable: std::lock_guard and std::shared_lock. A thread must
// not take it for reading twice (its stripe's mutex is not recursive).
#pragma once

#include <array>
#include <mutex>

#include "transport/rpc/stripes.h"

namespace nfsrdmad::vfs {

class StripedRwLock {
  public:
    void lock() {
        for (auto& s : stripes_) s.mu.lock();
    }
    void unlock() {
        for (auto& s : stripes_) s.mu.unlock();
    }
    // A thread's stripe never changes, so unlock_shared finds the mutex lock_shared took.
    void lock_shared() { stripes_[rpc::thread_stripe()].mu.lock(); }
    void unlock_shared() { stripes_[rpc::thread_stripe()].mu.unlock(); }

  private:
    struct alignas(64) Stripe {
        std::mutex mu;
    };
    std::array<Stripe, rpc::kStripes> stripes_;
};

}  // namespace nfsrdmad::vfs
