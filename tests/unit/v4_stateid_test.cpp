// NFSv4.1 stateids (RFC 8881 §8.2): the special forms (§8.2.3, §16.2.3.1.2), forged, old,
// stale, freed, revoked and expired stateids, TEST_STATEID (§18.48), FREE_STATEID (§18.38) and
// the bounds.
#include <gtest/gtest.h>

#include "tests/unit/v4_state_util.h"

using namespace nfsrdmad::nfs::v4::state;
using namespace nfsrdmad::nfs::v4::state::testing;

namespace {

Stateid with(uint32_t seqid, uint8_t fill) {
    Stateid s;
    s.seqid = seqid;
    s.other.fill(fill);
    return s;
}

TEST(SpecialStateid, FormsAreRecognized) {
    EXPECT_EQ(classify(with(0, 0)), Special::Anonymous);
    EXPECT_EQ(classify(with(0xffffffffu, 0xff)), Special::ReadBypass);
    EXPECT_EQ(classify(with(1, 0)), Special::Current);
    EXPECT_EQ(classify(with(0xffffffffu, 0)), Special::Invalid);
    EXPECT_EQ(classify(with(2, 0)), Special::Reserved);
    EXPECT_EQ(classify(with(0, 0xff)), Special::Reserved);
    EXPECT_EQ(classify(with(1, 0xff)), Special::Reserved);
    Stateid almost = with(0, 0);
    almost.other[11] = 1;
    EXPECT_EQ(classify(almost), Special::None);
}

class Stateids : public ::testing::Test {
  protected:
    FakeClock clock;
    ClientTable t{clock, 7};
    Confirmed c = confirm(t, "h", "sys:0");
    Confirmed other = confirm(t, "o", "sys:1", 2);
};

TEST_F(Stateids, SpecialStateidsAreNeverTableEntries) {
    for (const Stateid& s :
         {with(0, 0), with(0xffffffffu, 0xff), with(1, 0), with(0xffffffffu, 0), with(5, 0)}) {
        EXPECT_EQ(t.check_stateid(c.clientid, s, kAnyKind).status, x4::NFS4ERR_BAD_STATEID);
        EXPECT_EQ(t.test_stateids(c.clientid, std::vector<Stateid>{s}),
                  std::vector<x4::nfsstat4>{x4::NFS4ERR_BAD_STATEID});
        EXPECT_EQ(t.free_stateid(c.clientid, s, false), x4::NFS4ERR_BAD_STATEID);
    }
}

TEST_F(Stateids, AllocateCheckBumpOld) {
    StateidTable::Result a = t.new_stateid(c.clientid, StateKind::Open);
    ASSERT_EQ(a.status, x4::NFS4_OK);
    EXPECT_EQ(a.stateid.seqid, 1u);
    EXPECT_EQ(classify(a.stateid), Special::None);
    EXPECT_EQ(a.stateid.other[3], 7);  // the boot epoch, big-endian, first
    EXPECT_EQ(t.check_stateid(c.clientid, a.stateid, mask_of(StateKind::Open)).status, x4::NFS4_OK);

    StateidTable::Result b = t.bump_stateid(c.clientid, a.stateid);
    ASSERT_EQ(b.status, x4::NFS4_OK);
    EXPECT_EQ(b.stateid.seqid, 2u);
    EXPECT_EQ(b.stateid.other, a.stateid.other);
    // seqid 1 is now old, 3 is from the future, 0 means "the current one" (NFSv4.1 §8.2.2).
    EXPECT_EQ(t.check_stateid(c.clientid, a.stateid, kAnyKind).status, x4::NFS4ERR_OLD_STATEID);
    Stateid future = b.stateid;
    future.seqid = 3;
    EXPECT_EQ(t.check_stateid(c.clientid, future, kAnyKind).status, x4::NFS4ERR_BAD_STATEID);
    Stateid current = b.stateid;
    current.seqid = 0;
    StateidTable::Result cur = t.check_stateid(c.clientid, current, kAnyKind);
    EXPECT_EQ(cur.status, x4::NFS4_OK);
    EXPECT_EQ(cur.stateid, b.stateid);
    EXPECT_EQ(cur.kind, StateKind::Open);
    EXPECT_EQ(t.bump_stateid(c.clientid, a.stateid).status, x4::NFS4ERR_OLD_STATEID);
}

TEST_F(Stateids, ForgedOrMisusedStateidsAreBad) {
    StateidTable::Result a = t.new_stateid(c.clientid, StateKind::Lock);
    ASSERT_EQ(a.status, x4::NFS4_OK);
    Stateid gen = a.stateid;
    gen.other[11] ^= 1;  // generation
    EXPECT_EQ(t.check_stateid(c.clientid, gen, kAnyKind).status, x4::NFS4ERR_BAD_STATEID);
    Stateid index = a.stateid;
    index.other[4] = 0x7f;  // an index never handed out
    EXPECT_EQ(t.check_stateid(c.clientid, index, kAnyKind).status, x4::NFS4ERR_BAD_STATEID);
    // Another client's stateid, or the wrong kind for the operation.
    EXPECT_EQ(t.check_stateid(other.clientid, a.stateid, kAnyKind).status, x4::NFS4ERR_BAD_STATEID);
    EXPECT_EQ(t.check_stateid(c.clientid, a.stateid, mask_of(StateKind::Open)).status,
              x4::NFS4ERR_BAD_STATEID);
    EXPECT_EQ(t.check_stateid(c.clientid, a.stateid, mask_of(StateKind::Lock)).status, x4::NFS4_OK);
}

TEST_F(Stateids, AnotherBootsStateidIsStale) {
    StateidTable::Result a = t.new_stateid(c.clientid, StateKind::Open);
    ClientTable rebooted(clock, 8);
    Confirmed again = confirm(rebooted, "h", "sys:0");
    EXPECT_EQ(rebooted.check_stateid(again.clientid, a.stateid, kAnyKind).status,
              x4::NFS4ERR_STALE_STATEID);
    // TEST_STATEID does not consider a previous instance (§18.48.3): BAD_STATEID.
    EXPECT_EQ(rebooted.test_stateids(again.clientid, std::vector<Stateid>{a.stateid}),
              std::vector<x4::nfsstat4>{x4::NFS4ERR_BAD_STATEID});
}

TEST_F(Stateids, AFreedStateidStaysBadWhenItsIndexIsReused) {
    StateidTable::Result a = t.new_stateid(c.clientid, StateKind::Open);
    ASSERT_EQ(t.release_stateid(c.clientid, a.stateid), x4::NFS4_OK);
    EXPECT_EQ(t.check_stateid(c.clientid, a.stateid, kAnyKind).status, x4::NFS4ERR_BAD_STATEID);
    StateidTable::Result b = t.new_stateid(c.clientid, StateKind::Open);
    ASSERT_EQ(b.status, x4::NFS4_OK);
    // Same index, next generation.
    EXPECT_TRUE(
        std::equal(a.stateid.other.begin(), a.stateid.other.begin() + 8, b.stateid.other.begin()));
    EXPECT_NE(a.stateid.other, b.stateid.other);
    EXPECT_EQ(t.check_stateid(c.clientid, a.stateid, kAnyKind).status, x4::NFS4ERR_BAD_STATEID);
    EXPECT_EQ(t.check_stateid(c.clientid, b.stateid, kAnyKind).status, x4::NFS4_OK);
    EXPECT_EQ(t.release_stateid(c.clientid, a.stateid), x4::NFS4ERR_BAD_STATEID);
}

TEST_F(Stateids, FreeStateid) {
    StateidTable::Result lock = t.new_stateid(c.clientid, StateKind::Lock);
    StateidTable::Result open = t.new_stateid(c.clientid, StateKind::Open);
    StateidTable::Result deleg = t.new_stateid(c.clientid, StateKind::Delegation);
    // §18.38.3: only a stateid with no locks (opens and delegations are locks) can be freed.
    EXPECT_EQ(t.free_stateid(c.clientid, lock.stateid, true), x4::NFS4ERR_LOCKS_HELD);
    EXPECT_EQ(t.free_stateid(c.clientid, open.stateid, false), x4::NFS4ERR_LOCKS_HELD);
    EXPECT_EQ(t.free_stateid(c.clientid, deleg.stateid, false), x4::NFS4ERR_LOCKS_HELD);
    EXPECT_EQ(t.free_stateid(other.clientid, lock.stateid, false), x4::NFS4ERR_BAD_STATEID);
    EXPECT_EQ(t.free_stateid(c.clientid, lock.stateid, false), x4::NFS4_OK);
    EXPECT_EQ(t.check_stateid(c.clientid, lock.stateid, kAnyKind).status, x4::NFS4ERR_BAD_STATEID);
    // A revoked delegation is acknowledged by freeing it.
    ASSERT_EQ(t.revoke_stateid(deleg.stateid, x4::NFS4ERR_DELEG_REVOKED), x4::NFS4_OK);
    EXPECT_EQ(t.free_stateid(c.clientid, deleg.stateid, false), x4::NFS4_OK);
    EXPECT_EQ(t.check_stateid(c.clientid, open.stateid, kAnyKind).status, x4::NFS4_OK);
}

TEST_F(Stateids, TestStateidReportsEachOne) {
    StateidTable::Result ok = t.new_stateid(c.clientid, StateKind::Open);
    StateidTable::Result bumped = t.new_stateid(c.clientid, StateKind::Lock);
    Stateid old = bumped.stateid;
    ASSERT_EQ(t.bump_stateid(c.clientid, bumped.stateid).status, x4::NFS4_OK);
    StateidTable::Result admin = t.new_stateid(c.clientid, StateKind::Open);
    StateidTable::Result expired = t.new_stateid(c.clientid, StateKind::Lock);
    StateidTable::Result deleg = t.new_stateid(c.clientid, StateKind::Delegation);
    StateidTable::Result others = t.new_stateid(other.clientid, StateKind::Open);
    EXPECT_EQ(t.revoke_stateid(admin.stateid, x4::NFS4ERR_PERM), x4::NFS4ERR_INVAL);
    ASSERT_EQ(t.revoke_stateid(admin.stateid, x4::NFS4ERR_ADMIN_REVOKED), x4::NFS4_OK);
    ASSERT_EQ(t.revoke_stateid(expired.stateid, x4::NFS4ERR_EXPIRED), x4::NFS4_OK);
    ASSERT_EQ(t.revoke_stateid(deleg.stateid, x4::NFS4ERR_DELEG_REVOKED), x4::NFS4_OK);
    const std::vector<Stateid> ids = {
        ok.stateid, old, admin.stateid, expired.stateid, deleg.stateid, others.stateid, with(0, 0)};
    EXPECT_EQ(
        t.test_stateids(c.clientid, ids),
        (std::vector<x4::nfsstat4>{x4::NFS4_OK, x4::NFS4ERR_OLD_STATEID, x4::NFS4ERR_ADMIN_REVOKED,
                                   x4::NFS4ERR_EXPIRED, x4::NFS4ERR_DELEG_REVOKED,
                                   x4::NFS4ERR_BAD_STATEID, x4::NFS4ERR_BAD_STATEID}));
    EXPECT_EQ(t.check_stateid(c.clientid, admin.stateid, kAnyKind).status,
              x4::NFS4ERR_ADMIN_REVOKED);
    // §8.2.4 checks revocation before the kind the operation wants.
    EXPECT_EQ(t.check_stateid(c.clientid, admin.stateid, mask_of(StateKind::Lock)).status,
              x4::NFS4ERR_ADMIN_REVOKED);
    EXPECT_EQ(t.bump_stateid(c.clientid, expired.stateid).status, x4::NFS4ERR_EXPIRED);
}

TEST_F(Stateids, ExpiredLeaseMakesStateidsExpired) {
    StateidTable::Result a = t.new_stateid(c.clientid, StateKind::Open);
    clock.advance(std::chrono::seconds(90));
    EXPECT_EQ(t.check_stateid(c.clientid, a.stateid, kAnyKind).status, x4::NFS4ERR_EXPIRED);
    EXPECT_EQ(t.bump_stateid(c.clientid, a.stateid).status, x4::NFS4ERR_EXPIRED);
    EXPECT_EQ(t.new_stateid(c.clientid, StateKind::Open).status, x4::NFS4ERR_EXPIRED);
}

TEST_F(Stateids, ReapingDropsTheClientsStateids) {
    StateidTable::Result a = t.new_stateid(c.clientid, StateKind::Open);
    StateidTable::Result b = t.new_stateid(other.clientid, StateKind::Open);
    clock.advance(std::chrono::seconds(90));
    SequenceResult s = t.sequence(seq(other.sessionid, 0, 1, true, 2));  // "other" renews
    ASSERT_EQ(s.status, x4::NFS4_OK);
    ASSERT_TRUE(t.reap(c.clientid));
    EXPECT_FALSE(t.reap(other.clientid));
    EXPECT_EQ(t.check_stateid(c.clientid, a.stateid, kAnyKind).status, x4::NFS4ERR_BAD_STATEID);
    EXPECT_EQ(t.check_stateid(other.clientid, b.stateid, kAnyKind).status, x4::NFS4_OK);
}

TEST(StateidBounds, PerClientAndTotal) {
    FakeClock clock;
    Limits l;
    l.max_stateids_per_client = 3;
    l.max_stateids = 5;
    ClientTable t(clock, 7, l);
    Confirmed a = confirm(t, "a", "sys:0");
    Confirmed b = confirm(t, "b", "sys:0");
    std::vector<Stateid> mine;
    for (int i = 0; i < 3; ++i) {
        StateidTable::Result r = t.new_stateid(a.clientid, StateKind::Open);
        ASSERT_EQ(r.status, x4::NFS4_OK);
        mine.push_back(r.stateid);
    }
    EXPECT_EQ(t.new_stateid(a.clientid, StateKind::Open).status, x4::NFS4ERR_SERVERFAULT);
    EXPECT_EQ(t.new_stateid(b.clientid, StateKind::Open).status, x4::NFS4_OK);
    EXPECT_EQ(t.new_stateid(b.clientid, StateKind::Open).status, x4::NFS4_OK);
    EXPECT_EQ(t.new_stateid(b.clientid, StateKind::Open).status, x4::NFS4ERR_SERVERFAULT);
    ASSERT_EQ(t.release_stateid(a.clientid, mine[0]), x4::NFS4_OK);
    EXPECT_EQ(t.new_stateid(b.clientid, StateKind::Open).status, x4::NFS4_OK);
}

TEST(StateidTableDirect, DropClientForgetsItsStateids) {
    StateidTable table(7, 10, 10, 1);
    StateidTable::Result r = table.allocate(1, StateKind::Lock);
    ASSERT_EQ(r.status, x4::NFS4_OK);
    StateidTable::Result b = table.bump(1, r.stateid);
    EXPECT_EQ(b.stateid.seqid, 2u);
    EXPECT_EQ(table.count(1), 1u);
    table.drop_client(1);
    EXPECT_EQ(table.count(1), 0u);
    EXPECT_EQ(table.size(), 0u);
    EXPECT_EQ(table.check(1, b.stateid, kAnyKind).status, x4::NFS4ERR_BAD_STATEID);
}

}  // namespace
