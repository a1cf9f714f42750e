// Unit tests of the grace period (nfs/vfs/state/grace.h) with an injected clock: no
// grace without known clients, the end by time, the early end once every known NFSv4.1
// client sent RECLAIM_COMPLETE, and NLM hosts holding the period to its full length.
#include <gtest/gtest.h>

#include <chrono>

#include "nfs/vfs/state/grace.h"

namespace nfsrdmad::vfs::state {
namespace {

using namespace std::chrono_literals;
using Clock = Grace::Clock;

const Clock::time_point t0 = Clock::time_point{} + 1000s;

TEST(GraceTest, NoKnownClientsMeansNoGrace) {
    Grace g(t0, 90s, {});
    EXPECT_FALSE(g.in_grace(t0));
    EXPECT_FALSE(g.may_reclaim("a", t0));
    EXPECT_FALSE(g.may_reclaim_nlm(t0));
    EXPECT_EQ(g.reclaim_complete("a"), Grace::Completion::Unknown);
}

TEST(GraceTest, EndsWhenThePeriodIsOver) {
    Grace g(t0, 90s, {{"a", "b"}, 0});
    EXPECT_TRUE(g.in_grace(t0));
    EXPECT_TRUE(g.in_grace(t0 + 89s));
    EXPECT_TRUE(g.may_reclaim("a", t0 + 89s));
    EXPECT_FALSE(g.may_reclaim("stranger", t0 + 1s));  // no record: NFS4ERR_NO_GRACE
    EXPECT_FALSE(g.in_grace(t0 + 90s));
    EXPECT_FALSE(g.may_reclaim("a", t0 + 90s));
    EXPECT_EQ(g.deadline(), t0 + 90s);
}

TEST(GraceTest, EndsEarlyOnceEveryKnownClientCompletedReclaim) {
    Grace g(t0, 90s, {{"a", "b"}, 0});
    EXPECT_EQ(g.reclaim_complete("a"), Grace::Completion::Counted);
    EXPECT_FALSE(g.may_reclaim("a", t0 + 1s));  // done reclaiming
    EXPECT_TRUE(g.may_reclaim("b", t0 + 1s));
    EXPECT_TRUE(g.in_grace(t0 + 1s));
    EXPECT_EQ(g.reclaim_complete("a"), Grace::Completion::Already);
    EXPECT_EQ(g.reclaim_complete("new"), Grace::Completion::Unknown);
    EXPECT_TRUE(g.in_grace(t0 + 2s));  // neither counts for b
    EXPECT_EQ(g.pending_clients(), 1u);
    EXPECT_EQ(g.reclaim_complete("b"), Grace::Completion::Counted);
    EXPECT_FALSE(g.in_grace(t0 + 2s));
    EXPECT_EQ(g.pending_clients(), 0u);
}

TEST(GraceTest, NlmHostsKeepTheFullPeriod) {
    Grace g(t0, 45s, {{"a"}, 2});
    EXPECT_EQ(g.reclaim_complete("a"), Grace::Completion::Counted);
    EXPECT_TRUE(g.in_grace(t0 + 44s));  // NLM has no RECLAIM_COMPLETE
    EXPECT_TRUE(g.may_reclaim_nlm(t0 + 44s));
    EXPECT_FALSE(g.may_reclaim("a", t0 + 44s));
    EXPECT_FALSE(g.in_grace(t0 + 45s));
    EXPECT_FALSE(g.may_reclaim_nlm(t0 + 45s));
}

TEST(GraceTest, OnlyNlmHostsKnown) {
    Grace g(t0, 10s, {{}, 1});
    EXPECT_TRUE(g.in_grace(t0));
    EXPECT_TRUE(g.may_reclaim_nlm(t0 + 9s));
    EXPECT_FALSE(g.may_reclaim("a", t0));
    EXPECT_FALSE(g.in_grace(t0 + 10s));
}

}  // namespace
}  // namespace nfsrdmad::vfs::state

namespace nfsrdmad::vfs::state {
namespace {

using namespace std::chrono_literals;

TEST(GraceTest, AClientStillReclaimingAtTheDeadlineStretchesIt) {
    // As knfsd: past the deadline grace lasts while a reclaim came in the last second,
    // at most one more period (pynfs REBT5 reclaims through the end of the period).
    const Grace::Clock::time_point t = Grace::Clock::time_point{} + 1000s;
    Grace g(t, 10s, {{"a", "b"}, 0});
    g.reclaimed(t + 9s + 500ms);
    EXPECT_TRUE(g.in_grace(t + 10s));
    EXPECT_TRUE(g.may_reclaim("a", t + 10s + 400ms));
    g.reclaimed(t + 10s + 400ms);
    EXPECT_TRUE(g.in_grace(t + 11s + 300ms));
    // A second without a reclaim: over, and a reclaim noted after that changes nothing.
    EXPECT_FALSE(g.in_grace(t + 11s + 400ms));
    g.reclaimed(t + 11s + 500ms);
    EXPECT_FALSE(g.in_grace(t + 11s + 600ms));
    EXPECT_FALSE(g.may_reclaim("a", t + 11s + 600ms));
}

TEST(GraceTest, TheStretchEndsAfterOneMorePeriod) {
    const Grace::Clock::time_point t = Grace::Clock::time_point{} + 1000s;
    Grace g(t, 10s, {{"a"}, 0});
    for (auto at = t + 9s; at < t + 25s; at += 500ms) g.reclaimed(at);
    EXPECT_TRUE(g.in_grace(t + 19s + 900ms));
    EXPECT_FALSE(g.in_grace(t + 20s));
    // Without reclaims near the deadline it ends on time.
    Grace h(t, 10s, {{"a"}, 0});
    h.reclaimed(t + 1s);
    EXPECT_FALSE(h.in_grace(t + 10s));
}

}  // namespace
}  // namespace nfsrdmad::vfs::state
