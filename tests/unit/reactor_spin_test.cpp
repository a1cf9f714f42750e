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

// A poller that never finds work and counts its polls and arms. With `advance`, each poll
// first moves the clock by what it holds: from inside the spin, after the reactor took its
// reading of its last work.
Poller counting_poller(std::atomic<uint64_t>& polls, std::atomic<uint64_t>& arms,
                       std::atomic<uint64_t>* advance = nullptr) {
    return Poller{[&polls, advance] {
                      if (advance) g_now_ns.fetch_add(advance->exchange(0));
                      polls.fetch_add(1);
                      return false;
                  },
                  [&arms] {
                      arms.fetch_add(1);
                      return false;
                  }};
}

}  // namespace

TEST(ReactorSpin, TheSpinIsMeasuredOnTheGivenClock) {
    std::atomic<uint64_t> polls{0}, arms{0};
    Reactor r(Mode::Adaptive, 50us, &fake_clock);
    r.add_poller(counting_poller(polls, arms));
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

// The spin sizes itself (spin_window.h): after sleeps far longer than the spin, an adaptive
// reactor stops spinning (on a frozen clock it sleeps anyway, where before it spun for
// ever); when work wakes it soon after its last, the spin comes back, a step at a time.
TEST(ReactorSpin, TheSpinStopsAfterLongSleepsAndComesBackWhenWorkComesClose) {
    g_now_ns.store(1000);
    std::atomic<uint64_t> polls{0}, arms{0}, advance{0};
    Reactor r(Mode::Adaptive, 50us, &fake_clock);
    r.add_poller(counting_poller(polls, arms, &advance));
    r.start("spin-test");
    // Asleep in epoll_wait: a lend runs only then (and leaves it asleep).
    auto asleep = [&] { return eventually([&] { return r.run_if_asleep([] {}); }); };
    // Work posted `after` ns past the clock's reading now; once it ran, a spin of `then` ns
    // without work, which ends the spin when it is longer.
    auto work = [&](uint64_t after, uint64_t then) {
        g_now_ns.fetch_add(after);
        std::atomic<bool> ran{false};
        r.post([&] { ran.store(true); });
        ASSERT_TRUE(eventually([&] { return ran.load(); }));
        advance.store(then);
    };
    EXPECT_EQ(r.spin_window_ns(), 50000u);
    ASSERT_TRUE(eventually([&] { return polls.load() > 0; }));  // its loop took a reading
    g_now_ns.fetch_add(1000000);                                // the first spin ends
    ASSERT_TRUE(asleep());
    // Woken 1 s after its last work, three times: 50 -> 25 -> 12.5 -> 0 µs.
    work(1000000000, 60000);
    ASSERT_TRUE(asleep());
    EXPECT_EQ(r.spin_window_ns(), 25000u);
    work(1000000000, 60000);
    ASSERT_TRUE(asleep());
    EXPECT_EQ(r.spin_window_ns(), 12500u);
    const uint64_t armed = arms.load();
    work(1000000000, 0);
    // No spin now: on a clock that does not move, the reactor arms its poller and sleeps
    // again at once.
    ASSERT_TRUE(asleep());
    EXPECT_EQ(r.spin_window_ns(), 0u);
    EXPECT_GT(arms.load(), armed);
    // Work 20 µs after the last: a 12.5 µs spin (a quarter of the configured 50).
    work(20000, 13000);
    ASSERT_TRUE(asleep());
    EXPECT_EQ(r.spin_window_ns(), 12500u);
    // 13 µs after: the spin was a little short, doubled; then again, to the configured 50.
    work(0, 26000);
    ASSERT_TRUE(asleep());
    EXPECT_EQ(r.spin_window_ns(), 25000u);
    work(0, 0);
    EXPECT_EQ(r.spin_window_ns(), 50000u);
    // The stats (daemon: dump and metrics) show the same window, and the sleeps above.
    const auto st = r.stats();
    EXPECT_TRUE(st.spins);
    EXPECT_EQ(st.spin_window_ns, 50000u);
    EXPECT_GE(st.sleeps, 6u);
    // And it spins: on the frozen clock, it polls on and does not sleep.
    const uint64_t polled = polls.load();
    ASSERT_TRUE(eventually([&] { return polls.load() > polled + 100; }));
    EXPECT_FALSE(r.run_if_asleep([] {}));
    r.stop();
}

// Stats of a loop that does not poll: it sleeps when idle, each post() to it asleep wakes
// it, and it reports no spin; a poller added makes an adaptive loop a spinning one, and
// its removal undoes that.
TEST(ReactorStats, SleepsWakeupsAndWhetherItSpins) {
    Reactor r(Mode::Adaptive, 50us, &fake_clock);
    r.start("stats-test");
    auto asleep = [&] { return eventually([&] { return r.run_if_asleep([] {}); }); };
    ASSERT_TRUE(asleep());
    const auto before = r.stats();
    EXPECT_FALSE(before.spins);
    EXPECT_EQ(before.spin_window_ns, 0u);
    EXPECT_GE(before.sleeps, 1u);
    for (int i = 0; i < 3; ++i) {
        ASSERT_TRUE(asleep());
        std::atomic<bool> ran{false};
        r.post([&] { ran.store(true); });
        ASSERT_TRUE(eventually([&] { return ran.load(); }));
    }
    ASSERT_TRUE(asleep());
    const auto after = r.stats();
    EXPECT_GE(after.wakeups, before.wakeups + 3);
    EXPECT_GE(after.sleeps, before.sleeps + 3);
    EXPECT_GE(after.lent, before.lent + 4);
    std::atomic<uint64_t> polls{0}, arms{0}, id{0};
    r.post([&] { id.store(r.add_poller(counting_poller(polls, arms))); });
    ASSERT_TRUE(eventually([&] { return r.stats().spins; }));
    EXPECT_EQ(r.stats().spin_window_ns, r.spin_window_ns());
    r.post([&] { r.remove_poller(id.load()); });
    ASSERT_TRUE(eventually([&] { return !r.stats().spins; }));
    r.stop();
}
