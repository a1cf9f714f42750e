// An adaptive reactor measures its spin on the SpinClock it was given (reactor.h): the
// daemon gives it the latency clock, which never makes a system call (a VM on hpet paid
// one per reading, several per round). Frozen, the clock keeps the reactor spinning however
// long it really is; moved past the spin, the reactor arms its pollers and sleeps.
#include <gtest/gtest.h>

#include <atomic>
#include <chrono>
#include <thread>

#include "tests/unit/eventually.h"
#include "transport/engine/reactor.h"

using nfsrdmad::engine::Mode;
using nfsrdmad::engine::Poller;
using nfsrdmad::engine::Reactor;
using namespace std::chrono_literals;
using nfsrdmad::test::eventually;

namespace {

std::atomic<uint64_t> g_now_ns{1000};
std::atomic<uint64_t> g_readings{0};

uint64_t fake_clock() {
    g_readings.fetch_add(1);
    return g_now_ns.load();
}

}  // namespace

TEST(ReactorSpin, TheSpinIsMeasuredOnTheGivenClock) {
    std::atomic<uint64_t> polls{0}, arms{0};
    Reactor r(Mode::Adaptive, 50us, &fake_clock);
    r.add_poller(Poller{[&] {
                            polls.fetch_add(1);
                            return false;
                        },
                        [&] {
                            arms.fetch_add(1);
                            return false;
                        }});
    r.start("spin-test");
    // 100 ms of real time is 2 000 spins of 50 µs; on a clock that does not move, none
    // has elapsed: still polling, never armed.
    ASSERT_TRUE(eventually([&] { return polls.load() > 100; }));
    std::this_thread::sleep_for(100ms);
    EXPECT_EQ(arms.load(), 0u);
    EXPECT_GT(g_readings.load(), 100u);
    // The clock passes the spin: the reactor arms its poller and sleeps (no more polls).
    g_now_ns.fetch_add(1000000);
    ASSERT_TRUE(eventually([&] { return arms.load() >= 1; }));
    std::this_thread::sleep_for(20ms);
    const uint64_t asleep = polls.load();
    std::this_thread::sleep_for(100ms);
    EXPECT_EQ(polls.load(), asleep);
    r.stop();
}
