// One log line per interval for events a client can trigger at will (rejected connections,
// accept failures): the first goes through, later ones are counted until the next.
#pragma once

#include <chrono>
#include <cstdint>
#include <mutex>

namespace nfsrdmad::engine {

class RateLimit {
  public:
    explicit RateLimit(std::chrono::milliseconds interval) : interval_(interval) {}

    // True when this event may be logged; *held_back is how many were not since the last.
    bool allow(uint64_t* held_back) {
        std::lock_guard lock(mu_);
        auto now = std::chrono::steady_clock::now();
        if (logged_once_ && now - last_ < interval_) {
            ++held_back_;
            return false;
        }
        logged_once_ = true;
        last_ = now;
        *held_back = held_back_;
        held_back_ = 0;
        return true;
    }

  private:
    const std::chrono::milliseconds interval_;
    std::mutex mu_;
    bool logged_once_ = false;
    std::chrono::steady_clock::time_point last_;
    uint64_t held_back_ = 0;
};

}  // namespace nfsrdmad::engine
