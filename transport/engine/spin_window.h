// spin_window.h — how long an adaptive reactor polls before it sleeps.
//
// A spin pays when the next completion comes before it ends: no sleep and no wake-up (a
// few µs on hardware, far more in a virtual machine). While nothing comes it costs a
// core, and a core that the clients or the workers share is then taken from the very work
// that makes the next call. Which of the two a loop sees depends on its clients, not on a
// setting: a client that calls again 20 µs after each reply is caught by a 50 µs spin every
// time; a loop whose next call comes 700 µs later (the bench's guest, where the client
// shares the server's two vCPUs) burns 50 µs of a shared core per call for nothing. There,
// no spin at all against a fixed 50 µs was 1.13 and 1.25x on 4 KiB random reads over RDMA
// in two boots but 0.99 in a third, and 1.09 on the serial metadata loop: inside that
// guest's noise, and never behind (bench/vm/README.md, "The guest profiled, and the
// adaptive spin").
//
// So the spin sizes itself from the sleeps that follow it, the way Linux's haltpoll cpuidle
// governor (drivers/cpuidle/governors/haltpoll.c) and KVM's halt_poll_ns size a virtual
// CPU's poll before it halts. After a sleep, `block` is the time from the loop's last work
// to the work that woke it (spin and sleep together):
//
//   block <= window          the spin would have caught it (it did not sleep: no call)
//   window < block <= max    the spin was a little short: double it (at least max / 4),
//                            never past max (`engine.spin_us`)
//   block > max              no spin up to max would have caught it: halve it, and below
//                            max / 4 stop spinning (0)
//
// From max, three long sleeps in a row stop the spin; calls that come close start it
// again at max / 4, and two more bring it back to max. The loop's own: only its thread
// changes it; any thread may read it (stats, tests).
#pragma once

#include <algorithm>
#include <atomic>
#include <cstdint>

namespace nfsrdmad::engine {

class SpinWindow {
  public:
    explicit SpinWindow(uint64_t max_ns) : max_(max_ns), window_(max_ns) {}

    uint64_t ns() const { return window_.load(std::memory_order_relaxed); }
    uint64_t max_ns() const { return max_; }

    // The loop slept after its spin and woke `block_ns` after its last work.
    void woke_after(uint64_t block_ns) {
        const uint64_t w = ns();
        if (block_ns <= w) return;
        uint64_t next;
        if (block_ns <= max_) {
            next = std::min(max_, std::max(w * 2, start()));
        } else {
            next = w / 2;
            if (next < start()) next = 0;
        }
        window_.store(next, std::memory_order_relaxed);
    }

  private:
    uint64_t start() const { return max_ / 4; }

    const uint64_t max_;
    std::atomic<uint64_t> window_;
};

}  // namespace nfsrdmad::engine
