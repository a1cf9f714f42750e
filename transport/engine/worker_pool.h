// Threads that may block: file system calls run here, never on a reactor.
#pragma once

#include <condition_variable>
#include <deque>
#include <functional>
#include <mutex>
#include <thread>
#include <vector>

namespace nfsrdmad::engine {

class WorkerPool {
public:
    explicit WorkerPool(unsigned threads);
    ~WorkerPool();
    void submit(std::function<void()> job);
    // Waits until every submitted job has finished, then stops the threads.
    void shutdown();
    size_t in_flight() const;

private:
    void loop();

    mutable std::mutex mu_;
    std::condition_variable cv_;
    std::deque<std::function<void()>> jobs_;
    size_t running_ = 0;
    bool stopping_ = false;
    std::vector<std::thread> threads_;
};

}  // namespace nfsrdmad::engine
