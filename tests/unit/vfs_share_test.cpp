// Unit tests of share reservations (nfs/vfs/state/share_table.h): every access x deny
// combination against every other, upgrade by re-open, the downgrade subset rule
// (RFC 8881 §18.18.3), close, release, the per-client bound, and NLM SHARE against
// an NFSv4 OPEN.
#include <gtest/gtest.h>

#include <string>

#include "nfs/vfs/state/share_table.h"
#include "tests/unit/vfs_state_test_util.h"

namespace nfsrdmad::vfs::state {
namespace {

using testing::file;
using testing::v4;

constexpr uint8_t N = kShareNone, R = kShareRead, W = kShareWrite, B = kShareBoth;

// Written out from RFC 8881 §9.7, not computed: does an access (row: NONE, READ,
// WRITE, BOTH) meet a deny (column: NONE, READ, WRITE, BOTH)?
constexpr bool kMeets[4][4] = {
    {false, false, false, false},
    {false, true, false, true},
    {false, false, true, true},
    {false, true, true, true},
};

TEST(ShareTableTest, EveryAccessDenyCombinationAgainstEveryOther) {
    int denied = 0, granted = 0;
    for (uint8_t ha = 0; ha <= B; ++ha) {
        for (uint8_t hd = 0; hd <= B; ++hd) {
            for (uint8_t wa = 0; wa <= B; ++wa) {
                for (uint8_t wd = 0; wd <= B; ++wd) {
                    SCOPED_TRACE(::testing::Message() << "held " << int(ha) << "/" << int(hd)
                                                      << " want " << int(wa) << "/" << int(wd));
                    ShareTable t;
                    const auto first = v4(1, "first"), second = v4(2, "second");
                    auto h = t.open(file(1), first, {ha, hd});
                    ASSERT_TRUE(h.ok());
                    ASSERT_FALSE(h->denied);
                    auto r = t.open(file(1), second, {wa, wd});
                    ASSERT_TRUE(r.ok());
                    if (kMeets[wa][hd]) {
                        ASSERT_TRUE(r->denied);
                        EXPECT_EQ(r->denied->kind, ShareConflict::AccessDenied);
                    } else if (kMeets[ha][wd]) {
                        ASSERT_TRUE(r->denied);
                        EXPECT_EQ(r->denied->kind, ShareConflict::DenyConflicts);
                    } else {
                        EXPECT_FALSE(r->denied);
                    }
                    if (r->denied) {
                        ++denied;
                        EXPECT_EQ(r->denied->owner, first);
                        EXPECT_EQ(r->denied->held, (ShareBits{ha, hd}));
                        EXPECT_FALSE(t.held(file(1), second));
                        EXPECT_EQ(t.share_count(second.client()), 0u);
                    } else {
                        ++granted;
                        EXPECT_EQ(t.held(file(1), second), (ShareBits{wa, wd}));
                    }
                    // check() agrees with open() and changes nothing.
                    EXPECT_EQ(t.check(file(1), second, {wa, wd}).has_value(),
                              r->denied.has_value());
                }
            }
        }
    }
    EXPECT_EQ(denied + granted, 256);
    EXPECT_EQ(granted, 256 - 175);  // counted by hand from kMeets: 81 pairs coexist
}

TEST(ShareTableTest, SameOwnerNeverConflictsAndReopenOrsTheBits) {
    ShareTable t;
    const auto a = v4(1, "a");
    ASSERT_FALSE(t.open(file(1), a, {R, B})->denied);
    auto up = t.open(file(1), a, {W, N});
    ASSERT_TRUE(up.ok());
    EXPECT_FALSE(up->denied);
    EXPECT_EQ(up->held, (ShareBits{B, B}));
    EXPECT_EQ(t.share_count(a.client()), 1u);  // still one share
}

TEST(ShareTableTest, UpgradeIsCheckedAgainstOthersAndADenialKeepsTheOldBits) {
    ShareTable t;
    const auto a = v4(1, "a"), b = v4(2, "b");
    ASSERT_FALSE(t.open(file(1), a, {R, N})->denied);
    ASSERT_FALSE(t.open(file(1), b, {R, W})->denied);
    auto up = t.open(file(1), a, {W, N});
    ASSERT_TRUE(up.ok());
    ASSERT_TRUE(up->denied);
    EXPECT_EQ(up->denied->kind, ShareConflict::AccessDenied);
    EXPECT_EQ(up->held, (ShareBits{R, N}));
    EXPECT_EQ(t.held(file(1), a), (ShareBits{R, N}));
}

TEST(ShareTableTest, DowngradeMustBeASubset) {
    ShareTable t;
    const auto a = v4(1, "a"), b = v4(2, "b");
    ASSERT_FALSE(t.open(file(1), a, {B, W})->denied);
    EXPECT_EQ(t.downgrade(file(1), a, {R, B}).error(), EINVAL);  // deny READ never held
    EXPECT_EQ(t.downgrade(file(1), a, {N, N}).error(), EINVAL);  // access must remain
    EXPECT_EQ(t.downgrade(file(1), a, {4, N}).error(), EINVAL);
    EXPECT_EQ(t.downgrade(file(1), b, {R, N}).error(), ENOENT);
    EXPECT_EQ(t.downgrade(file(2), a, {R, N}).error(), ENOENT);
    EXPECT_EQ(t.held(file(1), a), (ShareBits{B, W}));
    // b cannot write while a denies writes; after a's downgrade it can.
    EXPECT_TRUE(t.open(file(1), b, {W, N})->denied);
    ASSERT_TRUE(t.downgrade(file(1), a, {R, N}).ok());
    EXPECT_EQ(t.held(file(1), a), (ShareBits{R, N}));
    EXPECT_FALSE(t.open(file(1), b, {W, N})->denied);
}

TEST(ShareTableTest, CloseAndReleaseRemoveShares) {
    ShareTable t;
    const auto a = v4(1, "a"), a2 = v4(1, "a2"), b = v4(2, "b");
    ASSERT_FALSE(t.open(file(1), a, {R, B})->denied);
    EXPECT_TRUE(t.open(file(1), b, {R, N})->denied);
    EXPECT_TRUE(t.close(file(1), a));
    EXPECT_FALSE(t.close(file(1), a));
    EXPECT_FALSE(t.open(file(1), b, {R, N})->denied);

    ASSERT_FALSE(t.open(file(2), a, {R, N})->denied);
    ASSERT_FALSE(t.open(file(3), a2, {R, N})->denied);
    EXPECT_EQ(t.share_count(a.client()), 2u);
    EXPECT_EQ(t.release_client(a.client()), 2u);
    EXPECT_EQ(t.share_count(a.client()), 0u);
    EXPECT_FALSE(t.held(file(3), a2));
    EXPECT_TRUE(t.held(file(1), b));
    EXPECT_EQ(t.release_file(file(1)), 1u);
    EXPECT_EQ(t.share_count(b.client()), 0u);
    EXPECT_EQ(t.file_count(), 0u);
}

TEST(ShareTableTest, PerClientBoundAndInvalidBits) {
    ShareTable t(2);
    const auto a = v4(1, "a");
    ASSERT_TRUE(t.open(file(1), a, {R, N}).ok());
    ASSERT_TRUE(t.open(file(2), a, {R, N}).ok());
    EXPECT_EQ(t.open(file(3), a, {R, N}).error(), ENOLCK);
    EXPECT_TRUE(t.open(file(1), a, {W, N}).ok());  // a re-open needs no new room
    EXPECT_TRUE(t.open(file(3), v4(2, "b"), {R, N}).ok());
    EXPECT_EQ(t.open(file(4), v4(2, "b"), {R, 4}).error(), EINVAL);
    EXPECT_EQ(t.open(file(4), v4(2, "b"), {7, N}).error(), EINVAL);
    EXPECT_FALSE(t.held(file(3), a));
}

TEST(ShareTableTest, NlmShareAndNfs4OpenConflict) {
    ShareTable t;
    const uint8_t oh[] = {1, 2, 3};
    auto nlm = StateOwner::nlm(5, 0, oh);
    ASSERT_TRUE(nlm.ok());
    ASSERT_FALSE(t.open(file(1), *nlm, {N, W})->denied);  // fsa_NONE, fsm_DW
    auto r = t.open(file(1), v4(5, "x"), {B, N});
    ASSERT_TRUE(r.ok() && r->denied);
    EXPECT_EQ(r->denied->owner, *nlm);
    EXPECT_FALSE(t.open(file(1), v4(5, "x"), {R, N})->denied);
}

}  // namespace
}  // namespace nfsrdmad::vfs::state
