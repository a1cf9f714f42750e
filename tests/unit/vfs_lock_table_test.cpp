// Unit tests of the shared byte-range lock table (nfs/vfs/state/lock_table.h): range
// conversions of both protocols, POSIX split/merge/upgrade/downgrade per owner, holder
// reporting, NFSv4 and NLM owners conflicting with each other, release by owner, client
// and file, the bounds, and FIFO wake-up of waiters.
#include <gtest/gtest.h>

#include <string>
#include <thread>
#include <vector>

#include "nfs/vfs/state/lock_table.h"
#include "tests/unit/vfs_state_test_util.h"

namespace nfsrdmad::vfs::state {
namespace {

using testing::file;
using testing::v4;

constexpr LockType R = LockType::Read;
constexpr LockType W = LockType::Write;

StateOwner nlm(uint64_t host, uint32_t svid) {
    const uint8_t oh[] = {'o', 'h'};
    auto o = StateOwner::nlm(host, svid, oh);
    EXPECT_TRUE(o.ok());
    return *o;
}

Lock lk(uint64_t first, uint64_t last, LockType t) {
    return Lock{{first, last}, t};
}

// --- ranges ------------------------------------------------------------------------

TEST(ByteRangeTest, Nfs4LengthsMapToInclusiveRangesAndRejectZeroAndOverflow) {
    auto all = ByteRange::from_nfs4(10, ~0ull);
    ASSERT_TRUE(all.ok());
    EXPECT_EQ(*all, (ByteRange{10, kToEof}));
    EXPECT_TRUE(all->to_eof());
    EXPECT_EQ(all->nfs4_length(), ~0ull);
    EXPECT_EQ(all->nlm_length(), 0u);

    auto one = ByteRange::from_nfs4(5, 1);
    ASSERT_TRUE(one.ok());
    EXPECT_EQ(*one, (ByteRange{5, 5}));
    EXPECT_EQ(one->nfs4_length(), 1u);

    EXPECT_EQ(ByteRange::from_nfs4(5, 0).error(), EINVAL);               // §18.10.4
    EXPECT_EQ(ByteRange::from_nfs4(~0ull, 2).error(), EINVAL);           // past 2^64-1
    EXPECT_EQ(ByteRange::from_nfs4(1ull << 63, 1ull << 63).error(), 0);  // ends at 2^64-1
    EXPECT_EQ(ByteRange::from_nfs4(1ull << 63, (1ull << 63) + 1).error(), EINVAL);
}

TEST(ByteRangeTest, NlmLengthZeroAndOverflowMeanToEof) {
    EXPECT_EQ(ByteRange::from_nlm(3, 0), (ByteRange{3, kToEof}));
    EXPECT_EQ(ByteRange::from_nlm(3, 4), (ByteRange{3, 6}));
    EXPECT_EQ(ByteRange::from_nlm(~0ull - 1, 10), (ByteRange{~0ull - 1, kToEof}));
    EXPECT_EQ(ByteRange::from_nlm(3, 4).nlm_length(), 4u);
}

TEST(ByteRangeTest, OwnerBytesAreBounded) {
    std::vector<uint8_t> big(kMaxOwnerBytes + 1, 'x');
    EXPECT_EQ(StateOwner::make(ClientKey{}, big).error(), EINVAL);
    big.pop_back();
    EXPECT_TRUE(StateOwner::make(ClientKey{}, big).ok());
    std::vector<uint8_t> oh(kMaxOwnerBytes - 3, 'y');
    EXPECT_EQ(StateOwner::nlm(1, 2, oh).error(), EINVAL);
}

TEST(ByteRangeTest, UnlockInTheMiddleSplitsAndRelockMerges) {
    OwnerLocks held = apply_lock({}, {0, 99}, W);
    held = apply_lock(held, {40, 59}, std::nullopt);
    EXPECT_EQ(held, (OwnerLocks{lk(0, 39, W), lk(60, 99, W)}));
    held = apply_lock(held, {40, 59}, W);
    EXPECT_EQ(held, (OwnerLocks{lk(0, 99, W)}));
}

TEST(ByteRangeTest, AdjacentSameTypeMergesDifferentTypeDoesNot) {
    OwnerLocks held = apply_lock({}, {0, 9}, R);
    held = apply_lock(held, {10, 19}, R);
    EXPECT_EQ(held, (OwnerLocks{lk(0, 19, R)}));
    held = apply_lock(held, {20, 29}, W);
    EXPECT_EQ(held, (OwnerLocks{lk(0, 19, R), lk(20, 29, W)}));
    held = apply_lock(held, {5, 24}, W);  // overlapping: write replaces read there
    EXPECT_EQ(held, (OwnerLocks{lk(0, 4, R), lk(5, 29, W)}));
}

TEST(ByteRangeTest, ToEofRangesNeverWrap) {
    OwnerLocks held = apply_lock({}, {0, kToEof}, R);
    held = apply_lock(held, {kToEof, kToEof}, std::nullopt);  // the very last byte
    EXPECT_EQ(held, (OwnerLocks{lk(0, kToEof - 1, R)}));
    held = apply_lock(held, {0, 0}, std::nullopt);
    EXPECT_EQ(held, (OwnerLocks{lk(1, kToEof - 1, R)}));
    held = apply_lock(held, {kToEof, kToEof}, R);
    EXPECT_EQ(held, (OwnerLocks{lk(1, kToEof, R)}));
    held = apply_lock(held, {0, kToEof}, std::nullopt);
    EXPECT_TRUE(held.empty());
}

// --- the table ---------------------------------------------------------------------

// What a mirror must unlock when an owner lets go: the bytes nobody else covers.
TEST(ByteRangeTest, UncoveredListsTheGapsInOrder) {
    using V = std::vector<ByteRange>;
    auto gaps = [](ByteRange r, V covered) {
        return uncovered(r, merge_ranges(std::move(covered)));
    };
    EXPECT_EQ(merge_ranges({{50, 59}, {10, 19}, {15, 24}, {25, 30}, {kToEof, kToEof}}),
              (V{{10, 30}, {50, 59}, {kToEof, kToEof}}));
    EXPECT_EQ(gaps({0, 99}, {}), (V{{0, 99}}));
    EXPECT_EQ(gaps({0, 99}, {{50, 59}, {10, 19}, {15, 24}}), (V{{0, 9}, {25, 49}, {60, 99}}));
    EXPECT_EQ(gaps({10, 19}, {{0, 10}, {19, 30}}), (V{{11, 18}}));
    EXPECT_EQ(gaps({10, 19}, {{0, 100}}), V{});
    EXPECT_EQ(gaps({10, 19}, {{0, 5}, {30, 40}}), (V{{10, 19}}));
    EXPECT_EQ(gaps({5, kToEof}, {{7, kToEof}}), (V{{5, 6}}));
    EXPECT_EQ(gaps({0, kToEof}, {{0, 0}, {kToEof, kToEof}}), (V{{1, kToEof - 1}}));
    EXPECT_EQ(gaps({100, 200}, {{0, 5}, {300, 400}}), (V{{100, 200}}));
}

TEST(LockTableTest, ReadLocksShareWriteLocksExcludeAndTheHolderIsNamed) {
    LockTable t;
    const auto a = v4(1, "a"), b = v4(2, "b");
    ASSERT_FALSE(t.lock(file(1), a, lk(0, 99, R))->denied);
    EXPECT_FALSE(t.lock(file(1), b, lk(50, 149, R))->denied);
    auto r = t.lock(file(1), b, lk(90, 200, W));
    ASSERT_TRUE(r.ok());
    ASSERT_TRUE(r->denied);
    EXPECT_EQ(r->denied->owner, a);
    EXPECT_EQ(r->denied->lock, lk(0, 99, R));
    EXPECT_FALSE(r->queued);
    // Another file is independent.
    EXPECT_FALSE(t.lock(file(2), b, lk(0, 200, W))->denied);
}

TEST(LockTableTest, NlmAndNfs4OwnersConflictBothWays) {
    LockTable t;
    const auto v4owner = v4(9, "x"), nlmowner = nlm(9, 1234);  // same numeric client id
    ASSERT_FALSE(t.lock(file(1), nlmowner, lk(0, kToEof, W))->denied);
    auto r = t.lock(file(1), v4owner, lk(1000, 1000, R));
    ASSERT_TRUE(r.ok() && r->denied);
    EXPECT_EQ(r->denied->owner->client().protocol, Protocol::Nlm);
    ASSERT_TRUE(t.unlock(file(1), nlmowner, {0, kToEof}).ok());

    ASSERT_FALSE(t.lock(file(1), v4owner, lk(10, 19, W))->denied);
    auto s = t.test(file(1), nlmowner, lk(0, 10, R));
    ASSERT_TRUE(s.ok() && s->has_value());
    EXPECT_EQ((*s)->owner, v4owner);
    EXPECT_EQ((*s)->lock, lk(10, 19, W));
}

TEST(LockTableTest, TestChangesNothingAndIgnoresTheOwnersOwnLocks) {
    LockTable t;
    const auto a = v4(1, "a"), b = v4(1, "b");
    ASSERT_FALSE(t.lock(file(1), a, lk(0, 9, W))->denied);
    auto self = t.test(file(1), a, lk(0, 9, W));
    ASSERT_TRUE(self.ok());
    EXPECT_FALSE(self->has_value());
    auto other = t.test(file(1), b, lk(9, 9, R));
    ASSERT_TRUE(other.ok());
    EXPECT_TRUE(other->has_value());
    EXPECT_TRUE(t.locks_of(file(1), b).empty());
    EXPECT_EQ(t.lock_count(a), 1u);
}

TEST(LockTableTest, UpgradeFailsOnlyAgainstAnotherOwnersOverlap) {
    LockTable t;
    const auto a = v4(1, "a"), b = v4(2, "b");
    ASSERT_FALSE(t.lock(file(1), a, lk(0, 99, R))->denied);
    ASSERT_FALSE(t.lock(file(1), b, lk(80, 89, R))->denied);
    EXPECT_FALSE(t.lock(file(1), a, lk(0, 49, W))->denied);  // no overlap with b
    auto r = t.lock(file(1), a, lk(0, 99, W));
    ASSERT_TRUE(r.ok() && r->denied);
    EXPECT_EQ(r->denied->owner, b);
    // The failed upgrade left a's locks as they were.
    EXPECT_EQ(t.locks_of(file(1), a), (OwnerLocks{lk(0, 49, W), lk(50, 99, R)}));
    // Downgrade always succeeds.
    EXPECT_FALSE(t.lock(file(1), a, lk(0, 49, R))->denied);
    EXPECT_EQ(t.locks_of(file(1), a), (OwnerLocks{lk(0, 99, R)}));
}

TEST(LockTableTest, UnlockOfSubRangeSplitsAndCountsLocks) {
    LockTable t;
    const auto a = v4(1, "a"), b = v4(2, "b");
    ASSERT_FALSE(t.lock(file(1), a, lk(0, 99, W))->denied);
    ASSERT_TRUE(t.unlock(file(1), a, {10, 19}).ok());
    EXPECT_EQ(t.locks_of(file(1), a), (OwnerLocks{lk(0, 9, W), lk(20, 99, W)}));
    EXPECT_EQ(t.lock_count(a), 2u);
    EXPECT_EQ(t.lock_count(a.client()), 2u);
    EXPECT_FALSE(t.lock(file(1), b, lk(10, 19, W))->denied);  // the hole is free
    EXPECT_TRUE(t.lock(file(1), b, lk(9, 10, R))->denied);
    // Unlocking what is not held is fine and changes nothing.
    ASSERT_TRUE(t.unlock(file(1), a, {200, 300}).ok());
    ASSERT_TRUE(t.unlock(file(3), a, {0, kToEof}).ok());
    EXPECT_EQ(t.lock_count(a), 2u);
    ASSERT_TRUE(t.unlock(file(1), a, {0, kToEof}).ok());
    EXPECT_EQ(t.lock_count(a), 0u);
    EXPECT_EQ(t.file_count(), 1u);  // only b's lock is left
}

TEST(LockTableTest, InvertedRangeIsInvalid) {
    LockTable t;
    EXPECT_EQ(t.lock(file(1), v4(1, "a"), lk(10, 9, R)).error(), EINVAL);
    EXPECT_EQ(t.unlock(file(1), v4(1, "a"), {10, 9}).error(), EINVAL);
    EXPECT_EQ(t.file_count(), 0u);
}

TEST(LockTableTest, ReleaseByOwnerClientAndFile) {
    LockTable t;
    const auto a1 = v4(1, "a1"), a2 = v4(1, "a2"), b = nlm(2, 7);
    ASSERT_FALSE(t.lock(file(1), a1, lk(0, 9, W))->denied);
    ASSERT_FALSE(t.lock(file(2), a1, lk(0, 9, W))->denied);
    ASSERT_FALSE(t.lock(file(1), a2, lk(10, 19, W))->denied);
    ASSERT_FALSE(t.lock(file(3), a2, lk(10, 19, W))->denied);
    ASSERT_FALSE(t.lock(file(1), b, lk(20, 29, W))->denied);
    ASSERT_FALSE(t.lock(file(2), b, lk(20, 29, W))->denied);

    t.release_owner(file(1), a1);
    EXPECT_TRUE(t.locks_of(file(1), a1).empty());
    EXPECT_FALSE(t.locks_of(file(2), a1).empty());
    EXPECT_EQ(t.lock_count(a1), 1u);

    t.release_owner(a1);
    EXPECT_EQ(t.lock_count(a1), 0u);
    EXPECT_EQ(t.lock_count(ClientKey{Protocol::Nfs4, 1}), 2u);  // a2's

    t.release_client(ClientKey{Protocol::Nfs4, 1});
    EXPECT_EQ(t.lock_count(ClientKey{Protocol::Nfs4, 1}), 0u);
    EXPECT_TRUE(t.locks_of(file(3), a2).empty());
    EXPECT_EQ(t.lock_count(b), 2u);  // a client id of the other protocol is another client

    t.release_file(file(2));
    EXPECT_EQ(t.lock_count(b), 1u);
    EXPECT_FALSE(t.locks_of(file(1), b).empty());
    EXPECT_EQ(t.file_count(), 1u);
}

TEST(LockTableTest, PerOwnerAndPerClientBoundsFailWithEnolckAndChangeNothing) {
    LockTable t(LockLimits{.locks_per_owner = 2, .locks_per_client = 3, .waiters_per_client = 1});
    const auto a = v4(1, "a"), b = v4(1, "b");
    ASSERT_FALSE(t.lock(file(1), a, lk(0, 0, R))->denied);
    ASSERT_FALSE(t.lock(file(1), a, lk(2, 2, R))->denied);
    EXPECT_EQ(t.lock(file(1), a, lk(4, 4, R)).error(), ENOLCK);
    EXPECT_EQ(t.locks_of(file(1), a).size(), 2u);
    // Merging does not need room: [0,2] replaces two locks with one.
    ASSERT_FALSE(t.lock(file(1), a, lk(1, 1, R))->denied);
    EXPECT_EQ(t.lock_count(a), 1u);
    // An unlock that would split past the owner bound fails too.
    ASSERT_FALSE(t.lock(file(2), a, lk(0, 9, W))->denied);
    EXPECT_EQ(t.unlock(file(2), a, {5, 5}).error(), ENOLCK);
    EXPECT_EQ(t.locks_of(file(2), a), (OwnerLocks{lk(0, 9, W)}));
    // Client bound: a has 2, b may add one.
    ASSERT_FALSE(t.lock(file(3), b, lk(0, 0, W))->denied);
    EXPECT_EQ(t.lock(file(3), b, lk(5, 5, W)).error(), ENOLCK);
    EXPECT_EQ(t.lock_count(ClientKey{Protocol::Nfs4, 1}), 3u);
    // Another client is not affected.
    EXPECT_FALSE(t.lock(file(3), v4(2, "c"), lk(5, 5, W))->denied);
}

TEST(LockTableTest, WaiterBoundDeniesWithoutQueueing) {
    LockTable t(LockLimits{.locks_per_owner = 8, .locks_per_client = 8, .waiters_per_client = 1});
    const auto a = v4(1, "a"), b = v4(2, "b");
    ASSERT_FALSE(t.lock(file(1), a, lk(0, 99, W))->denied);
    auto first = t.lock(file(1), b, lk(0, 0, W), 1);
    ASSERT_TRUE(first.ok() && first->denied);
    EXPECT_TRUE(first->queued);
    auto again = t.lock(file(1), b, lk(0, 0, W), 2);  // retransmission: same waiter
    EXPECT_TRUE(again->queued);
    auto second = t.lock(file(1), b, lk(1, 1, W), 3);
    ASSERT_TRUE(second.ok() && second->denied);
    EXPECT_FALSE(second->queued);
    EXPECT_EQ(t.waiter_count(b.client()), 1u);
    EXPECT_TRUE(t.cancel_wait(file(1), b, lk(0, 0, W)));
    EXPECT_FALSE(t.cancel_wait(file(1), b, lk(0, 0, W)));
    EXPECT_EQ(t.waiter_count(b.client()), 0u);
}

TEST(LockTableTest, WaitersAreWokenInFifoOrderWithoutOvertaking) {
    LockTable t;
    const auto holder = v4(1, "h"), w1 = nlm(2, 1), w2 = v4(3, "w2"), w3 = nlm(4, 1);
    ASSERT_FALSE(t.lock(file(1), holder, lk(0, 99, W))->denied);
    ASSERT_TRUE(t.lock(file(1), w1, lk(0, 9, W), 101)->queued);
    ASSERT_TRUE(t.lock(file(1), w2, lk(5, 14, W), 102)->queued);   // behind w1
    ASSERT_TRUE(t.lock(file(1), w3, lk(50, 59, R), 103)->queued);  // independent of both

    // Freeing bytes nobody waits for wakes nobody.
    auto none = t.unlock(file(1), holder, {90, 99});
    ASSERT_TRUE(none.ok());
    EXPECT_TRUE(none->empty());

    // Freeing everything: w1 and w3, not w2 (it conflicts with w1, which came first).
    auto woken = t.unlock(file(1), holder, {0, kToEof});
    ASSERT_TRUE(woken.ok());
    ASSERT_EQ(woken->size(), 2u);
    EXPECT_EQ((*woken)[0].cookie, 101u);
    EXPECT_EQ((*woken)[0].owner, w1);
    EXPECT_EQ((*woken)[0].file, file(1));
    EXPECT_EQ((*woken)[1].cookie, 103u);

    // The woken retry; w2 is still waiting and gets its turn when w1 unlocks.
    ASSERT_FALSE(t.lock(file(1), w1, lk(0, 9, W))->denied);
    ASSERT_FALSE(t.lock(file(1), w3, lk(50, 59, R))->denied);
    auto next = t.unlock(file(1), w1, {0, 9});
    ASSERT_TRUE(next.ok());
    ASSERT_EQ(next->size(), 1u);
    EXPECT_EQ((*next)[0].cookie, 102u);
    EXPECT_EQ(t.waiter_count(w2.client()), 0u);
}

TEST(LockTableTest, DowngradeAndReleaseWakeWaiters) {
    LockTable t;
    const auto a = v4(1, "a"), reader = nlm(2, 5), writer = nlm(3, 5);
    ASSERT_FALSE(t.lock(file(1), a, lk(0, 9, W))->denied);
    ASSERT_TRUE(t.lock(file(1), reader, lk(0, 9, R), 1)->queued);
    auto down = t.lock(file(1), a, lk(0, 9, R));
    ASSERT_TRUE(down.ok());
    ASSERT_FALSE(down->denied);
    ASSERT_EQ(down->woken.size(), 1u);
    EXPECT_EQ(down->woken[0].owner, reader);

    ASSERT_TRUE(t.lock(file(1), writer, lk(0, 0, W), 2)->queued);
    auto gone = t.release_client(a.client());
    ASSERT_EQ(gone.size(), 1u);
    EXPECT_EQ(gone[0].cookie, 2u);
}

TEST(LockTableTest, ReleasingAnOwnerDropsItsWaitersAndUnblocksLaterOnes) {
    LockTable t;
    const auto h = v4(1, "h"), early = v4(2, "e"), late = v4(3, "l");
    ASSERT_FALSE(t.lock(file(1), h, lk(0, 9, R))->denied);
    ASSERT_TRUE(t.lock(file(1), early, lk(0, 9, W), 1)->queued);
    ASSERT_TRUE(t.lock(file(1), late, lk(20, 29, R), 2)->queued == false);  // granted
    ASSERT_TRUE(t.lock(file(1), late, lk(5, 5, R), 3)->queued == false);    // reads share
    const auto w = v4(4, "w");
    ASSERT_TRUE(t.lock(file(1), w, lk(25, 25, W), 4)->queued);  // behind late's read
    EXPECT_EQ(t.waiter_count(early.client()), 1u);
    auto woken = t.release_owner(early);
    EXPECT_TRUE(woken.empty());  // w is still blocked by late's lock
    EXPECT_EQ(t.waiter_count(early.client()), 0u);
    auto woken2 = t.release_owner(file(1), late);
    ASSERT_EQ(woken2.size(), 1u);
    EXPECT_EQ(woken2[0].owner, w);
}

TEST(LockTableTest, GrantRemovesTheOwnersWaiter) {
    LockTable t;
    const auto a = v4(1, "a"), x = v4(2, "x"), b = v4(3, "b");
    ASSERT_FALSE(t.lock(file(1), a, lk(0, 9, W))->denied);
    ASSERT_TRUE(t.lock(file(1), x, lk(0, 9, W), 1)->queued);
    ASSERT_TRUE(t.lock(file(1), b, lk(0, 9, W), 2)->queued);
    auto woken = t.unlock(file(1), a, {0, 9});
    ASSERT_TRUE(woken.ok());
    ASSERT_EQ(woken->size(), 1u);  // x only: b is behind it
    EXPECT_EQ(t.waiter_count(b.client()), 1u);
    // b retries before x does and gets it: its waiter goes away with the grant.
    ASSERT_FALSE(t.lock(file(1), b, lk(0, 9, W))->denied);
    EXPECT_EQ(t.waiter_count(b.client()), 0u);
    auto late = t.lock(file(1), x, lk(0, 9, W), 3);
    ASSERT_TRUE(late.ok() && late->denied);
    EXPECT_TRUE(late->queued);  // at the tail again
}

TEST(LockTableTest, ConcurrentOwnersOnManyFilesKeepCountsExact) {
    LockTable t;
    std::vector<std::thread> threads;
    for (int th = 0; th < 4; ++th) {
        threads.emplace_back([&t, th] {
            const auto o = v4(static_cast<uint64_t>(th), "t");
            for (int i = 0; i < 2000; ++i) {
                const auto f = file(static_cast<uint8_t>(i % 16));
                const uint64_t off = static_cast<uint64_t>(th) * 100;
                EXPECT_FALSE(t.lock(f, o, lk(off, off + 9, W))->denied);
                EXPECT_TRUE(t.unlock(f, o, {off + 5, off + 5}).ok());
                if (i % 2) t.release_owner(f, o);
            }
            t.release_client(o.client());
        });
    }
    for (auto& th : threads) th.join();
    EXPECT_EQ(t.file_count(), 0u);
    for (uint64_t c = 0; c < 4; ++c) EXPECT_EQ(t.lock_count(ClientKey{Protocol::Nfs4, c}), 0u);
}

}  // namespace
}  // namespace nfsrdmad::vfs::state
