// NFSv4.1 leases through Nfs4Program (RFC 8881 §8.3, §8.4.3): a client whose lease runs out
// becomes a courtesy client and keeps its state until another client's OPEN conflicts
// with it, or until it has been expired for Limits::courtesy_leases periods, or the client
// table fills up; then it is reaped (record, sessions, stateids and opens). The lease clock
// is a FakeClock the tests advance; the sweep is Nfs4Program::expire_leases(), which the
// daemon runs from a timer.
#include <gtest/gtest.h>

#include <chrono>
#include <string>

#include "tests/unit/nfs4_ops_util.h"
#include "tests/unit/v4_state_util.h"

namespace nfsrdmad::nfs::v4::testing {
namespace {

using namespace std::chrono_literals;

class Nfs4Lease : public Nfs4OpsFixture {
  protected:
    Options options() const override {
        Options o;
        o.limits.lease = 10s;
        o.limits.courtesy_leases = 3;
        o.limits.max_clients = max_clients_;
        o.clock = &clock_;
        return o;
    }
    void SetUp() override {
        Nfs4OpsFixture::SetUp();
        root_fh_ = exp_->root_handle();
    }

    // One client's session as the fixture's seq() uses it.
    struct Client {
        uint64_t clientid = 0;
        x4::sessionid4 sessionid{};
        uint32_t seqid = 0;
    };
    Client connect(const std::string& owner) {
        establish(owner);
        return save();
    }
    Client save() const { return {clientid_, sessionid_, seqid_}; }
    void use(const Client& c) {
        clientid_ = c.clientid;
        sessionid_ = c.sessionid;
        seqid_ = c.seqid;
    }
    // seq() as client `c` (its slot's seqid carried on).
    Reply as(Client& c, std::vector<x4::nfs_argop4> ops) {
        use(c);
        Reply r = seq(std::move(ops));
        c = save();
        return r;
    }

    x4::nfs_argop4 put_root() { return op_putfh(root_fh_.data()); }
    std::span<const uint8_t> s(const std::string& v) { return keep(v); }
    // OPEN (create) of `name` as client `c`: the status, and the stateid when OK.
    x4::nfsstat4 open(Client& c, const std::string& name, uint32_t access, uint32_t deny,
                      x4::stateid4* sid = nullptr) {
        Reply r = as(c, {put_root(), op_open(s("owner"), s(name), true, access, deny)});
        if (r.status() == x4::NFS4_OK && sid) *sid = r.op(2).opopen().resok4().stateid;
        return r.status();
    }
    x4::nfsstat4 ping(Client& c) { return as(c, {}).status(); }

    Services& svc() { return program_->services(); }

    state::testing::FakeClock clock_;
    size_t max_clients_ = 64;
    vfs::FileHandle root_fh_;
};

TEST_F(Nfs4Lease, ExpiredClientBecomesCourtesyAndSequenceRenewsIt) {
    Client a = connect("a");
    x4::stateid4 sid;
    ASSERT_EQ(open(a, "f", x4::OPEN4_SHARE_ACCESS_BOTH, 0, &sid), x4::NFS4_OK);

    clock_.advance(11s);
    program_->expire_leases();
    EXPECT_TRUE(svc().clients.courtesy(a.clientid));
    EXPECT_EQ(svc().clients.client_count(), 1u);
    EXPECT_EQ(svc().opens.size(), 1u);  // state kept (§8.4.3)

    // Its next SEQUENCE renews the lease: an ordinary client again, with its state.
    EXPECT_EQ(ping(a), x4::NFS4_OK);
    EXPECT_FALSE(svc().clients.courtesy(a.clientid));
    Reply w = as(a, {put_root(), op_lookup(s("f")), op_write(sid, 0, s("still mine"))});
    EXPECT_EQ(w.status(), x4::NFS4_OK);
}

TEST_F(Nfs4Lease, ConflictOnlyWithCourtesyClientReapsIt) {
    Client a = connect("a");
    ASSERT_EQ(open(a, "f", x4::OPEN4_SHARE_ACCESS_READ, x4::OPEN4_SHARE_DENY_WRITE), x4::NFS4_OK);
    Client b = connect("b");
    // A's lease is live: B's write open is denied.
    EXPECT_EQ(open(b, "f", x4::OPEN4_SHARE_ACCESS_WRITE, 0), x4::NFS4ERR_SHARE_DENIED);
    EXPECT_EQ(svc().clients.client_count(), 2u);

    // A's lease runs out (the sweep has not run: the conflict itself finds it expired); B
    // renews its own.
    clock_.advance(11s);
    EXPECT_EQ(ping(b), x4::NFS4_OK);
    EXPECT_EQ(open(b, "f", x4::OPEN4_SHARE_ACCESS_WRITE, 0), x4::NFS4_OK);
    EXPECT_EQ(svc().clients.client_count(), 1u);
    EXPECT_EQ(svc().opens.size(), 1u);  // only B's
    EXPECT_FALSE(svc().clients.confirmed(a.clientid));

    // A was reaped: its session is gone (§18.46.3 BADSESSION), its client ID too.
    EXPECT_EQ(ping(a), x4::NFS4ERR_BADSESSION);
    x4::nfs_argop4 dc(x4::OP_DESTROY_CLIENTID);
    dc.opdestroy_clientid().dca_clientid = a.clientid;
    EXPECT_EQ(raw({dc}).status(), x4::NFS4ERR_STALE_CLIENTID);
}

TEST_F(Nfs4Lease, ConflictWithALiveClientReapsNobody) {
    Client a = connect("a");
    ASSERT_EQ(open(a, "f", x4::OPEN4_SHARE_ACCESS_READ, x4::OPEN4_SHARE_DENY_WRITE), x4::NFS4_OK);
    Client c = connect("c");
    ASSERT_EQ(open(c, "f", x4::OPEN4_SHARE_ACCESS_READ, x4::OPEN4_SHARE_DENY_WRITE), x4::NFS4_OK);
    clock_.advance(11s);
    EXPECT_EQ(ping(c), x4::NFS4_OK);  // C stays live, A is a courtesy client
    program_->expire_leases();
    EXPECT_TRUE(svc().clients.courtesy(a.clientid));

    Client b = connect("b");
    EXPECT_EQ(open(b, "f", x4::OPEN4_SHARE_ACCESS_WRITE, 0), x4::NFS4ERR_SHARE_DENIED);
    EXPECT_TRUE(svc().clients.confirmed(a.clientid));  // not reaped for nothing
    EXPECT_EQ(svc().opens.size(), 2u);
    // A open that does not conflict reaps nobody either.
    EXPECT_EQ(open(b, "f", x4::OPEN4_SHARE_ACCESS_READ, 0), x4::NFS4_OK);
    EXPECT_EQ(svc().clients.client_count(), 3u);
    EXPECT_EQ(ping(a), x4::NFS4_OK);
}

TEST_F(Nfs4Lease, LongExpiredClientIsReapedWithItsState) {
    Client a = connect("a");
    x4::stateid4 sid;
    ASSERT_EQ(open(a, "f", x4::OPEN4_SHARE_ACCESS_BOTH, x4::OPEN4_SHARE_DENY_BOTH, &sid),
              x4::NFS4_OK);
    // Three lease periods after the lease ended (plus the lease itself): still a courtesy
    // client one second before, reaped at it.
    clock_.advance(39s);
    program_->expire_leases();
    EXPECT_TRUE(svc().clients.courtesy(a.clientid));
    EXPECT_EQ(svc().opens.size(), 1u);
    clock_.advance(1s);
    program_->expire_leases();
    EXPECT_EQ(svc().clients.client_count(), 0u);
    EXPECT_EQ(svc().opens.size(), 0u);

    EXPECT_EQ(ping(a), x4::NFS4ERR_BADSESSION);
    EXPECT_EQ(raw({op_create_session(a.clientid, 2)}).status(), x4::NFS4ERR_STALE_CLIENTID);

    // The old open stateid means nothing to the new incarnation (§8.2.4), and the deny is
    // gone with it.
    Client a2 = connect("a");
    Reply w = as(a2, {put_root(), op_lookup(s("f")), op_write(sid, 0, s("x"))});
    EXPECT_EQ(w.status(), x4::NFS4ERR_BAD_STATEID);
    EXPECT_EQ(open(a2, "f", x4::OPEN4_SHARE_ACCESS_WRITE, 0), x4::NFS4_OK);
}

// LOCK (open_to_lock_owner4) of the whole file through `open_sid` as client `c`; LOCKT.
x4::nfs_argop4 lock_all(uint64_t clientid, const x4::stateid4& open_sid,
                        std::span<const uint8_t> owner) {
    return op_lock_new(x4::WRITE_LT, 0, kToEof, open_sid, clientid, owner);
}
x4::nfs_argop4 lockt_all(uint64_t clientid, std::span<const uint8_t> owner) {
    return op_lockt(x4::WRITE_LT, 0, kToEof, clientid, owner);
}

// §8.4.3 for byte-range locks (as Linux's courteous server): a courtesy client's lock in
// the way of another client's LOCK or LOCKT reaps it; a live holder's lock is DENIED.
TEST_F(Nfs4Lease, LockConflictWithCourtesyClientReapsIt) {
    Client a = connect("a");
    x4::stateid4 oa;
    ASSERT_EQ(open(a, "f", x4::OPEN4_SHARE_ACCESS_BOTH, 0, &oa), x4::NFS4_OK);
    ASSERT_EQ(as(a, {put_root(), op_lookup(s("f")), lock_all(a.clientid, oa, s("la"))}).status(),
              x4::NFS4_OK);
    Client b = connect("b");
    x4::stateid4 ob;
    ASSERT_EQ(open(b, "f", x4::OPEN4_SHARE_ACCESS_BOTH, 0, &ob), x4::NFS4_OK);
    // A is live: denied, and LOCKT says so too; nobody reaped.
    EXPECT_EQ(as(b, {put_root(), op_lookup(s("f")), lock_all(b.clientid, ob, s("lb"))}).status(),
              x4::NFS4ERR_DENIED);
    EXPECT_EQ(as(b, {put_root(), op_lookup(s("f")), lockt_all(b.clientid, s("lb"))}).status(),
              x4::NFS4ERR_DENIED);
    EXPECT_EQ(svc().clients.client_count(), 2u);

    // A's lease runs out; B's LOCKT reaps it (nothing left in the way), B's LOCK is granted.
    clock_.advance(11s);
    EXPECT_EQ(ping(b), x4::NFS4_OK);
    EXPECT_EQ(as(b, {put_root(), op_lookup(s("f")), lockt_all(b.clientid, s("lb"))}).status(),
              x4::NFS4_OK);
    EXPECT_FALSE(svc().clients.confirmed(a.clientid));
    EXPECT_EQ(as(b, {put_root(), op_lookup(s("f")), lock_all(b.clientid, ob, s("lb"))}).status(),
              x4::NFS4_OK);
    EXPECT_EQ(svc().lock_states.size(), 1u);  // B's only
    EXPECT_EQ(ping(a), x4::NFS4ERR_BADSESSION);
}

TEST_F(Nfs4Lease, LockConflictWithALiveClientReapsNobody) {
    Client a = connect("a");
    x4::stateid4 oa;
    ASSERT_EQ(open(a, "f", x4::OPEN4_SHARE_ACCESS_BOTH, 0, &oa), x4::NFS4_OK);
    ASSERT_EQ(as(a, {put_root(), op_lookup(s("f")), lock_all(a.clientid, oa, s("la"))}).status(),
              x4::NFS4_OK);
    Client b = connect("b");
    x4::stateid4 ob;
    ASSERT_EQ(open(b, "f", x4::OPEN4_SHARE_ACCESS_BOTH, 0, &ob), x4::NFS4_OK);
    clock_.advance(11s);
    EXPECT_EQ(ping(a), x4::NFS4_OK);  // A renews: live again
    EXPECT_EQ(ping(b), x4::NFS4_OK);
    EXPECT_EQ(as(b, {put_root(), op_lookup(s("f")), lock_all(b.clientid, ob, s("lb"))}).status(),
              x4::NFS4ERR_DENIED);
    EXPECT_TRUE(svc().clients.confirmed(a.clientid));
    EXPECT_EQ(svc().lock_states.size(), 1u);  // A's; B's fresh stateid went with the denial
}

TEST_F(Nfs4Lease, UnconfirmedRecordExpires) {
    ASSERT_EQ(raw({op_exchange_id(s("never-confirmed"), {9, 9, 9, 9, 9, 9, 9, 9})}).status(),
              x4::NFS4_OK);
    EXPECT_EQ(svc().clients.client_count(), 1u);
    clock_.advance(5s);
    program_->expire_leases();
    EXPECT_EQ(svc().clients.client_count(), 1u);
    clock_.advance(6s);
    program_->expire_leases();
    EXPECT_EQ(svc().clients.client_count(), 0u);
}

// Not a lease matter but the same clean-up: a client that rebooted (same owner, new
// verifier) and confirmed its new incarnation with CREATE_SESSION (§18.35.4 case 5) loses
// the old incarnation's state, opens included.
TEST_F(Nfs4Lease, RebootedClientsOldOpensGoWithTheOldIncarnation) {
    Client a = connect("a");
    ASSERT_EQ(open(a, "f", x4::OPEN4_SHARE_ACCESS_BOTH, x4::OPEN4_SHARE_DENY_BOTH), x4::NFS4_OK);
    ASSERT_EQ(svc().opens.size(), 1u);

    Reply r1 = raw({op_exchange_id(s("a"), {8, 7, 6, 5, 4, 3, 2, 1})});
    ASSERT_EQ(r1.status(), x4::NFS4_OK);
    const auto& er = r1.op(0).opexchange_id().eir_resok4();
    EXPECT_NE(er.eir_clientid, a.clientid);
    EXPECT_EQ(svc().opens.size(), 1u);  // not before the new incarnation is confirmed

    ASSERT_EQ(raw({op_create_session(er.eir_clientid, er.eir_sequenceid)}).status(), x4::NFS4_OK);
    EXPECT_EQ(svc().opens.size(), 0u);
    EXPECT_EQ(ping(a), x4::NFS4ERR_BADSESSION);
}

class Nfs4LeaseSmallTable : public Nfs4Lease {
  protected:
    void SetUp() override {
        max_clients_ = 4;
        Nfs4Lease::SetUp();
    }
};

TEST_F(Nfs4LeaseSmallTable, FullTableReapsTheOldestCourtesyClientForANewOne) {
    Client a = connect("a");
    clock_.advance(2s);
    Client b = connect("b");
    Client c = connect("c");
    Client d = connect("d");
    ASSERT_EQ(svc().clients.client_count(), 4u);
    clock_.advance(9s);  // A expired, B, C and D not yet
    EXPECT_EQ(ping(d), x4::NFS4_OK);
    // The sweep keeps the table at most 3/4 full: A goes.
    program_->expire_leases();
    EXPECT_EQ(svc().clients.client_count(), 3u);
    EXPECT_EQ(ping(a), x4::NFS4ERR_BADSESSION);

    Client e = connect("e");  // the fourth record: room without reaping
    EXPECT_EQ(svc().clients.client_count(), 4u);
    // Full: a fifth client's EXCHANGE_ID makes room by reaping the longest expired courtesy
    // client (B expired before C, D and E; the sweep has not run since).
    clock_.advance(5s);
    EXPECT_EQ(ping(d), x4::NFS4_OK);
    EXPECT_EQ(ping(e), x4::NFS4_OK);
    Client f = connect("f");
    EXPECT_EQ(svc().clients.client_count(), 4u);
    EXPECT_EQ(ping(b), x4::NFS4ERR_BADSESSION);
    EXPECT_EQ(ping(c), x4::NFS4_OK);
    EXPECT_EQ(ping(f), x4::NFS4_OK);
}

TEST_F(Nfs4LeaseSmallTable, FullTableOfLiveClientsRefusesANewOne) {
    for (const char* o : {"a", "b", "c", "d"}) connect(o);
    EXPECT_EQ(raw({op_exchange_id(s("e"))}).status(), x4::NFS4ERR_SERVERFAULT);
    EXPECT_EQ(svc().clients.client_count(), 4u);
}

TEST_F(Nfs4Lease, SweepAsksToRunAgainWhenTheNextLeaseEnds) {
    EXPECT_EQ(program_->expire_leases(), 10s);  // nothing to wait for: one lease
    Client a = connect("a");
    clock_.advance(4s);
    EXPECT_EQ(program_->expire_leases(), 6s);
    clock_.advance(7s);
    // A is a courtesy client now: next is when it has been expired for three leases.
    EXPECT_EQ(program_->expire_leases(), 10s);  // capped at one lease
    clock_.advance(25s);
    EXPECT_EQ(program_->expire_leases(), 4s);
    clock_.advance(10s);
    EXPECT_EQ(program_->expire_leases(), 10s);
    EXPECT_EQ(svc().clients.client_count(), 0u);
    (void)a;
}

}  // namespace
}  // namespace nfsrdmad::nfs::v4::testing
