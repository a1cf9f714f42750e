// Reactor::run_if_asleep (engine/reactor.h; issue 13): a loop on a thread of its own that
// sleeps is lent to the calling thread, which runs its job as the loop (no eventfd write,
// no wake-up of the loop's thread); a loop that is awake, polling, hosted by a pool or
// stopped is not lent; a lent job and the loop never run at once; a timer or poller added
// while lent, or a job posted then, is not left behind by the sleep the loop planned
// without it.
#include <gtest/gtest.h>

#include <atomic>
#include <chrono>
#include <future>
#include <thread>
#include <vector>

#include "tests/unit/eventually.h"
#include "transport/engine/reactor.h"
#include "transport/engine/worker_pool.h"

using nfsrdmad::engine::Mode;
using nfsrdmad::engine::Reactor;
using nfsrdmad::engine::WorkerPool;
using namespace std::chrono_literals;
using nfsrdmad::test::eventually;

namespace {

// Lends until the loop is asleep (it may not be yet, just after start or a post).
template <typename F>
bool lend_eventually(Reactor& r, F fn) {
    for (int i = 0; i < 10000; ++i) {
        if (r.run_if_asleep(fn)) return true;
        std::this_thread::sleep_for(1ms);
    }
    return false;
}

}  // namespace

TEST(ReactorLend, ASleepingLoopRunsTheJobOnTheCallersThreadWithoutAWakeUp) {
    for (Mode mode : {Mode::Event, Mode::Adaptive}) {
        Reactor r(mode, 5us);
        r.start("lend-test");
        std::thread::id loop_thread;
        std::promise<void> posted_ran;
        r.post([&] {
            loop_thread = std::this_thread::get_id();
            posted_ran.set_value();
        });
        ASSERT_EQ(posted_ran.get_future().wait_for(10s), std::future_status::ready);
        const uint64_t wakes = r.wake_writes();
        std::thread::id ran_on;
        bool as_loop = false;
        ASSERT_TRUE(lend_eventually(r, [&] {
            ran_on = std::this_thread::get_id();
            as_loop = r.on_reactor_thread();
        })) << nfsrdmad::engine::mode_name(mode);
        EXPECT_EQ(ran_on, std::this_thread::get_id());
        EXPECT_NE(ran_on, loop_thread);
        EXPECT_TRUE(as_loop);  // the reactor's "only from its thread" calls are allowed
        EXPECT_FALSE(r.on_reactor_thread());  // ... and only while lent
        EXPECT_EQ(r.lent(), 1u);
        EXPECT_EQ(r.wake_writes(), wakes);  // nobody was woken
        // The loop is still the loop: posted work runs on its own thread.
        std::promise<std::thread::id> after;
        r.post([&] { after.set_value(std::this_thread::get_id()); });
        auto f = after.get_future();
        ASSERT_EQ(f.wait_for(10s), std::future_status::ready);
        EXPECT_EQ(f.get(), loop_thread);
        r.stop();
    }
}

TEST(ReactorLend, AnAwakeLoopIsNotLent) {
    Reactor r(Mode::Event);
    r.start("lend-busy");
    std::promise<void> entered, release;
    auto released = release.get_future();
    r.post([&] {
        entered.set_value();
        released.wait();  // the loop is busy here
    });
    entered.get_future().wait();
    bool ran = false;
    for (int i = 0; i < 100; ++i) EXPECT_FALSE(r.run_if_asleep([&] { ran = true; }));
    EXPECT_FALSE(ran);
    release.set_value();
    EXPECT_TRUE(lend_eventually(r, [] {}));  // asleep again once the task is done
    r.stop();
}

TEST(ReactorLend, APollingLoopIsNeverLent) {
    Reactor r(Mode::Poll);
    std::atomic<int> polls{0};
    r.add_poller({[&] {
                      polls.fetch_add(1, std::memory_order_relaxed);
                      return false;
                  },
                  [] { return false; }});
    r.start("lend-poll");
    ASSERT_TRUE(eventually([&] { return polls.load() > 100; }));
    bool ran = false;
    for (int i = 0; i < 2000; ++i) EXPECT_FALSE(r.run_if_asleep([&] { ran = true; }));
    EXPECT_FALSE(ran);
    r.stop();
}

TEST(ReactorLend, AHostedOrStoppedLoopIsNeverLent) {
    {
        WorkerPool pool(2, false, /*loop_threads=*/1);
        Reactor r(Mode::Event);
        r.start(pool);
        ASSERT_TRUE(eventually([&] { return pool.parked() == 2; }));  // the loop sleeps
        bool ran = false;
        for (int i = 0; i < 200; ++i) {
            EXPECT_FALSE(r.run_if_asleep([&] { ran = true; }));
            std::this_thread::sleep_for(100us);
        }
        EXPECT_FALSE(ran);
        r.stop();
        pool.shutdown();
    }
    Reactor r(Mode::Event);
    r.start("lend-stop");
    ASSERT_TRUE(lend_eventually(r, [] {}));
    r.stop();
    bool ran = false;
    EXPECT_FALSE(r.run_if_asleep([&] { ran = true; }));
    EXPECT_FALSE(ran);
}

// What a lent job adds or posts is taken up by a loop that planned its sleep without it:
// with no timer before, the loop sleeps without a timeout, so a timer added while lent
// would never fire, and a poller never be armed, if the loop were not woken for them.
TEST(ReactorLend, TimersPollersAndPostsAddedWhileLentAreNotLeftAsleep) {
    Reactor r(Mode::Adaptive, 5us);
    r.start("lend-adds");
    std::promise<void> fired, posted;
    ASSERT_TRUE(lend_eventually(r, [&] { r.after(10ms, [&] { fired.set_value(); }); }));
    EXPECT_EQ(fired.get_future().wait_for(10s), std::future_status::ready);
    ASSERT_TRUE(lend_eventually(r, [&] { r.post([&] { posted.set_value(); }); }));
    EXPECT_EQ(posted.get_future().wait_for(10s), std::future_status::ready);
    std::atomic<int> polls{0};
    ASSERT_TRUE(lend_eventually(r, [&] {
        r.add_poller({[&] {
                          polls.fetch_add(1, std::memory_order_relaxed);
                          return false;
                      },
                      [] { return false; }});
    }));
    EXPECT_TRUE(eventually([&] { return polls.load() > 0; }));
    r.stop();
}

// Lenders racing a loop that keeps waking (posts and timers) and sleeping: a lent job and
// anything of the loop never overlap, and both kinds run.
TEST(ReactorLend, ALentJobAndTheLoopNeverRunAtOnce) {
    for (Mode mode : {Mode::Event, Mode::Adaptive}) {
        Reactor r(mode, 2us);
        r.start("lend-race");
        std::atomic<bool> inside{false};
        std::atomic<int> overlaps{0}, loop_ran{0}, lent_ran{0};
        auto exclusive = [&](std::atomic<int>& counter) {
            if (inside.exchange(true)) overlaps.fetch_add(1);
            std::this_thread::yield();  // widen the window an overlap would need
            inside.store(false);
            counter.fetch_add(1, std::memory_order_relaxed);
        };
        std::atomic<bool> stop{false};
        std::vector<std::thread> threads;
        for (int t = 0; t < 3; ++t)
            threads.emplace_back([&] {
                while (!stop) {
                    if (!r.run_if_asleep([&] { exclusive(lent_ran); })) std::this_thread::yield();
                }
            });
        threads.emplace_back([&] {
            for (int i = 0; i < 20000 && !stop; ++i) {
                r.post([&] { exclusive(loop_ran); });
                if (i % 16 == 0) std::this_thread::sleep_for(50us);  // let it sleep
            }
        });
        EXPECT_TRUE(eventually([&] { return loop_ran.load() == 20000; }));
        stop = true;
        for (auto& t : threads) t.join();
        EXPECT_EQ(overlaps.load(), 0) << nfsrdmad::engine::mode_name(mode);
        EXPECT_GT(lent_ran.load(), 0) << nfsrdmad::engine::mode_name(mode);
        r.stop();
    }
}
