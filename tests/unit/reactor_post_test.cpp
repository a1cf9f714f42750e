// Reactor::post: what is posted runs on the reactor, in order, in every mode; the eventfd
// is written only to wake a reactor that sleeps (issue 13: a busy reactor's posters pay no
// system call), and a reactor that goes to sleep never strands posted work.
#include <gtest/gtest.h>

#include <atomic>
#include <chrono>
#include <future>
#include <thread>
#include <vector>

#include "tests/unit/eventually.h"
#include "transport/engine/reactor.h"

using nfsrdmad::engine::Mode;
using nfsrdmad::engine::Reactor;
using namespace std::chrono_literals;
using nfsrdmad::test::eventually;

TEST(ReactorPost, AnAwakeReactorIsNotWokenAgain) {
    Reactor r(Mode::Event);
    r.start("post-test");
    // A task that keeps the reactor busy (its post woke it, unless it was not asleep yet).
    std::promise<void> entered, release;
    auto released = release.get_future();
    r.post([&] {
        entered.set_value();
        released.wait();  // the reactor is busy here
    });
    entered.get_future().wait();
    const uint64_t before = r.wake_writes();
    EXPECT_LE(before, 1u);
    // 100 posts while it runs a task: none writes the eventfd, all run after it, in order.
    std::vector<int> ran;
    for (int i = 0; i < 100; ++i) r.post([&ran, i] { ran.push_back(i); });
    EXPECT_EQ(r.wake_writes(), before);
    release.set_value();
    std::promise<void> done;
    r.post([&] { done.set_value(); });
    ASSERT_EQ(done.get_future().wait_for(10s), std::future_status::ready);
    r.stop();
    ASSERT_EQ(ran.size(), 100u);
    for (int i = 0; i < 100; ++i) EXPECT_EQ(ran[i], i);
}

// Posters racing a reactor that keeps falling asleep: every task runs (a lost wakeup would
// leave one waiting forever, and the test would time out).
TEST(ReactorPost, NoTaskIsStrandedBySleep) {
    for (Mode mode : {Mode::Event, Mode::Adaptive, Mode::Poll}) {
        Reactor r(mode, 5us);
        r.start("post-race");
        std::atomic<int> ran{0};
        constexpr int kThreads = 4, kEach = 20000;
        std::vector<std::thread> posters;
        for (int t = 0; t < kThreads; ++t)
            posters.emplace_back([&] {
                for (int i = 0; i < kEach; ++i) {
                    r.post([&] { ran.fetch_add(1, std::memory_order_relaxed); });
                    if (i % 64 == 0) std::this_thread::sleep_for(20us);  // let it sleep
                }
            });
        for (auto& p : posters) p.join();
        EXPECT_TRUE(eventually([&] { return ran.load() == kThreads * kEach; }))
            << nfsrdmad::engine::mode_name(mode) << ": " << ran.load() << " of " << kThreads * kEach
            << " ran";
        r.stop();
    }
}
