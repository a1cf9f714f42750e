// WorkerPool (transport/engine/worker_pool.h): every job runs once, whoever submits it and
// however the workers are parked and woken; shutdown drains what was submitted.
#include <gtest/gtest.h>

#include <atomic>
#include <chrono>
#include <latch>
#include <thread>
#include <vector>

#include "transport/engine/worker_pool.h"

using nfsrdmad::engine::WorkerPool;

// Racing submitters against parking workers: a lost wake-up leaves a job queued forever
// and shutdown() (which drains) would hang; a double hand-off runs a job twice.
TEST(WorkerPool, EveryJobRunsOnceUnderRacingSubmitters) {
    constexpr int kSubmitters = 4, kJobs = 20000;
    std::vector<std::atomic<int>> runs(kSubmitters * kJobs);
    {
        WorkerPool pool(3);
        std::vector<std::thread> submitters;
        for (int s = 0; s < kSubmitters; ++s)
            submitters.emplace_back([&, s] {
                for (int j = 0; j < kJobs; ++j) {
                    const int id = s * kJobs + j;
                    pool.submit([&runs, id] { runs[id].fetch_add(1); });
                    if (j % 1000 == 0) std::this_thread::yield();  // let workers park
                }
            });
        for (auto& t : submitters) t.join();
        pool.shutdown();
        EXPECT_EQ(pool.in_flight(), 0u);
    }
    for (size_t i = 0; i < runs.size(); ++i) ASSERT_EQ(runs[i].load(), 1) << "job " << i;
}

// One job at a time, each submitted after the last finished: the pool hands each to a
// parked worker (the case of a client that waits for every reply).
TEST(WorkerPool, SerialJobsWakeParkedWorkers) {
    WorkerPool pool(2);
    for (int i = 0; i < 2000; ++i) {
        std::latch done(1);
        pool.submit([&] { done.count_down(); });
        done.wait();
    }
    // The last job's worker may not have counted it finished yet when done.wait()
    // returns (it counts after the job returns): shutdown() drains, then nothing is left.
    pool.shutdown();
    EXPECT_EQ(pool.in_flight(), 0u);
}

// Jobs queued while every worker is busy run once one is free; all workers busy at once
// proves they run in parallel.
TEST(WorkerPool, QueuedBehindBusyWorkersAndParallel) {
    WorkerPool pool(3);
    std::latch all_running(3), release(1);
    for (int i = 0; i < 3; ++i)
        pool.submit([&] {
            all_running.count_down();
            release.wait();
        });
    all_running.wait();  // three workers hold a job each
    std::atomic<int> later{0};
    for (int i = 0; i < 10; ++i) pool.submit([&] { later.fetch_add(1); });
    EXPECT_EQ(later.load(), 0);
    EXPECT_EQ(pool.in_flight(), 13u);
    // What the stats dump and the metrics show of it (daemon/metrics.cpp).
    const auto s = pool.stats();
    EXPECT_EQ(s.threads, 3u);
    EXPECT_EQ(s.running, 3u);
    EXPECT_EQ(s.queued, 10u);
    EXPECT_EQ(s.parked, 0u);
    EXPECT_EQ(s.hand_overs, 0u);  // no loop submitted them
    release.count_down();
    pool.shutdown();
    EXPECT_EQ(later.load(), 10);
}

// Idle, every thread parks, and the stats say so (the loops' extra threads counted).
TEST(WorkerPool, StatsOfAnIdlePool) {
    WorkerPool pool(2, false, 1);
    ASSERT_TRUE([&] {
        for (int i = 0; i < 2000 && pool.parked() < 3; ++i)
            std::this_thread::sleep_for(std::chrono::milliseconds(1));
        return pool.parked() == 3;
    }());
    const auto s = pool.stats();
    EXPECT_EQ(s.threads, 3u);
    EXPECT_EQ(s.parked, 3u);
    EXPECT_EQ(s.queued + s.running, 0u);
}
