// rpc::OpStats: the per-operation counters behind the metrics endpoint.
#include "transport/rpc/latency_clock.h"
#include "transport/rpc/op_stats.h"

#include <gtest/gtest.h>

#include <chrono>
#include <thread>
#include <vector>

namespace nfsrdmad::rpc {
namespace {

const char* status_name(uint32_t s) {
    switch (s) {
        case 2:
            return "ERR_NOENT";
        case 13:
            return "ERR_ACCES";
        default:
            return nullptr;
    }
}

const OpStats::OpSnapshot* find(const OpStats::Snapshot& s, const std::string& name) {
    for (const auto& o : s.ops)
        if (o.name == name) return &o;
    return nullptr;
}

TEST(OpStats, CountsCallsLatencyBucketsAndErrorsByStatusName) {
    OpStats t("nfs", "3", {"NULL", "GETATTR", "", "LOOKUP"}, status_name);
    t.record(1, 0, 30'000);     // 30 µs: the 50 µs bucket
    t.record(1, 0, 2'000'000);  // 2 ms: the 2.5 ms bucket
    t.record(3, 2, 10'000);     // LOOKUP, NOENT, 10 µs: the first bucket
    t.record(3, 2, 10'000);
    t.record(3, 13, 20'000'000'000);  // 20 s: past every bound
    const auto s = t.snapshot();
    ASSERT_EQ(s.ops.size(), 2u);  // only operations called
    const auto* g = find(s, "GETATTR");
    ASSERT_NE(g, nullptr);
    EXPECT_EQ(g->calls, 2u);
    EXPECT_NEAR(g->seconds, 0.00203, 1e-9);
    EXPECT_EQ(g->buckets[1], 1u);  // le 50e-6
    EXPECT_EQ(g->buckets[6], 1u);  // le 2.5e-3
    const auto* l = find(s, "LOOKUP");
    ASSERT_NE(l, nullptr);
    EXPECT_EQ(l->calls, 3u);
    EXPECT_EQ(l->buckets[0], 2u);
    EXPECT_EQ(l->buckets.back(), 1u);  // +Inf only
    ASSERT_EQ(s.errors.size(), 2u);
    EXPECT_EQ(s.errors[0].op, "LOOKUP");
    EXPECT_EQ(s.errors[0].status, "ERR_NOENT");
    EXPECT_EQ(s.errors[0].count, 2u);
    EXPECT_EQ(s.errors[1].status, "ERR_ACCES");
}

// A bucket's bound is inclusive (Prometheus `le`), to the nanosecond.
TEST(OpStats, LatencyBucketBoundsAreInclusive) {
    EXPECT_EQ(latency_bucket(0), 0u);
    EXPECT_EQ(latency_bucket(25'000), 0u);
    EXPECT_EQ(latency_bucket(25'001), 1u);
    EXPECT_EQ(latency_bucket(2'500'000), 6u);
    EXPECT_EQ(latency_bucket(2'500'001), 7u);
    EXPECT_EQ(latency_bucket(5'000'000'000), 15u);
    EXPECT_EQ(latency_bucket(5'000'000'001), OpStats::kBuckets.size());
}

// Operation numbers the table does not name (a hostile or future op, a gap) count under
// "other"; statuses the protocol does not list count under "unknown": labels stay bounded.
TEST(OpStats, UnnamedOperationsAndStatusesStayBounded) {
    OpStats t("nfs", "3", {"NULL", "GETATTR", ""}, status_name);
    t.record(2, 0, 1000);
    t.record(99, 0, 1000);
    t.record(UINT32_MAX, 0, 1000);
    for (uint32_t st = 1000; st < 1100; ++st) t.record(1, st, 1000);
    const auto s = t.snapshot();
    const auto* other = find(s, "other");
    ASSERT_NE(other, nullptr);
    EXPECT_EQ(other->calls, 3u);
    ASSERT_EQ(s.errors.size(), 1u);
    EXPECT_EQ(s.errors[0].status, "unknown");
    EXPECT_EQ(s.errors[0].count, 100u);
}

TEST(OpStats, RpcFailuresAndPayloadBytes) {
    OpStats t("mountd", "3", {"NULL", "MNT"});
    t.record_failure(1, OpStats::Failure::GarbageArgs, 1000);
    t.record_failure(1, OpStats::Failure::SystemErr, 1000);
    t.record(1, 5, 1000);  // no status names: the number
    t.add_bytes(10, 0);
    t.add_bytes(5, 7);
    const auto s = t.snapshot();
    ASSERT_EQ(s.errors.size(), 3u);
    EXPECT_EQ(s.errors[0].status, "5");
    EXPECT_EQ(s.errors[1].status, "GARBAGE_ARGS");
    EXPECT_EQ(s.errors[2].status, "SYSTEM_ERR");
    EXPECT_EQ(find(s, "MNT")->calls, 3u);
    EXPECT_EQ(s.bytes_read, 15u);
    EXPECT_EQ(s.bytes_written, 7u);
}

// Per export: a path keeps its slot (a reload finds its counters), slots are bounded (the
// rest share "other"), slot 0 (no export) is not counted, and only exports published or
// called are listed.
TEST(ExportStats, SlotsByPathBoundedAndListedWhenServedOrCalled) {
    ExportStats s;
    const uint32_t a = s.slot_for("/srv/a");
    const uint32_t b = s.slot_for("/srv/b");
    EXPECT_NE(a, 0u);
    EXPECT_NE(a, b);
    EXPECT_EQ(s.slot_for("/srv/a"), a);
    EXPECT_TRUE(s.snapshot().empty()) << "neither served nor called yet";

    s.publish(a);
    s.record(a, false, 30'000, 4096, 0);       // 30 us: the 50 us bucket
    s.record(a, true, 2'000'000'000, 0, 100);  // 2 s: the 5 s bucket
    s.record(0, true, 1, 1, 1);                // no export: nowhere
    auto snap = s.snapshot();
    ASSERT_EQ(snap.size(), 1u);
    EXPECT_EQ(snap[0].path, "/srv/a");
    EXPECT_EQ(snap[0].calls, 2u);
    EXPECT_EQ(snap[0].errors, 1u);
    EXPECT_EQ(snap[0].bytes_read, 4096u);
    EXPECT_EQ(snap[0].bytes_written, 100u);
    EXPECT_NEAR(snap[0].seconds, 2.00003, 1e-9);
    EXPECT_EQ(snap[0].buckets[1], 1u);
    EXPECT_EQ(snap[0].buckets[15], 1u);

    s.record(b, false, 1, 0, 0);  // called without being published: listed
    EXPECT_EQ(s.snapshot().size(), 2u);

    for (int i = 0; i < int(ExportStats::kSlots) + 10; ++i) s.slot_for("/x/" + std::to_string(i));
    const uint32_t late = s.slot_for("/one/too/many");
    EXPECT_EQ(late, ExportStats::kSlots);
    s.publish(late);
    s.record(late, false, 1, 0, 0);
    snap = s.snapshot();
    EXPECT_EQ(snap.back().path, "other");
    EXPECT_EQ(snap.back().calls, 1u);
}

// Counted on many threads, each on its stripe (stripes.h), read as one sum: more threads
// than stripes share them and nothing is lost.
TEST(OpStats, ThreadsCountOnTheirStripesAndTheSnapshotSumsThem) {
    OpStats t("nfs", "3", {"NULL", "GETATTR"});
    ExportStats e;
    const uint32_t slot = e.slot_for("/srv/a");
    StripedCounter calls;
    constexpr int kThreads = int(kStripes) + 4, kEach = 2000;
    std::vector<std::thread> threads;
    for (int i = 0; i < kThreads; ++i)
        threads.emplace_back([&] {
            for (int n = 0; n < kEach; ++n) {
                t.record(1, 0, 30'000);
                t.add_bytes(1, 2);
                e.record(slot, n % 2 == 0, 30'000, 3, 4);
                calls++;
            }
        });
    for (auto& th : threads) th.join();
    const uint64_t total = uint64_t(kThreads) * kEach;
    const auto s = t.snapshot();
    ASSERT_EQ(s.ops.size(), 1u);
    EXPECT_EQ(s.ops[0].calls, total);
    EXPECT_EQ(s.ops[0].buckets[1], total);
    EXPECT_NEAR(s.ops[0].seconds, double(total) * 30e-6, 1e-6);
    EXPECT_EQ(s.bytes_read, total);
    EXPECT_EQ(s.bytes_written, 2 * total);
    const auto x = e.snapshot();
    ASSERT_EQ(x.size(), 1u);
    EXPECT_EQ(x[0].calls, total);
    EXPECT_EQ(x[0].errors, total / 2);
    EXPECT_EQ(x[0].bytes_read, 3 * total);
    EXPECT_EQ(x[0].bytes_written, 4 * total);
    EXPECT_EQ(x[0].buckets[1], total);
    EXPECT_EQ(calls.load(), total);
}

// A slot number slot_for never gave counts nowhere (and is not a crash).
TEST(ExportStats, AnUnmadeSlotCountsNowhere) {
    ExportStats e;
    e.record(7, false, 1, 0, 0);
    e.publish(7);
    EXPECT_TRUE(e.snapshot().empty());
}

}  // namespace
}  // namespace nfsrdmad::rpc

// The latency clock (latency_clock.h): differences in nanoseconds, whatever its source;
// never negative; ticks_of_ns is the inverse of elapsed_ns.
TEST(LatencyClock, MeasuresASleepAndNeverGoesNegative) {
    using namespace nfsrdmad::rpc;
    latency::init();
    const latency::Ticks a = latency::now();
    std::this_thread::sleep_for(std::chrono::milliseconds(20));
    const latency::Ticks b = latency::now();
    const uint64_t ns = latency::elapsed_ns(a, b);
    EXPECT_GE(ns, 19000000u);
    EXPECT_LT(ns, 5000000000u);  // generous: a loaded machine
    EXPECT_EQ(latency::elapsed_ns(b, a), 0u);
    const uint64_t back = latency::elapsed_ns(a, a + latency::ticks_of_ns(3000000000u));
    EXPECT_GT(back, 2990000000u);
    EXPECT_LT(back, 3010000000u);
}

// Where the clock source would make every reading a system call, the counter stands in:
// its measured rate turns a 20 ms sleep into about 20 ms (x86-64; elsewhere there is none).
TEST(LatencyClock, TheCountersRateMeasuresASleep) {
    using namespace nfsrdmad::rpc::latency;
    double rate = 0;
#if defined(__x86_64__)
    ASSERT_TRUE(detail::tsc_rate(&rate));
    ASSERT_GT(rate, 0.0);
    const uint64_t a = detail::tsc();
    std::this_thread::sleep_for(std::chrono::milliseconds(20));
    const uint64_t b = detail::tsc();
    const double ns = static_cast<double>(b - a) * rate;
    EXPECT_GE(ns, 19e6);
    EXPECT_LT(ns, 5e9);
#else
    EXPECT_FALSE(detail::tsc_rate(&rate));
#endif
}

// now_ns, the reactors' spin clock (engine::SpinClock), counts nanoseconds as elapsed_ns does.
TEST(LatencyClock, NanosecondsAgreeWithTheTicks) {
    using namespace nfsrdmad::rpc;
    latency::init();
    const uint64_t a = latency::now_ns();
    const latency::Ticks ta = latency::now();
    std::this_thread::sleep_for(std::chrono::milliseconds(20));
    const latency::Ticks tb = latency::now();
    const uint64_t b = latency::now_ns();
    ASSERT_GT(b, a);
    EXPECT_GE(b - a, latency::elapsed_ns(ta, tb));
    EXPECT_GE(b - a, 19000000u);
    EXPECT_LT(b - a, 5000000000u);  // generous: a loaded machine
}
