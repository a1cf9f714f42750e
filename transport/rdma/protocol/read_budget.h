// The RDMA Read bytes a device has in flight, shared by its connections, and the order
// in which connections that found it spent get to go next.
//
// Without a bound, a deep queue (128 calls of 1 MiB WRITE data) puts every call's Reads
// on the wire at once: they share the link and finish late together, the oldest no
// sooner than the newest, and the client's retransmit timer fires for all of them. With
// one, a few Reads run at a time, the oldest calls finish first, and the next ones start
// as soon as bytes come back. The Linux server does the same in effect: an nfsd thread
// pulls one call's chunks at a time. Two bounds do this here: each connection's own
// (ReadWindow, below: its peer's initiator depth and 8 MiB), and the device's, this
// budget, by default what its payload buffers hold (verbs::PoolSizes::read_budget()),
// so that many connections' writes are pulled at once. (Issue 16's 200 mounts wrote
// 1.15-1.25x faster than with the device held to 8 MiB; the Linux client on Soft-RoCE
// at iodepth 128 never had two Reads of one connection in flight: bench/vm/README.md.)
//
//   connection A: take ✓ take ✓ take ✗ ─► waits (FIFO) ─┐
//   connection B: take ✗ (A waits first) ─► waits ───────┤   give(): the first waiter is
//                                                        ▼   woken, holding a turn that
//                                       woken in order, one turn each, round robin
//
// Round robin: while anyone waits, a connection issues one Read per turn and queues
// again behind the others (take() refuses a connection without a turn while others wait,
// so none cuts in line). One Read larger than the whole budget still runs, alone.
//
// Thread-safety: connections on different reactors call in; `wake` functions run on the
// thread that gives bytes back and must only post to their own reactor.
#pragma once

#include <algorithm>
#include <cstddef>
#include <cstdint>
#include <deque>
#include <functional>
#include <mutex>

namespace nfsrdmad::rdma {

class ReadBudget {
  public:
    explicit ReadBudget(size_t limit) : limit_(limit ? limit : 1) {}

    size_t limit() const { return limit_; }

    // Takes `bytes` for one Read. `turn`: the caller was woken by wait()'s callback and
    // spends that turn now, whether this succeeds or not. False: wait() (a caller that
    // had the turn waits at the front: it stays the oldest) and retry when woken.
    bool take(size_t bytes, bool turn) {
        std::function<void()> wake;
        bool ok = false;
        {
            std::lock_guard lock(mu_);
            if (turn && turns_) --turns_;
            if ((turn || (waiters_.empty() && !turns_)) &&
                (!in_flight_ || in_flight_ + bytes <= limit_)) {
                in_flight_ += bytes;
                ok = true;
                if (turn) wake = next_locked();  // room left: the next one goes too
            }
        }
        if (wake) wake();
        return ok;
    }

    // A Read completed (or was flushed): its bytes come back, and the next waiter is woken
    // while there is room.
    void give(size_t bytes) {
        std::function<void()> wake;
        {
            std::lock_guard lock(mu_);
            in_flight_ -= std::min(bytes, in_flight_);
            wake = next_locked();
        }
        if (wake) wake();
    }

    // Queue behind the others; `wake` is called once, with a turn, when it is this
    // caller's go (a woken caller that cannot use its turn must pass(): see below).
    void wait(std::function<void()> wake, bool front = false) {
        std::function<void()> now;
        {
            std::lock_guard lock(mu_);
            if (front)
                waiters_.push_front(std::move(wake));
            else
                waiters_.push_back(std::move(wake));
            // Nothing in flight would ever give bytes back and wake it: wake at once.
            if (!in_flight_) now = next_locked();
        }
        if (now) now();
    }

    // A woken caller that is gone (closed connection) hands its turn to the next waiter.
    void pass() {
        std::function<void()> wake;
        {
            std::lock_guard lock(mu_);
            if (turns_) --turns_;
            wake = next_locked();
        }
        if (wake) wake();
    }

    size_t in_flight() const {
        std::lock_guard lock(mu_);
        return in_flight_;
    }
    size_t waiting() const {
        std::lock_guard lock(mu_);
        return waiters_.size();
    }

  private:
    // The next waiter, if there is room for a Read and no turn is outstanding.
    std::function<void()> next_locked() {
        if (waiters_.empty() || turns_ || (in_flight_ && in_flight_ >= limit_)) return {};
        auto w = std::move(waiters_.front());
        waiters_.pop_front();
        ++turns_;
        return w;
    }

    const size_t limit_;
    mutable std::mutex mu_;
    size_t in_flight_ = 0;
    size_t turns_ = 0;  // woken waiters that have not taken yet (0 or 1)
    std::deque<std::function<void()>> waiters_;
};

// One connection's RDMA Reads in flight (on its reactor only): at most `depth` of them,
// the initiator depth its peer's connect request allowed (IBA: more would be refused by
// its responder resources), and at most `bytes` of them, so that a deep queue's oldest
// calls are pulled first and one connection's burst does not take the device's whole
// ReadBudget. One Read larger than `bytes` still runs, alone.
class ReadWindow {
  public:
    ReadWindow(uint32_t depth, size_t bytes) : depth_(depth ? depth : 1), bytes_(bytes) {}

    bool admits(size_t bytes) const {
        return reads_ < depth_ && (!in_flight_ || in_flight_ + bytes <= bytes_);
    }
    void posted(size_t bytes) {
        ++reads_;
        in_flight_ += bytes;
        peak_ = std::max(peak_, in_flight_);
    }
    void done(size_t bytes) {
        if (reads_) --reads_;
        in_flight_ -= std::min(bytes, in_flight_);
    }

    uint32_t depth() const { return depth_; }
    uint32_t reads() const { return reads_; }
    size_t in_flight() const { return in_flight_; }
    size_t peak() const { return peak_; }  // the most bytes ever in flight at once

  private:
    uint32_t depth_;
    size_t bytes_;
    uint32_t reads_ = 0;
    size_t in_flight_ = 0;
    size_t peak_ = 0;
};

}  // namespace nfsrdmad::rdma
