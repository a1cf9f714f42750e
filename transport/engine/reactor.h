// A reactor: a loop that owns a set of file descriptors and runs their handlers when
// they are ready, on one thread at a time. Other threads hand it work with post().
// Transports put their sockets (and, for RDMA, completion channels) on reactors; nothing
// on a reactor's loop may block on disk.
//
// Which thread runs the loop: its own (start(name)), or, in the daemon, a thread of the
// WorkerPool (ReactorGroup::start(pool)). Then the loop moves between threads, the way
// leader/followers servers do (issue 13): when a handler submits a job to the pool and a
// worker is parked, the loop's thread wakes that worker to take the loop over and runs the
// job itself, off the loop. The call then wakes one thread on its way in (the loop's,
// from epoll_wait), as the kernel nfsd's does, not two (the loop's, then a worker's); the
// worker's wake-up overlaps the call. See WorkerPool::submit.
//
// Pollers (RDMA completion queues) are what the modes are about:
//
//   event     sleep in epoll_wait; a poller's notification fd wakes the reactor.
//   poll      never sleep: run every poller (and epoll_wait with timeout 0) in a loop.
//   adaptive  poll while work arrives; after a spin without work, arm every poller's
//             notification and sleep. An idle daemon uses no CPU. The spin sizes itself
//             between 0 and `spin` from how long the sleeps after it last (spin_window.h).
//
//            work found                       spin elapsed, arm() found nothing
//   ┌────────────────────┐                 ┌──────────────────────────────┐
//   ▼                    │                 │                              ▼
//  poll pollers + epoll_wait(0) ───────────┘              epoll_wait(-1) (sleep)
//   ▲                                                                     │
//   └──────────────────── an fd or a notification fires ─────────────────┘
//
// The spin is measured on a SpinClock, read a few times a round while a loop may spin. By
// default steady_clock; the daemon gives the latency clock (transport/rpc/latency_clock.h),
// which reads the time-stamp counter where the kernel's clock source has no vDSO reader
// (hpet, acpi_pm: virtual machines) and every CLOCK_MONOTONIC would be a system call.
#pragma once

#include <sys/epoll.h>

#include <atomic>
#include <chrono>
#include <condition_variable>
#include <functional>
#include <map>
#include <memory>
#include <mutex>
#include <thread>
#include <unordered_map>
#include <vector>

#include "transport/engine/spin_window.h"
#include "transport/engine/unique_fd.h"

namespace nfsrdmad::engine {

class WorkerPool;

enum class Mode { Event, Poll, Adaptive };
const char* mode_name(Mode m);

// Nanoseconds from any fixed origin; nullptr: steady_clock. A reading behind an earlier one
// (a time-stamp counter of another CPU) only ends a spin early.
using SpinClock = uint64_t (*)();

// Something the reactor polls in poll and adaptive modes.
struct Poller {
    std::function<bool()> poll;  // reap what is ready; true if there was anything
    std::function<bool()> arm;   // before sleeping: ask for a wakeup; true if work slipped in
};

class Reactor {
  public:
    using Handler = std::function<void(uint32_t epoll_events)>;

    explicit Reactor(Mode mode = Mode::Event,
                     std::chrono::microseconds spin = std::chrono::microseconds(50),
                     SpinClock spin_clock = nullptr);
    ~Reactor();
    Reactor(const Reactor&) = delete;
    Reactor& operator=(const Reactor&) = delete;

    // The loop on a thread of its own, named `name`.
    void start(std::string name);
    // The loop on a thread of `pool` (WorkerPool::host); it moves between the pool's
    // threads from then on. Stop it before the pool shuts down.
    void start(WorkerPool& pool);
    void stop();  // returns after the loop has stopped for good (posted work drained)

    // Only from the thread running the loop (or before start()).
    bool add(int fd, uint32_t events, Handler h);
    bool modify(int fd, uint32_t events);
    void remove(int fd);
    // Pollers run only in poll and adaptive modes (in event mode, use the fd alone).
    uint64_t add_poller(Poller p);
    void remove_poller(uint64_t id);  // safe from inside a poller
    Mode mode() const { return mode_; }

    // Timers, only from the reactor's own thread: `fn` runs on it once, `delay` from now
    // (epoll_wait sleeps until the earliest one; no descriptor is used, so timers work
    // even when the process is out of them). Kept on coarse_now(): a timer's delay may be
    // off by a tick (every user counts in tens of ms or more: backoffs, idle timeouts,
    // callback timeouts, sweeps), and a loop with timers reads the clock every round.
    using Clock = std::chrono::steady_clock;
    // Clock's time as of the last timer tick (CLOCK_MONOTONIC_COARSE: one to a few ms
    // behind, read from the vDSO page without a system call whatever the clocksource).
    // For bookkeeping that needs no more than that, e.g. idle timeouts: a VM whose
    // clocksource has no vDSO reading (hpet, acpi_pm) pays a system call per Clock::now().
    static Clock::time_point coarse_now();
    struct TimerId {
        Clock::time_point at;
        uint64_t seq = 0;  // 0: no timer
        auto operator<=>(const TimerId&) const = default;
    };
    TimerId after(std::chrono::milliseconds delay, std::function<void()> fn);
    void cancel(TimerId id);  // no effect when it already ran or was cancelled

    // From any thread: runs `fn` on the reactor thread soon. Wakes the reactor (an
    // eventfd write) only when it sleeps.
    void post(std::function<void()> fn);
    // Times post() had to wake the reactor.
    uint64_t wake_writes() const { return wake_writes_.load(std::memory_order_relaxed); }
    // Whether the calling thread runs the loop now.
    bool on_reactor_thread() const {
        return owner_.load(std::memory_order_relaxed) == std::this_thread::get_id();
    }

    // From another thread: when the loop sleeps (blocked in epoll_wait, nothing of its own
    // to do), runs `fn` here and now as the loop would, and returns true; the loop's thread,
    // should it wake meanwhile, waits until `fn` is done. Returns false without running
    // `fn` when the loop is awake (a post() then wakes nobody: it runs in the loop's next
    // round), spinning, stopping, or hosted by a pool (whose hand-overs move the loop
    // itself). This saves the wake-up a post() to a sleeping loop costs: an eventfd write
    // and, for the loop's thread, a switch in (issue 13: an RDMA reply posted by the worker
    // that made it). `fn` must not block; the caller's thread must be fit to be the loop's
    // (for RDMA: credentials unchanged since the device was opened, see ReactorGroup).
    template <class F>
    bool run_if_asleep(F&& fn) {
        if (!lend_begin()) return false;
        struct End {  // even if `fn` throws: a loop never lent back would never wake again
            Reactor* r;
            ~End() { r->lend_end(); }
        } end{this};
        fn();
        return true;
    }
    // run_if_asleep's that ran (stats, tests).
    uint64_t lent() const { return lent_.load(std::memory_order_relaxed); }
    // An adaptive loop's spin now, in ns (SpinWindow: between 0 and `spin`; tests).
    uint64_t spin_window_ns() const { return spin_.ns(); }

    // What the loop did, for the stats dump and the metrics (any thread; relaxed).
    struct Stats {
        uint64_t sleeps = 0;          // blocking epoll_waits entered: the loop had nothing to do
        uint64_t wakeups = 0;         // wake_writes(): post() woke it from such a sleep
        uint64_t lent = 0;            // lent(): run_if_asleep ran on its sleep
        bool spins = false;           // adaptive, with pollers: it spins before it sleeps...
        uint64_t spin_window_ns = 0;  // ... this long now (0 unless `spins`)
    };
    Stats stats() const;

  private:
    friend class WorkerPool;
    // Runs the loop on the calling thread. After each round `hand_over` (when set) may
    // give the loop to another thread: it returns true once it has, and then so does this,
    // at once and without touching the reactor again (the other thread may be running it
    // already). Returns false once stop() has ended the loop for good.
    bool run_here(const std::function<bool()>& hand_over);
    bool handed_over(const std::function<bool()>& hand_over);
    bool drain_posted();  // true: it ran something
    bool run_pollers();
    bool arm_pollers();
    bool lend_begin();  // run_if_asleep: the loop is ours (loop_mu_ held, owner_ is us)
    void lend_end();
    int run_timers();  // runs the due ones; returns epoll_wait's timeout until the next
    uint64_t spin_now() const;

    const Mode mode_;
    SpinWindow spin_;  // the loop's own
    const SpinClock spin_clock_;
    UniqueFd epfd_;
    UniqueFd wakefd_;
    std::thread thread_;   // start(name) only
    bool hosted_ = false;  // start(pool)
    // start(name): held by the loop's thread except while it sleeps in epoll_wait, when
    // run_if_asleep() may take it. Never by hosted loops.
    std::mutex loop_mu_;
    std::atomic<bool> lendable_{false};
    std::atomic<uint64_t> lent_{0};
    std::thread::id lender_{};  // the loop's own thread, while lent
    // Timers and pollers added: a change made while lent wakes the loop, whose sleep was
    // planned without it (the earliest timer, pollers armed before sleeping).
    uint64_t additions_ = 0;
    uint64_t additions_at_lend_ = 0;
    std::atomic<std::thread::id> owner_{};
    std::atomic<bool> looping_{false};  // a thread runs the loop (run_here)
    std::mutex stopped_mu_;
    std::condition_variable stopped_cv_;
    bool stopped_ = false;           // the loop ended for good (hosted: what stop() waits for)
    uint64_t last_work_ = 0;         // spin_now(); kept across hand-overs: the spin goes on
    std::atomic<bool> stopping_{false};
    std::unordered_map<int, std::shared_ptr<Handler>> handlers_;
    std::mutex post_mu_;
    std::vector<std::function<void()>> posted_;
    std::atomic<bool> pending_{false};   // posted_ may hold work (see post())
    std::atomic<bool> sleeping_{false};  // in (or about to enter) a blocking epoll_wait
    std::atomic<uint64_t> wake_writes_{0};
    std::atomic<uint64_t> sleeps_{0};
    std::atomic<uint32_t> live_pollers_{0};  // added and not removed (stats: spins)
    std::vector<std::pair<uint64_t, std::shared_ptr<Poller>>> pollers_;  // null: removed
    uint64_t next_poller_ = 1;
    std::map<TimerId, std::function<void()>> timers_;
    uint64_t next_timer_ = 1;
    bool pollers_dirty_ = false;
};

// A fixed set of reactors; connections are spread over them round-robin.
//
// `own_thread` more reactors always run on a thread of their own, also when the others are
// hosted by a pool: RDMA's. The kernel refuses rdma_cm and uverbs commands (write(2) on
// their device files, e.g. rxe's send doorbell) from a thread whose credentials changed
// since the file was opened (ib_safe_file_access), and pool threads switch to their
// callers' identities. A pool thread that never did may still act as such a reactor while
// it sleeps (Reactor::run_if_asleep, rpc/thread_credentials.h).
class ReactorGroup {
  public:
    explicit ReactorGroup(unsigned count, Mode mode = Mode::Event,
                          std::chrono::microseconds spin = std::chrono::microseconds(50),
                          unsigned own_thread = 0, SpinClock spin_clock = nullptr);
    void start();                  // a thread of its own per reactor
    void start(WorkerPool& pool);  // the first `count` loops on the pool's threads (Reactor)
    void stop();
    Reactor& next();  // one of the first `count`
    // One whose thread never runs a job (never changes identity): the `own_thread` ones,
    // or any when the group was started without a pool. Throws std::logic_error when
    // there is none.
    Reactor& next_own_thread();
    Reactor& at(size_t i) { return *reactors_.at(i); }
    size_t size() const { return reactors_.size(); }
    Mode mode() const { return mode_; }
    std::chrono::microseconds spin() const { return spin_; }
    // Each reactor's, in order (any thread).
    std::vector<Reactor::Stats> stats() const;

  private:
    Mode mode_;
    std::chrono::microseconds spin_;
    std::vector<std::unique_ptr<Reactor>> reactors_;
    unsigned shared_;  // reactors_[0, shared_): next(); the rest: next_own_thread()
    bool hosted_ = false;
    std::atomic<size_t> next_{0}, next_own_{0};
};

}  // namespace nfsrdmad::engine
