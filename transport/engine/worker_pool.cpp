#include "transport/engine/worker_pool.h"

#include <linux/futex.h>
#include <pthread.h>
#include <sys/prctl.h>
#include <sys/syscall.h>
#include <unistd.h>

#include <cerrno>
#include <latch>

#include <string>

namespace nfsrdmad::engine {
namespace {

static_assert(std::atomic<uint32_t>::is_always_lock_free &&
              sizeof(std::atomic<uint32_t>) == sizeof(uint32_t));

// Sleeps while *word is 0 (returns at once if it is not; spurious returns are looked at
// by the caller's loop).
void futex_wait_while_zero(std::atomic<uint32_t>& word) {
    ::syscall(SYS_futex, reinterpret_cast<uint32_t*>(&word), FUTEX_WAIT_PRIVATE, 0, nullptr,
              nullptr, 0);
}

void futex_wake_one(std::atomic<uint32_t>& word) {
    ::syscall(SYS_futex, reinterpret_cast<uint32_t*>(&word), FUTEX_WAKE_PRIVATE, 1, nullptr,
              nullptr, 0);
}

}  // namespace

WorkerPool::WorkerPool(unsigned threads, bool io_flusher) {
    std::latch started(threads);
    for (unsigned i = 0; i < threads; ++i) slots_.push_back(std::make_unique<Parked>());
    for (unsigned i = 0; i < threads; ++i)
        threads_.emplace_back([this, i, io_flusher, &started] {
            pthread_setname_np(pthread_self(), ("worker-" + std::to_string(i)).c_str());
            if (io_flusher && prctl(PR_SET_IO_FLUSHER, 1, 0, 0, 0) != 0) io_flusher_error_ = errno;
            started.count_down();
            loop(*slots_[i]);
        });
    started.wait();  // so io_flusher_error() is known when the constructor returns
}

WorkerPool::~WorkerPool() { shutdown(); }

void WorkerPool::submit(std::function<void()> job) {
    Parked* wake = nullptr;
    {
        std::lock_guard lock(mu_);
        jobs_.push_back(std::move(job));
        if (!parked_.empty()) {
            wake = parked_.back();
            parked_.pop_back();
            wake->woken.store(1, std::memory_order_release);
        }
    }
    // After the unlock: the woken worker's first step is to take the mutex.
    if (wake) futex_wake_one(wake->woken);
}

void WorkerPool::shutdown() {
    std::vector<Parked*> wake;
    {
        std::lock_guard lock(mu_);
        if (stopping_) return;
        stopping_ = true;
        wake.swap(parked_);
        for (Parked* p : wake) p->woken.store(1, std::memory_order_release);
    }
    for (Parked* p : wake) futex_wake_one(p->woken);
    for (auto& t : threads_) t.join();
}

size_t WorkerPool::in_flight() const {
    std::lock_guard lock(mu_);
    return jobs_.size() + running_;
}

void WorkerPool::loop(Parked& me) {
    std::unique_lock lock(mu_);
    for (;;) {
        if (jobs_.empty()) {
            if (stopping_) return;  // stopping and drained
            // Park until submit() or shutdown() takes us off the list and sets `woken`
            // (both under the mutex, so neither can miss us).
            me.woken.store(0, std::memory_order_relaxed);
            parked_.push_back(&me);
            lock.unlock();
            while (me.woken.load(std::memory_order_acquire) == 0) futex_wait_while_zero(me.woken);
            lock.lock();
            continue;  // another worker may have taken the job first: look again
        }
        auto job = std::move(jobs_.front());
        jobs_.pop_front();
        ++running_;
        lock.unlock();
        job();
        lock.lock();
        --running_;
    }
}

}  // namespace nfsrdmad::engine
