// Reactor loops hosted by a WorkerPool (engine/reactor.h, engine/worker_pool.h; issue 13):
// a job submitted from the loop runs on the loop's thread while a parked worker takes the
// loop over, so the loop turns on while the job blocks; with no worker parked the job
// queues and the loop stays; a job submitted by a timer is not left behind by the sleep
// that follows; and stop() ends the loop on whichever thread has it, every job run once.
#include <gtest/gtest.h>

#include <atomic>
#include <chrono>
#include <future>
#include <latch>
#include <stdexcept>
#include <thread>
#include <vector>

#include "tests/unit/eventually.h"
#include "transport/engine/reactor.h"
#include "transport/engine/worker_pool.h"

using nfsrdmad::engine::Mode;
using nfsrdmad::engine::Reactor;
using nfsrdmad::engine::ReactorGroup;
using nfsrdmad::engine::WorkerPool;
using namespace std::chrono_literals;
using nfsrdmad::test::eventually;

namespace {

// The thread a task posted to `r` runs on (the loop's, then).
std::thread::id loop_thread(Reactor& r) {
    std::promise<std::thread::id> id;
    auto f = id.get_future();
    r.post([&] { id.set_value(std::this_thread::get_id()); });
    EXPECT_EQ(f.wait_for(10s), std::future_status::ready) << "the loop does not turn";
    return f.get();
}

// Lets blocked jobs go when it goes out of scope: declared after the pool and the reactor,
// it is destroyed before them, so a failed assertion cannot leave a job blocked and the
// pool's shutdown waiting for it forever.
struct Release {
    std::atomic<bool>& go;
    ~Release() { go = true; }
};

void wait_for(const std::atomic<bool>& go) {
    while (!go) std::this_thread::sleep_for(100us);
}

}  // namespace

TEST(HostedLoop, AJobFromTheLoopRunsThereWhileTheLoopGoesOnElsewhere) {
    for (Mode mode : {Mode::Event, Mode::Adaptive}) {
        std::atomic<bool> go{false};
        WorkerPool pool(2, false, /*loop_threads=*/1);
        Reactor r(mode, 5us);
        Release release{go};
        r.start(pool);
        ASSERT_TRUE(eventually([&] { return pool.parked() == 2; }));
        std::promise<std::thread::id> submitter, runner;
        r.post([&] {
            submitter.set_value(std::this_thread::get_id());
            EXPECT_TRUE(r.on_reactor_thread());
            pool.submit([&] {
                EXPECT_FALSE(r.on_reactor_thread());
                runner.set_value(std::this_thread::get_id());
                wait_for(go);  // a job that blocks
            });
        });
        auto ran = runner.get_future();
        ASSERT_EQ(ran.wait_for(10s), std::future_status::ready);
        const auto job_thread = ran.get();
        EXPECT_EQ(job_thread, submitter.get_future().get());  // the loop's thread ran it
        // ... and the loop turns on another thread while the job blocks.
        EXPECT_NE(loop_thread(r), job_thread);
        EXPECT_EQ(pool.hand_overs(), 1u);
        EXPECT_EQ(pool.in_flight(), 1u);  // the blocked job counts
        go = true;
        r.stop();
        pool.shutdown();
        EXPECT_EQ(pool.in_flight(), 0u);
    }
}

TEST(HostedLoop, WithNoWorkerParkedTheJobQueuesAndTheLoopStays) {
    std::atomic<bool> go{false};
    WorkerPool pool(1, false, /*loop_threads=*/1);
    Reactor r(Mode::Event);
    Release release{go};
    r.start(pool);
    ASSERT_TRUE(eventually([&] { return pool.parked() == 1; }));
    std::latch blocker_runs(1);
    pool.submit([&] {  // from outside the loop: the one worker takes it
        blocker_runs.count_down();
        wait_for(go);
    });
    blocker_runs.wait();
    ASSERT_EQ(pool.parked(), 0u);
    const auto loop = loop_thread(r);
    std::atomic<bool> ran{false};
    std::thread::id job_thread;
    r.post([&] {
        pool.submit([&] {
            job_thread = std::this_thread::get_id();
            ran = true;
        });
    });
    EXPECT_EQ(loop_thread(r), loop);  // not handed over: nobody was parked to take it
    EXPECT_FALSE(ran.load());         // queued behind the busy worker, not run on the loop
    go = true;
    ASSERT_TRUE(eventually([&] { return ran.load(); }));
    EXPECT_NE(job_thread, loop);
    EXPECT_EQ(pool.hand_overs(), 0u);
    r.stop();
    pool.shutdown();
}

// Two jobs submitted in one round: the first is not kept until the round ends (the loop
// keeps only the newest; the first goes to a parked worker when the second comes), so a
// pipelined burst is not served last-first. Here the round waits for the first job to
// start: with the first kept to the end of the round, it never would.
TEST(HostedLoop, AnEarlierJobOfTheRoundDoesNotWaitForItsEnd) {
    WorkerPool pool(2, false, /*loop_threads=*/1);
    Reactor r(Mode::Event);
    r.start(pool);
    ASSERT_TRUE(eventually([&] { return pool.parked() == 2; }));
    std::atomic<bool> first_ran{false}, second_ran{false};
    std::promise<bool> first_started_in_round;
    r.post([&] {
        pool.submit([&] { first_ran = true; });
        pool.submit([&] { second_ran = true; });
        first_started_in_round.set_value(eventually([&] { return first_ran.load(); }));
        EXPECT_FALSE(second_ran.load());  // the newest is kept for the round's end
    });
    auto f = first_started_in_round.get_future();
    ASSERT_EQ(f.wait_for(30s), std::future_status::ready);
    EXPECT_TRUE(f.get());
    EXPECT_TRUE(eventually([&] { return second_ran.load(); }));
    EXPECT_EQ(pool.hand_overs(), 1u);
    r.stop();
    pool.shutdown();
}

// A timer's job is left for the loop's thread before the loop decides how long to sleep:
// with no other timer and nothing else to wake it, that sleep has no end, so the hand-over
// must come first (a round that handed over only after epoll_wait never ran this job).
TEST(HostedLoop, ATimersJobIsNotLeftBehindBySleep) {
    WorkerPool pool(2, false, /*loop_threads=*/1);
    Reactor r(Mode::Event);
    r.start(pool);
    ASSERT_TRUE(eventually([&] { return pool.parked() == 2; }));
    std::promise<void> done;
    r.post([&] { r.after(10ms, [&] { pool.submit([&] { done.set_value(); }); }); });
    EXPECT_EQ(done.get_future().wait_for(10s), std::future_status::ready);
    r.stop();
    pool.shutdown();
}

// Three loops handing themselves over all the time to two workers, jobs that are quick
// (the loop's former thread often takes it back) and jobs that are not (a worker wins it,
// hands it on, and may be handed another loop before the former thread looks), then stop()
// wherever the loops are: every job runs exactly once, nothing hangs, and no loop ever has
// two threads (run_here aborts the process if it does).
//
// How many hand-overs the burst makes depends on the machine: a loop that drains a long
// round finds the workers taken by the jobs that round queued, and one that drains only
// after stop() hands nothing over; a loaded machine (CI runs tests beside the VM) makes
// both the rule. So each loop first hands one job over alone, with both workers parked
// and nothing else running: three hand-overs for certain, then the burst.
TEST(HostedLoop, EveryJobRunsOnceAcrossHandOversAndStop) {
    constexpr int kTasks = 20000;
    std::vector<std::atomic<int>> runs(kTasks);
    WorkerPool pool(2, false, /*loop_threads=*/3);
    {
        ReactorGroup g(3, Mode::Adaptive, 20us);
        g.start(pool);
        for (unsigned k = 0; k < 3; ++k) {
            ASSERT_TRUE(eventually([&] { return pool.parked() == 2; }));
            std::promise<void> done;
            g.at(k).post([&] { pool.submit([&] { done.set_value(); }); });
            ASSERT_EQ(done.get_future().wait_for(10s), std::future_status::ready);
            EXPECT_EQ(pool.hand_overs(), k + 1);
        }
        for (int i = 0; i < kTasks; ++i) {
            Reactor& r = g.at(i % 3);
            r.post([&pool, &runs, i] {
                pool.submit([&runs, i] {
                    if (i % 5 == 0) std::this_thread::sleep_for(std::chrono::microseconds(i % 97));
                    runs[i].fetch_add(1);
                });
            });
            if (i % 50 == 0) std::this_thread::sleep_for(200us);  // let workers park
        }
        g.stop();
    }
    pool.shutdown();
    EXPECT_EQ(pool.in_flight(), 0u);
    for (int i = 0; i < kTasks; ++i) ASSERT_EQ(runs[i].load(), 1) << "job " << i;
    EXPECT_GE(pool.hand_overs(), 3u);
    EXPECT_LE(pool.loops_taken_back(), pool.hand_overs());
}

// RDMA's reactors (next_own_thread) keep their thread when the others are hosted: a job
// submitted from such a loop goes to a worker, and the loop never moves (the kernel's
// rdma_cm and uverbs refuse a thread that switched identity, as pool threads do).
TEST(HostedLoop, OwnThreadReactorsNeverMoveNorRunJobs) {
    WorkerPool pool(2, false, /*loop_threads=*/1);
    ReactorGroup g(1, Mode::Event, 50us, /*own_thread=*/1);
    g.start(pool);
    Reactor& hosted = g.next();
    Reactor& own = g.next_own_thread();
    EXPECT_NE(&hosted, &own);
    EXPECT_EQ(&g.next(), &hosted);
    EXPECT_EQ(&g.next_own_thread(), &own);
    EXPECT_EQ(g.size(), 2u);
    ASSERT_TRUE(eventually([&] { return pool.parked() == 2; }));
    const auto own_thread = loop_thread(own);
    for (int i = 0; i < 20; ++i) {
        std::promise<std::thread::id> ran;
        own.post([&] { pool.submit([&] { ran.set_value(std::this_thread::get_id()); }); });
        auto f = ran.get_future();
        ASSERT_EQ(f.wait_for(10s), std::future_status::ready);
        EXPECT_NE(f.get(), own_thread);
        EXPECT_EQ(loop_thread(own), own_thread);
    }
    EXPECT_EQ(pool.hand_overs(), 0u);
    g.stop();
    pool.shutdown();

    ReactorGroup none(1);
    WorkerPool pool2(1, false, 1);
    none.start(pool2);
    EXPECT_THROW(none.next_own_thread(), std::logic_error);
    none.stop();
    ReactorGroup alone(2);  // no pool: every reactor has a thread of its own
    alone.start();
    EXPECT_NO_THROW(alone.next_own_thread());
    alone.stop();
}
