// Calls put off (Outcome::Later, dispatcher.h) woken by the event they wait for.
//
// A call held up by an NFSv4.1 delegation is put off and run again by its transport's
// timer (4, 8, ... then every 128 ms). What holds it up ends with an event the server
// sees: the holder's DELEGRETURN, its answer to CB_GETATTR, a revocation, the file or
// the client gone. When that happens the program says so (wake_all), and every call put
// off runs again now instead of at its next timer: no call can tell which event it waits
// for (a recall may free several files, a lease break has no handle), and at most
// Dispatcher::kMaxDeferred calls wait at once, so waking all is bounded and cheap.
//
// Threads: add() on the transport's reactor, a Registration's end where its call goes (the
// reactor, or a TCP connection's last owner), wake_all() on any thread (a worker, a
// reactor). A waker only posts work to the reactor that owns its call and never runs it
// there and then (it runs under no lock of this table, but on the caller's thread, which
// may have switched credentials: an RDMA connection's last reference must not be dropped
// there, transport/rdma/verbs/connection.h).
//
// A wake-up that comes while a call runs, before its transport registered it, is not lost:
// the transport compares generation() with what it was when the run began.
//
// At shutdown the daemon closes the table before it stops the reactors (close()): a waker
// holds its reactor by a plain pointer, and a worker still finishing a DELEGRETURN then
// must not post to a reactor that is going away. Once close() has returned no waker runs,
// none is taken in, and wake_all() does nothing.
//
// Each call is woken at most once per step of its timer: wake_all() takes every waker out,
// and a woken run put off again waits for its timer (Deferral::wakeable), so a storm of
// returns costs each call at most twice its runs. A woken run does not use up one of the
// call's runs (Deferral::woken), and the call still gives up when its time is up
// (Deferral::until).
#pragma once

#include <atomic>
#include <cstdint>
#include <functional>
#include <memory>
#include <mutex>
#include <unordered_map>
#include <utility>

namespace nfsrdmad::rpc {

class DeferredWakes : public std::enable_shared_from_this<DeferredWakes> {
  public:
    using Waker = std::function<void()>;

    // Takes the call's waker out of the table when it ends (the call ran, was woken or
    // was dropped with its connection). Move-only; empty when default-made.
    class Registration {
      public:
        Registration() = default;
        Registration(std::weak_ptr<DeferredWakes> owner, uint64_t id)
            : owner_(std::move(owner)), id_(id) {}
        Registration(Registration&& o) noexcept
            : owner_(std::move(o.owner_)), id_(std::exchange(o.id_, 0)) {}
        Registration& operator=(Registration&& o) noexcept {
            if (this != &o) {
                reset();
                owner_ = std::move(o.owner_);
                id_ = std::exchange(o.id_, 0);
            }
            return *this;
        }
        Registration(const Registration&) = delete;
        Registration& operator=(const Registration&) = delete;
        ~Registration() { reset(); }
        void reset();

      private:
        std::weak_ptr<DeferredWakes> owner_;
        uint64_t id_ = 0;
    };

    // The transport puts a call off: `wake` runs at most once, on wake_all()'s thread.
    [[nodiscard]] Registration add(Waker wake);
    // What held calls up is gone: every waker registered runs now (and is taken out).
    // Cheap when no call waits.
    void wake_all();
    // No waker runs any more, once this returns (it waits for a wake_all() running them):
    // those registered are dropped, add() takes none in (an empty Registration: the call
    // runs again on its timer), wake_all() does nothing.
    void close();
    // wake_all()s so far: a transport that finds it moved while its call ran (before the
    // call could be registered) runs the call again at once (Deferral::wakes_seen).
    uint64_t generation() const { return generation_.load(); }
    size_t size() const { return count_.load(std::memory_order_relaxed); }
    // Calls a transport ran again early because of a wake-up (stats).
    void note_woken() { woken_.fetch_add(1, std::memory_order_relaxed); }
    uint64_t woken() const { return woken_.load(std::memory_order_relaxed); }

  private:
    void remove(uint64_t id);

    mutable std::mutex mu_;
    // Held while wakers run, outside mu_ (a waker may race a Registration's end on its
    // reactor, which takes mu_): close() takes it to wait for them.
    std::mutex running_;
    std::atomic<bool> closed_{false};  // set under mu_ and running_
    std::unordered_map<uint64_t, Waker> wakers_;
    uint64_t next_ = 0;
    std::atomic<size_t> count_{0};
    std::atomic<uint64_t> woken_{0};
    std::atomic<uint64_t> generation_{0};
};

}  // namespace nfsrdmad::rpc
