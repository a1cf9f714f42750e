// stripes.h — counters every call adds to, without a cache line that every core writes.
//
// A counter that every thread adds to on every call is one cache line passed from core to
// core: on two cores, two threads of NFSv3 NULL spent a quarter of their time in
// OpStats::record's three atomic adds (bench/host/README.md, "calls on two threads"). So
// each such counter is kept in kStripes copies a cache line apart; a thread adds to the
// copy of its stripe (threads are numbered as they first count) and a reader sums them.
// Threads beyond kStripes share stripes, which stays correct (the adds are atomic) and
// only shares lines again.
#pragma once

#include <array>
#include <atomic>
#include <cstddef>
#include <cstdint>

namespace nfsrdmad::rpc {

inline constexpr size_t kStripes = 16;

namespace detail {
inline std::atomic<size_t> next_thread{0};
// The thread's number plus one, 0 until it first asks: a constant initialiser, so reading
// it is one load from the thread's block, without the guard a dynamic one would need.
inline thread_local size_t thread_number_plus_one = 0;
[[gnu::noinline]] inline size_t number_this_thread() {
    thread_number_plus_one = next_thread.fetch_add(1, std::memory_order_relaxed) + 1;
    return thread_number_plus_one;
}
}  // namespace detail

// This thread's number, from 0 in the order threads first ask.
inline size_t thread_number() {
    size_t n = detail::thread_number_plus_one;
    if (n == 0) [[unlikely]]
        n = detail::number_this_thread();
    return n - 1;
}

inline size_t thread_stripe() {
    return thread_number() % kStripes;
}

// A drop-in for a std::atomic<uint64_t> statistics counter (relaxed: a count, not a
// synchronisation).
class StripedCounter {
  public:
    void add(uint64_t n) { stripes_[thread_stripe()].v.fetch_add(n, std::memory_order_relaxed); }
    StripedCounter& operator++() {
        add(1);
        return *this;
    }
    void operator++(int) { add(1); }
    StripedCounter& operator+=(uint64_t n) {
        add(n);
        return *this;
    }
    uint64_t load(std::memory_order = std::memory_order_relaxed) const {
        uint64_t sum = 0;
        for (const auto& s : stripes_) sum += s.v.load(std::memory_order_relaxed);
        return sum;
    }

  private:
    struct alignas(64) Stripe {
        std::atomic<uint64_t> v{0};
    };
    std::array<Stripe, kStripes> stripes_;
};

}  // namespace nfsrdmad::rpc
