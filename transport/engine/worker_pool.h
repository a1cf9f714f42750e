// Threads that may block: file system calls run here, never on a reactor.
//
// A job is handed to a parked worker by waking that one worker on its own futex(2): one
// FUTEX_WAKE from the submitter and the worker's one FUTEX_WAIT per hand-off. (A
// condition variable costs a third call per job: glibc's woken waiter wakes again on its
// way out; std::atomic::wait first yields the CPU several times, a system call each.)
// The queue and the list of parked workers share one mutex that nobody holds across a
// system call.
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

class WorkerPool {
public:
    // io_flusher: mark the threads as I/O flushers (prctl PR_SET_IO_FLUSHER, Linux 5.6):
    // memory reclaim then does not make them wait for writeback of dirty pages they
    // would have to write themselves -- the deadlock of a file server whose clients
    // (an NFS mount on the same host) hold those dirty pages. The kernel's nfsd gets the
    // same treatment (PF_LOCAL_THROTTLE).
    explicit WorkerPool(unsigned threads, bool io_flusher = false);
    ~WorkerPool();
    void submit(std::function<void()> job);
    // Waits until every submitted job has finished, then stops the threads.
    void shutdown();
    size_t in_flight() const;
    // 0, or why PR_SET_IO_FLUSHER failed (it needs CAP_SYS_RESOURCE).
    int io_flusher_error() const { return io_flusher_error_; }

private:
    struct Parked {
        std::atomic<uint32_t> woken{0};  // the futex word: 1 once handed a job or stopped
    };
    void loop(Parked& me);

    mutable std::mutex mu_;
    std::deque<std::function<void()>> jobs_;
    std::vector<Parked*> parked_;  // idle workers, the last parked woken first
    size_t running_ = 0;
    bool stopping_ = false;
    std::vector<std::unique_ptr<Parked>> slots_;
    std::vector<std::thread> threads_;
    std::atomic<int> io_flusher_error_{0};
};

}  // namespace nfsrdmad::engine
