// The delegation table's rules (nfs/v4/delegation/table.h, RFC 8881 §10.4.1): which
// access conflicts with which delegation, one recall per delegation, the grant policy
// (one per client and file, write ones alone, a cooldown after a conflict, a bound),
// the recalls overdue for revocation, and the delegations of files removed since. Also the
// CB_COMPOUND codec it is recalled with.
#include <fcntl.h>
#include <gtest/gtest.h>
#include <unistd.h>

#include <cstdlib>
#include <string>
#include <vector>

#include "nfs/v4/callback/compound.h"
#include "nfs/v4/delegation/table.h"

namespace nfsrdmad::nfs::v4 {
namespace {

using namespace std::chrono_literals;

vfs::FileHandle Fh(uint8_t n) {
    vfs::FileHandle f;
    f.size = 20;
    f.bytes[0] = n;
    f.bytes[19] = n;
    return f;
}

Delegation Deleg(state::ClientId client, uint8_t file, bool write, uint8_t id) {
    Delegation d;
    d.client = client;
    d.file = Fh(file);
    d.write = write;
    d.stateid.seqid = 1;
    d.stateid.other[11] = id;
    return d;
}

TEST(DelegationTable, ReadersShareWritersConflict) {
    DelegationTable t;
    const state::Time now{};
    ASSERT_TRUE(t.may_grant(Fh(1), 7, false, now));
    t.put(Deleg(7, 1, false, 1));
    EXPECT_FALSE(t.may_grant(Fh(1), 7, false, now)) << "two for one client and file";
    EXPECT_TRUE(t.may_grant(Fh(1), 8, false, now)) << "read delegations are shared";
    EXPECT_FALSE(t.may_grant(Fh(1), 8, true, now)) << "a write one beside a read one";
    t.put(Deleg(8, 1, false, 2));
    // Reading (and the holder's own writing) does not conflict with read delegations.
    EXPECT_FALSE(t.conflict(Fh(1), 9, false, now).blocked);
    EXPECT_FALSE(t.conflict(Fh(1), 0, false, now).blocked);
    auto own = t.conflict(Fh(1), 7, true, now);
    EXPECT_TRUE(own.blocked) << "client 8's delegation is in client 7's way";
    ASSERT_EQ(own.to_recall.size(), 1u);
    EXPECT_EQ(own.to_recall[0].client, 8u);
    // Another writer: 7's is recalled now, 8's recall is under way already.
    auto w = t.conflict(Fh(1), 0, true, now);
    EXPECT_TRUE(w.blocked);
    ASSERT_EQ(w.to_recall.size(), 1u);
    EXPECT_EQ(w.to_recall[0].client, 7u);
    EXPECT_TRUE(t.conflict(Fh(1), 0, true, now).to_recall.empty()) << "a recall sent twice";
    EXPECT_TRUE(t.recalling());
    // Other files are not concerned.
    EXPECT_FALSE(t.conflict(Fh(2), 0, true, now).blocked);
}

// Delegations of files removed since they were granted: forget_removed(client) takes out
// the client's; forget_removed_next(n) visits n of the table's in turn, around again, so
// that a sweep reaches each. Files still linked, and delegations without a descriptor,
// stay.
TEST(DelegationTable, DelegationsOfRemovedFilesAreTakenOut) {
    char dir[] = "/tmp/deleg-removed-XXXXXX";
    ASSERT_NE(::mkdtemp(dir), nullptr);
    DelegationTable t;
    std::vector<std::string> paths;
    for (uint8_t i = 1; i <= 6; ++i) {
        paths.push_back(std::string(dir) + "/f" + std::to_string(i));
        const int fd = ::open(paths.back().c_str(), O_RDWR | O_CREAT, 0600);
        ASSERT_GE(fd, 0);
        Delegation d = Deleg(i <= 3 ? 7 : 8, i, false, i);
        d.fd = std::make_shared<vfs::OpenFile>(
            vfs::OpenFile{nullptr, Fh(i), vfs::UniqueFd(fd), false});
        t.put(d);
    }
    t.put(Deleg(7, 9, false, 9));  // no descriptor: never asked about
    for (size_t i : {0, 1, 4}) ASSERT_EQ(::unlink(paths[i].c_str()), 0);  // files 1, 2, 5

    auto mine = t.forget_removed(7);
    ASSERT_EQ(mine.size(), 2u);
    EXPECT_EQ(mine[0].stateid.other[11] + mine[1].stateid.other[11], 1 + 2);
    EXPECT_EQ(t.size(), 5u) << "client 8's removed file is not client 7's";
    // In turn, two at a time (the table holds 3, 4, 5, 6, 9): 3 and 4, then 5 and 6.
    EXPECT_TRUE(t.forget_removed_next(2).empty());
    auto next = t.forget_removed_next(2);
    ASSERT_EQ(next.size(), 1u);
    EXPECT_EQ(next[0].stateid.other[11], 5);
    EXPECT_EQ(t.size(), 4u);
    // Once file 6 is removed too, a pass from 9 around to 6 finds it; no more than the
    // table holds is visited.
    ASSERT_EQ(::unlink(paths[5].c_str()), 0);
    auto again = t.forget_removed_next(100);
    ASSERT_EQ(again.size(), 1u);
    EXPECT_EQ(again[0].stateid.other[11], 6);
    EXPECT_EQ(t.size(), 3u);
    EXPECT_TRUE(t.forget_removed_next(100).empty());
    for (size_t i : {2, 3}) ::unlink(paths[i].c_str());
    ::rmdir(dir);
}

TEST(DelegationTable, AWriteDelegationConflictsWithReading) {
    DelegationTable t;
    const state::Time now{};
    t.put(Deleg(7, 1, true, 1));
    EXPECT_EQ(t.writes(), 1u);
    EXPECT_FALSE(t.may_grant(Fh(1), 8, false, now));
    EXPECT_FALSE(t.conflict(Fh(1), 7, false, now).blocked) << "the holder's own reading";
    EXPECT_TRUE(t.conflict(Fh(1), 8, false, now).blocked);
    auto back = t.erase(Deleg(7, 1, true, 1).stateid.other);
    ASSERT_TRUE(back);
    EXPECT_TRUE(back->recalled.has_value());
    EXPECT_TRUE(t.empty());
    EXPECT_FALSE(t.recalling());
    EXPECT_EQ(t.writes(), 0u);
}

TEST(DelegationTable, NoGrantRightAfterAConflictNorBeyondTheBound) {
    DelegationTable t(2);
    const state::Time now{};
    t.put(Deleg(7, 1, false, 1));
    t.conflict(Fh(1), 0, true, now);
    t.erase(Deleg(7, 1, false, 1).stateid.other);
    EXPECT_FALSE(t.may_grant(Fh(1), 7, false, now + 1s)) << "granted in the cooldown";
    EXPECT_TRUE(t.may_grant(Fh(1), 7, false, now + DelegationTable::kCooldown));
    t.put(Deleg(7, 2, false, 2));
    t.put(Deleg(7, 3, false, 3));
    EXPECT_FALSE(t.may_grant(Fh(4), 7, false, now)) << "past the bound";
}

TEST(DelegationTable, RecallsOverdueAreTakenOutForRevocation) {
    DelegationTable t;
    const state::Time t0{};
    t.put(Deleg(7, 1, false, 1));
    t.put(Deleg(7, 2, false, 2));
    t.put(Deleg(8, 3, false, 3));
    t.conflict(Fh(1), 0, true, t0);
    t.conflict(Fh(2), 0, true, t0 + 5s);
    EXPECT_TRUE(t.overdue(t0 - 1s).empty());
    auto late = t.overdue(t0 + 1s);
    ASSERT_EQ(late.size(), 1u);
    EXPECT_EQ(late[0].file, Fh(1));
    EXPECT_EQ(t.size(), 2u);
    auto gone = t.forget_client(7);
    EXPECT_EQ(gone.size(), 1u);
    EXPECT_FALSE(t.recalling());
    EXPECT_TRUE(t.find(Deleg(8, 3, false, 3).stateid.other));
    EXPECT_FALSE(t.find(Deleg(7, 2, false, 2).stateid.other));
}

// §10.4.3: another party's GETATTR asks the write delegation's holder once (CB_GETATTR),
// waits for the answer, uses it while fresh, and asks again after; the holder's own
// GETATTR and read delegations ask nothing; a failed CB_GETATTR turns into a recall.
TEST(DelegationTable, GetattrAsksTheWriteDelegationsHolderOnce) {
    using Q = DelegationTable::AttrQuery;
    DelegationTable t;
    const state::Time t0{};
    t.put(Deleg(8, 2, false, 2));
    EXPECT_EQ(t.query_attrs(Fh(2), 9, t0, 10s).kind, Q::None) << "a read delegation";
    Delegation w = Deleg(7, 1, true, 1);
    w.change = 500;
    t.put(w);
    EXPECT_EQ(t.query_attrs(Fh(1), 7, t0, 10s).kind, Q::None) << "the holder's own GETATTR";
    auto ask = t.query_attrs(Fh(1), 9, t0, 10s);
    ASSERT_EQ(ask.kind, Q::Ask);
    EXPECT_EQ(ask.d.change, 500u);
    EXPECT_EQ(t.query_attrs(Fh(1), 0, t0 + 1s, 10s).kind, Q::Wait) << "asked twice";
    auto d = t.answered(w.stateid.other, true, 4096, 501, t0 + 1s);
    ASSERT_TRUE(d);
    EXPECT_TRUE(d->modified);
    EXPECT_EQ(d->change, 500u) << "the baseline moved";
    auto use = t.query_attrs(Fh(1), 0, t0 + 5s, 10s);
    ASSERT_EQ(use.kind, Q::Answer);
    EXPECT_EQ(use.d.size, 4096u);
    EXPECT_TRUE(use.d.modified);
    EXPECT_FALSE(t.answered(w.stateid.other, false, 10, 500, t0 + 6s)->modified)
        << "a holder that flushed still counted as holding changes";
    // A reclaimed delegation learns its baseline from the first answer.
    Delegation r = Deleg(8, 5, true, 5);
    t.put(r);
    EXPECT_EQ(t.answered(r.stateid.other, false, 0, 777, t0)->change, 777u);
    EXPECT_EQ(t.query_attrs(Fh(1), 9, t0 + 20s, 10s).kind, Q::Ask) << "a stale answer used";
    EXPECT_FALSE(t.recalling());
    ASSERT_TRUE(t.recall(w.stateid.other, t0 + 21s));
    EXPECT_FALSE(t.recall(w.stateid.other, t0 + 21s)) << "recalled twice";
    EXPECT_EQ(t.query_attrs(Fh(1), 9, t0 + 22s, 10s).kind, Q::Wait) << "asked while recalled";
    auto held = t.holders();
    ASSERT_EQ(held.size(), 1u) << "a delegation being recalled is not held for CB_RECALL_ANY";
    EXPECT_EQ(held[0], std::make_pair(state::ClientId{8}, size_t{2}));
}

TEST(CbCompound, CbSequenceThenCbRecallAndTheReplyDecoded) {
    namespace x4 = xdr::nfs4;
    const uint8_t fh[] = {1, 2, 3, 4, 5};
    state::Stateid sid{1, {9, 9, 9, 9, 9, 9, 9, 9, 9, 9, 9, 9}};
    CbSlot slot{{0xab}, 0, 5, 0};
    auto bytes = encode_cb_compound(slot, cb_recall(sid, false, fh));
    xdr::Decoder d(bytes);
    x4::CB_COMPOUND4args a;
    ASSERT_TRUE(x4::xdr_decode(d, a));
    EXPECT_EQ(d.remaining(), 0u);
    EXPECT_EQ(a.minorversion, 1u);
    ASSERT_EQ(a.argarray.size(), 2u);
    EXPECT_EQ(a.argarray[0].opcbsequence().csa_sessionid[0], 0xab);
    EXPECT_EQ(a.argarray[0].opcbsequence().csa_sequenceid, 5u);
    EXPECT_FALSE(a.argarray[0].opcbsequence().csa_cachethis);
    EXPECT_EQ(a.argarray[1].opcbrecall().stateid.other, sid.other);
    EXPECT_EQ(a.argarray[1].opcbrecall().fh.size(), 5u);

    x4::CB_COMPOUND4res res;
    res.status = x4::NFS4ERR_BAD_STATEID;
    res.resarray.emplace_back(x4::OP_CB_SEQUENCE);
    res.resarray.emplace_back(x4::OP_CB_RECALL);
    res.resarray[1].opcbrecall().status = x4::NFS4ERR_BAD_STATEID;
    std::vector<uint8_t> out;
    xdr::Encoder e(out);
    x4::xdr_encode(e, res);
    CbReply r;
    ASSERT_TRUE(decode_cb_compound(out, r));
    EXPECT_EQ(r.status, x4::NFS4ERR_BAD_STATEID);
    EXPECT_EQ(r.sequence, x4::NFS4_OK);
    ASSERT_EQ(r.ops.size(), 1u);
    EXPECT_EQ(r.ops[0], x4::NFS4ERR_BAD_STATEID);
    out.push_back(0);
    EXPECT_FALSE(decode_cb_compound(out, r)) << "trailing bytes";
    EXPECT_FALSE(decode_cb_compound({}, r));
}

}  // namespace
}  // namespace nfsrdmad::nfs::v4
