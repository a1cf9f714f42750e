#include "transport/engine/worker_pool.h"

#include <pthread.h>
#include <sys/prctl.h>

#include <cerrno>
#include <latch>

#include <string>

namespace nfsrdmad::engine {

WorkerPool::WorkerPool(unsigned threads, bool io_flusher) {
    std::latch started(threads);
    for (unsigned i = 0; i < threads; ++i)
        threads_.emplace_back([this, i, io_flusher, &started] {
            pthread_setname_np(pthread_self(), ("worker-" + std::to_string(i)).c_str());
            if (io_flusher && prctl(PR_SET_IO_FLUSHER, 1, 0, 0, 0) != 0) io_flusher_error_ = errno;
            started.count_down();
            loop();
        });
    started.wait();  // so io_flusher_error() is known when the constructor returns
}

WorkerPool::~WorkerPool() { shutdown(); }

void WorkerPool::submit(std::function<void()> job) {
    {
        std::lock_guard lock(mu_);
        jobs_.push_back(std::move(job));
    }
    cv_.notify_one();
}

void WorkerPool::shutdown() {
    {
        std::lock_guard lock(mu_);
        if (stopping_) return;
        stopping_ = true;
    }
    cv_.notify_all();
    for (auto& t : threads_) t.join();
}

size_t WorkerPool::in_flight() const {
    std::lock_guard lock(mu_);
    return jobs_.size() + running_;
}

void WorkerPool::loop() {
    std::unique_lock lock(mu_);
    for (;;) {
        cv_.wait(lock, [this] { return stopping_ || !jobs_.empty(); });
        if (jobs_.empty()) return;  // stopping and drained
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
