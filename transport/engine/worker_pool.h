// Threads that may block: file system calls run here, never on a reactor.
#pragma once

#include <atomic>
#include <condition_variable>
#include <deque>
#include <functional>
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
    void loop();

    mutable std::mutex mu_;
    std::condition_variable cv_;
    std::deque<std::function<void()>> jobs_;
    size_t running_ = 0;
    bool stopping_ = false;
    std::vector<std::thread> threads_;
    std::atomic<int> io_flusher_error_{0};
};

}  // namespace nfsrdmad::engine
