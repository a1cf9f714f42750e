// Threads that may block: file system calls run here, never on a reactor.
//
// A job is handed to a parked worker by waking that one worker on its own futex(2): one
// FUTEX_WAKE from the submitter and the worker's one FUTEX_WAIT per hand-off. (A
// condition variable costs a third call per job: glibc's woken waiter wakes again on its
// way out; std::atomic::wait first yields the CPU several times, a system call each.)
// The queue and the list of parked workers share one mutex that nobody holds across a
// system call.
//
// The pool also hosts reactor loops (Reactor::start(pool)): a loop runs on one of its
// threads at a time and moves between them. A job submitted from a hosted loop's own
// thread while a worker is parked is not handed to that worker: the worker is woken to
// take the loop over, and the loop's thread runs the job once its round is done (one such
// job per round, the newest: each earlier one goes to the queue as usual when the next
// comes). Nothing waits on it: the loop goes on on the other thread, and a job that
// blocks blocks no loop. When no worker is parked the job is queued and the loop stays
// where it is. A job done before the woken worker is up (a NULL call, a cheap COMPOUND:
// the wake-up of an idle core can take longer) takes the loop back; the worker, when it
// runs, finds it gone and parks again. Either way the call waited for no thread to wake
// but the one its bytes woke.
#pragma once

#include <atomic>
#include <cstdint>
#include <deque>
#include <functional>
#include <memory>
#include <mutex>
#include <thread>
#include <vector>

namespace nfsrdmad::engine {

class Reactor;

class WorkerPool {
  public:
    // io_flusher: mark the threads as I/O flushers (prctl PR_SET_IO_FLUSHER, Linux 5.6):
    // memory reclaim then does not make them wait for writeback of dirty pages they
    // would have to write themselves -- the deadlock of a file server whose clients
    // (an NFS mount on the same host) hold those dirty pages. The kernel's nfsd gets the
    // same treatment (PF_LOCAL_THROTTLE).
    //
    // loop_threads: threads beyond `threads` for the reactor loops the pool will host, so
    // that `threads` of them are free for jobs while every loop runs.
    explicit WorkerPool(unsigned threads, bool io_flusher = false, unsigned loop_threads = 0);
    ~WorkerPool();
    void submit(std::function<void()> job);
    // Waits until every submitted job has finished, then stops the threads. Stop the
    // reactors it hosts first: a loop that runs on keeps its thread.
    void shutdown();
    size_t in_flight() const;
    size_t parked() const;  // workers asleep, waiting for a job
    // Jobs run by a loop's thread after it handed the loop to a parked worker; of those,
    // the times it took the loop back (the job was done before the worker was awake).
    uint64_t hand_overs() const { return hand_overs_.load(std::memory_order_relaxed); }
    uint64_t loops_taken_back() const { return taken_back_.load(std::memory_order_relaxed); }
    // All of the above at once (one lock), for the stats dump and the metrics.
    struct Stats {
        size_t threads = 0;  // workers and the loops' threads (the constructor's sum)
        size_t queued = 0;   // jobs waiting for a thread
        size_t running = 0;  // jobs on a thread (kept by a loop's thread included)
        size_t parked = 0;
        uint64_t hand_overs = 0, loops_taken_back = 0;
    };
    Stats stats() const;
    // 0, or why PR_SET_IO_FLUSHER failed (it needs CAP_SYS_RESOURCE).
    int io_flusher_error() const { return io_flusher_error_; }

  private:
    friend class Reactor;
    struct Parked {
        std::atomic<uint32_t> woken{0};  // the futex word: 1 once handed a job or stopped
        // A loop handed to this worker (under mu_), by the hand-over `ticket`. The worker
        // runs it if it wins the claim: `claim` holds the ticket until the worker or the
        // loop's former thread, whichever is first, exchanges it for 0. A ticket, not a
        // flag: a former thread late with its exchange must not win a later hand-over to
        // the same worker (then two threads would run one loop and another would have none).
        Reactor* loop = nullptr;
        uint64_t ticket = 0;
        std::atomic<uint64_t> claim{0};
    };
    struct LoopSlot;  // the hosted loop a thread runs now, and the job it keeps
    static thread_local LoopSlot* t_loop_;  // the calling thread's (null: it runs none)
    void loop(Parked& me);
    void host(Reactor& r);  // Reactor::start(pool): some thread starts running r's loop
    void run_loop(Reactor& r, std::unique_lock<std::mutex>& lock);
    bool hand_over(Reactor& r, LoopSlot& slot);

    mutable std::mutex mu_;
    std::deque<std::function<void()>> jobs_;
    std::vector<Parked*> parked_;  // idle workers, the last parked woken first
    std::vector<Reactor*> loops_;  // hosted loops no thread has started yet
    size_t running_ = 0;
    bool stopping_ = false;
    std::vector<std::unique_ptr<Parked>> slots_;
    std::vector<std::thread> threads_;
    std::atomic<int> io_flusher_error_{0};
    std::atomic<uint64_t> hand_overs_{0}, taken_back_{0};
    uint64_t next_ticket_ = 0;  // under mu_
};

}  // namespace nfsrdmad::engine
