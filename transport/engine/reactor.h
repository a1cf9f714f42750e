// A reactor: one thread that owns a set of file descriptors and runs their handlers
// when they are ready. Other threads hand it work with post(). Transports put their
// sockets (and, for RDMA, completion channels) on reactors; nothing on a reactor
// thread may block on disk.
//
// Pollers (RDMA completion queues) are what the modes are about:
//
//   event     sleep in epoll_wait; a poller's notification fd wakes the reactor.
//   poll      never sleep: run every poller (and epoll_wait with timeout 0) in a loop.
//   adaptive  poll while work arrives; after `spin` without work, arm every poller's
//             notification and sleep. An idle daemon uses no CPU.
//
//            work found                       spin elapsed, arm() found nothing
//   ┌────────────────────┐                 ┌──────────────────────────────┐
//   ▼                    │                 │                              ▼
//  poll pollers + epoll_wait(0) ───────────┘              epoll_wait(-1) (sleep)
//   ▲                                                                     │
//   └──────────────────── an fd or a notification fires ─────────────────┘
#pragma once

#include <sys/epoll.h>

#include <atomic>
#include <chrono>
#include <functional>
#include <map>
#include <memory>
#include <mutex>
#include <thread>
#include <unordered_map>
#include <vector>

#include "transport/engine/unique_fd.h"

namespace nfsrdmad::engine {

enum class Mode { Event, Poll, Adaptive };
const char* mode_name(Mode m);

// Something the reactor polls in poll and adaptive modes.
struct Poller {
    std::function<bool()> poll;  // reap what is ready; true if there was anything
    std::function<bool()> arm;   // before sleeping: ask for a wakeup; true if work slipped in
};

class Reactor {
  public:
    using Handler = std::function<void(uint32_t epoll_events)>;

    explicit Reactor(Mode mode = Mode::Event,
                     std::chrono::microseconds spin = std::chrono::microseconds(50));
    ~Reactor();
    Reactor(const Reactor&) = delete;
    Reactor& operator=(const Reactor&) = delete;

    void start(std::string name);
    void stop();  // returns after the thread has exited

    // Only from the reactor's own thread (or before start()).
    bool add(int fd, uint32_t events, Handler h);
    bool modify(int fd, uint32_t events);
    void remove(int fd);
    // Pollers run only in poll and adaptive modes (in event mode, use the fd alone).
    uint64_t add_poller(Poller p);
    void remove_poller(uint64_t id);  // safe from inside a poller
    Mode mode() const { return mode_; }

    // Timers, only from the reactor's own thread: `fn` runs on it once, `delay` from now
    // (epoll_wait sleeps until the earliest one; no descriptor is used, so timers work
    // even when the process is out of them).
    using Clock = std::chrono::steady_clock;
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
    bool on_reactor_thread() const { return std::this_thread::get_id() == thread_.get_id(); }

  private:
    void run();
    bool drain_posted();  // true: it ran something
    bool run_pollers();
    bool arm_pollers();
    int run_timers();  // runs the due ones; returns epoll_wait's timeout until the next

    const Mode mode_;
    const std::chrono::microseconds spin_;
    UniqueFd epfd_;
    UniqueFd wakefd_;
    std::thread thread_;
    std::atomic<bool> stopping_{false};
    std::unordered_map<int, std::shared_ptr<Handler>> handlers_;
    std::mutex post_mu_;
    std::vector<std::function<void()>> posted_;
    std::atomic<bool> pending_{false};   // posted_ may hold work (see post())
    std::atomic<bool> sleeping_{false};  // in (or about to enter) a blocking epoll_wait
    std::atomic<uint64_t> wake_writes_{0};
    std::vector<std::pair<uint64_t, std::shared_ptr<Poller>>> pollers_;  // null: removed
    uint64_t next_poller_ = 1;
    std::map<TimerId, std::function<void()>> timers_;
    uint64_t next_timer_ = 1;
    bool pollers_dirty_ = false;
};

// A fixed set of reactors; connections are spread over them round-robin.
class ReactorGroup {
  public:
    explicit ReactorGroup(unsigned count, Mode mode = Mode::Event,
                          std::chrono::microseconds spin = std::chrono::microseconds(50));
    void start();
    void stop();
    Reactor& next();
    Reactor& at(size_t i) { return *reactors_.at(i); }
    size_t size() const { return reactors_.size(); }
    Mode mode() const { return mode_; }
    std::chrono::microseconds spin() const { return spin_; }

  private:
    Mode mode_;
    std::chrono::microseconds spin_;
    std::vector<std::unique_ptr<Reactor>> reactors_;
    std::atomic<size_t> next_{0};
};

}  // namespace nfsrdmad::engine
