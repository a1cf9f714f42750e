// Reactor timers: run once, in deadline order, on the reactor thread, and wake a reactor
// that sleeps with nothing else to do; a cancelled one never runs.
#include <gtest/gtest.h>

#include <chrono>
#include <future>
#include <mutex>
#include <vector>

#include "transport/engine/reactor.h"

using nfsrdmad::engine::Reactor;
using namespace std::chrono_literals;

TEST(ReactorTimer, RunInDeadlineOrderAndCancelledOnesNever) {
    Reactor r;
    r.start("timer-test");
    std::mutex mu;
    std::vector<int> ran;
    std::promise<void> done;
    auto note = [&](int i) {
        std::lock_guard lock(mu);
        ran.push_back(i);
    };
    r.post([&] {
        r.after(60ms, [&] {
            note(3);
            done.set_value();
        });
        auto cancelled = r.after(20ms, [&] { note(99); });
        r.after(30ms, [&] { note(2); });
        r.after(0ms, [&] { note(1); });
        r.cancel(cancelled);
    });
    // Nothing else wakes the reactor: only the timers' deadlines end its sleep.
    ASSERT_EQ(done.get_future().wait_for(5s), std::future_status::ready);
    r.stop();
    EXPECT_EQ(ran, (std::vector<int>{1, 2, 3}));
}

TEST(ReactorTimer, ATimerMayArmAnother) {
    Reactor r;
    r.start("timer-test");
    std::promise<int> done;
    r.post([&] {
        r.after(1ms,
                [&] { r.after(1ms, [&] { done.set_value(r.on_reactor_thread() ? 2 : -1); }); });
    });
    auto f = done.get_future();
    ASSERT_EQ(f.wait_for(5s), std::future_status::ready);
    EXPECT_EQ(f.get(), 2);
    r.stop();
}

// The coarse clock is Clock's, a tick or so behind: never ahead of it, never far behind
// (idle timeouts compare one coarse reading with another, so the tick is all they lose).
TEST(ReactorTimer, TheCoarseClockIsTheSteadyClockATickBehind) {
    for (int i = 0; i < 1000; ++i) {
        const auto coarse = Reactor::coarse_now();
        const auto precise = Reactor::Clock::now();
        EXPECT_LE(coarse, precise);
        EXPECT_GT(coarse, precise - 100ms);  // HZ=100 makes a tick 10 ms
    }
}

// Timers keep the coarse clock: a delay may come out short by a tick (HZ=100: 10 ms), never
// by more, and never runs long by more than a few ticks on an idle reactor.
TEST(ReactorTimer, ADelayIsKeptToATick) {
    Reactor r;
    r.start("timer-test");
    for (auto delay : {30ms, 80ms}) {
        std::promise<Reactor::Clock::duration> done;
        const auto asked = Reactor::Clock::now();
        r.post([&] { r.after(delay, [&] { done.set_value(Reactor::Clock::now() - asked); }); });
        auto f = done.get_future();
        ASSERT_EQ(f.wait_for(5s), std::future_status::ready);
        const auto took = f.get();
        EXPECT_GE(took, delay - 11ms);
        EXPECT_LT(took, delay + 2s);  // generous: a loaded CI machine
    }
    r.stop();
}
