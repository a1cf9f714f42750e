// A reactor: one thread that owns a set of file descriptors and runs their handlers
// when they are ready. Other threads hand it work with post(). Transports put their
// sockets (and, for RDMA, completion channels) on reactors; nothing on a reactor
// thread may block on disk.
#pragma once

#include <sys/epoll.h>

#include <atomic>
#include <functional>
#include <memory>
#include <mutex>
#include <thread>
#include <unordered_map>
#include <vector>

#include "transport/engine/unique_fd.h"

namespace nfsrdmad::engine {

class Reactor {
public:
    using Handler = std::function<void(uint32_t epoll_events)>;

    Reactor();
    ~Reactor();
    Reactor(const Reactor&) = delete;
    Reactor& operator=(const Reactor&) = delete;

    void start(std::string name);
    void stop();  // returns after the thread has exited

    // Only from the reactor's own thread (or before start()).
    bool add(int fd, uint32_t events, Handler h);
    bool modify(int fd, uint32_t events);
    void remove(int fd);

    // From any thread: runs `fn` on the reactor thread soon.
    void post(std::function<void()> fn);
    bool on_reactor_thread() const { return std::this_thread::get_id() == thread_.get_id(); }

private:
    void run();
    void drain_posted();

    UniqueFd epfd_;
    UniqueFd wakefd_;
    std::thread thread_;
    std::atomic<bool> stopping_{false};
    std::unordered_map<int, std::shared_ptr<Handler>> handlers_;
    std::mutex post_mu_;
    std::vector<std::function<void()>> posted_;
};

// A fixed set of reactors; connections are spread over them round-robin.
class ReactorGroup {
public:
    explicit ReactorGroup(unsigned count);
    void start();
    void stop();
    Reactor& next();
    size_t size() const { return reactors_.size(); }

private:
    std::vector<std::unique_ptr<Reactor>> reactors_;
    std::atomic<size_t> next_{0};
};

}  // namespace nfsrdmad::engine
