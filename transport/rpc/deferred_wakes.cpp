#include "transport/rpc/deferred_wakes.h"

#include <utility>

namespace nfsrdmad::rpc {

void DeferredWakes::Registration::reset() {
    if (id_ == 0) return;
    if (auto owner = owner_.lock()) owner->remove(id_);
    id_ = 0;
    owner_.reset();
}

DeferredWakes::Registration DeferredWakes::add(Waker wake) {
    std::lock_guard l(mu_);
    if (closed_) return {};
    const uint64_t id = ++next_;
    wakers_.emplace(id, std::move(wake));
    count_.store(wakers_.size());
    return Registration(weak_from_this(), id);
}

void DeferredWakes::remove(uint64_t id) {
    std::lock_guard l(mu_);
    wakers_.erase(id);
    count_.store(wakers_.size(), std::memory_order_relaxed);
}

void DeferredWakes::wake_all() {
    // Sequentially consistent with add()'s count and a transport's generation(): either
    // this sees the call registered, or the transport sees the generation moved.
    if (closed_.load()) return;
    generation_.fetch_add(1);
    if (count_.load() == 0) return;
    std::unordered_map<uint64_t, Waker> taken;
    std::lock_guard running(running_);
    {
        std::lock_guard l(mu_);
        if (closed_) return;
        taken.swap(wakers_);
        count_.store(0, std::memory_order_relaxed);
    }
    // Outside mu_: a waker posts to its reactor, which may be running a Registration's end
    // on this table right now.
    for (auto& [id, wake] : taken) wake();
}

void DeferredWakes::close() {
    std::unordered_map<uint64_t, Waker> dropped;  // destroyed after the locks
    std::lock_guard running(running_);
    std::lock_guard l(mu_);
    closed_.store(true);
    dropped.swap(wakers_);
    count_.store(0, std::memory_order_relaxed);
}

}  // namespace nfsrdmad::rpc
