#include "transport/engine/worker_pool.h"

#include <linux/futex.h>
#include <pthread.h>
#include <sys/prctl.h>
#include <sys/syscall.h>
#include <unistd.h>

#include <cerrno>
#include <latch>

#include <string>
#include <utility>

#include "transport/engine/reactor.h"

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

struct WorkerPool::LoopSlot {
    WorkerPool* pool;
    Reactor* loop;                // the loop this thread runs
    std::function<void()> job;    // left by submit() for this thread to run off the loop
    Parked* handed_to = nullptr;  // the worker woken to take the loop over
    uint64_t ticket = 0;          // with this hand-over
};

thread_local WorkerPool::LoopSlot* WorkerPool::t_loop_ = nullptr;

WorkerPool::WorkerPool(unsigned threads, bool io_flusher, unsigned loop_threads) {
    threads += loop_threads;
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
        // From a hosted loop, with a worker parked: this thread runs the job once the
        // round is done and the worker has the loop (hand_over). Counted as running. The
        // loop keeps the newest job of its round: one kept before goes to a worker now
        // rather than wait for the round's end (a pipelined burst is served in order).
        if (t_loop_ && t_loop_->pool == this && !stopping_) {
            LoopSlot& slot = *t_loop_;
            if (slot.job) {
                std::swap(job, slot.job);  // still one kept: running_ stays
            } else if (!parked_.empty()) {
                slot.job = std::move(job);
                ++running_;
                return;
            }
        }
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

size_t WorkerPool::parked() const {
    std::lock_guard lock(mu_);
    return parked_.size();
}

WorkerPool::Stats WorkerPool::stats() const {
    Stats s;
    {
        std::lock_guard lock(mu_);
        s.threads = threads_.size();
        s.queued = jobs_.size();
        s.running = running_;
        s.parked = parked_.size();
    }
    s.hand_overs = hand_overs();
    s.loops_taken_back = loops_taken_back();
    return s;
}

void WorkerPool::host(Reactor& r) {
    Parked* wake = nullptr;
    {
        std::lock_guard lock(mu_);
        loops_.push_back(&r);
        if (!parked_.empty()) {
            wake = parked_.back();
            parked_.pop_back();
            wake->woken.store(1, std::memory_order_release);
        }
    }
    if (wake) futex_wake_one(wake->woken);
}

// End of a round of a hosted loop: with a job left by submit(), give the loop to a parked
// worker (true: the caller returns from the loop and runs the job). With none parked any
// more, the job joins the queue like any other and the loop stays.
bool WorkerPool::hand_over(Reactor& r, LoopSlot& slot) {
    if (!slot.job) return false;
    Parked* next = nullptr;
    uint64_t ticket = 0;
    {
        std::lock_guard lock(mu_);
        if (!parked_.empty() && !stopping_) {
            next = parked_.back();
            parked_.pop_back();
            ticket = ++next_ticket_;
            next->loop = &r;
            next->ticket = ticket;
            next->claim.store(ticket, std::memory_order_relaxed);  // read after mu_
            next->woken.store(1, std::memory_order_release);
        } else {
            --running_;
            jobs_.push_back(std::move(slot.job));
            slot.job = nullptr;
        }
    }
    if (!next) return false;
    futex_wake_one(next->woken);
    slot.handed_to = next;
    slot.ticket = ticket;
    hand_overs_.fetch_add(1, std::memory_order_relaxed);
    return true;
}

// Runs r's loop on this thread (mu_ held on entry and on return) until the loop is handed
// over, then the job that made it so; or until the reactor stops.
void WorkerPool::run_loop(Reactor& r, std::unique_lock<std::mutex>& lock) {
    lock.unlock();
    LoopSlot slot{this, &r, nullptr};
    // One pointer captured: std::function holds it inline. (Three captures were an
    // allocation per call: run_loop is entered anew by nearly every hand-over.)
    const std::function<bool()> hand = [s = &slot] { return s->pool->hand_over(*s->loop, *s); };
    for (;;) {
        t_loop_ = &slot;
        const bool handed = r.run_here(hand);
        t_loop_ = nullptr;
        if (!handed) break;
        slot.job();
        slot.job = nullptr;  // its captures go before the thread parks
        {
            std::lock_guard guard(mu_);
            --running_;
        }
        // Whoever exchanges the claim first runs the loop: the worker woken for it (it
        // then owns r), or this thread again (the worker will not touch r).
        Parked* w = std::exchange(slot.handed_to, nullptr);
        uint64_t ticket = slot.ticket;
        if (!w->claim.compare_exchange_strong(ticket, 0, std::memory_order_acq_rel)) {
            lock.lock();
            return;
        }
        taken_back_.fetch_add(1, std::memory_order_relaxed);
    }
    // Stopped. A job submitted while the loop drained its posted work is still here.
    lock.lock();
    if (slot.job) {
        --running_;
        jobs_.push_back(std::move(slot.job));
    }
}

void WorkerPool::loop(Parked& me) {
    std::unique_lock lock(mu_);
    for (;;) {
        if (Reactor* r = me.loop) {  // handed a loop (hand_over), unless taken back
            me.loop = nullptr;
            uint64_t ticket = me.ticket;
            if (me.claim.compare_exchange_strong(ticket, 0, std::memory_order_acq_rel))
                run_loop(*r, lock);
            continue;
        }
        if (!loops_.empty()) {  // a loop to start (host)
            Reactor* r = loops_.back();
            loops_.pop_back();
            run_loop(*r, lock);
            continue;
        }
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
        job = nullptr;  // its captures (a connection's last reference...) go unlocked
        lock.lock();
        --running_;
    }
}

}  // namespace nfsrdmad::engine
