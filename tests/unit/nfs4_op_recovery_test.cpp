// NFSv4.1 across a server restart (RFC 8881 §8.4.2, nfs/v4/recovery.h): a confirmed
// client is recorded in the state directory; the next boot's program finds it and holds
// a grace period in which that client reclaims its opens (CLAIM_PREVIOUS) while new opens,
// REMOVE and RENAME get NFS4ERR_GRACE; RECLAIM_COMPLETE of the last client ends grace.
// The "restart" is a new Nfs4Program over the same state directory.
#include <fstream>

#include "nfs/vfs/recovery_store.h"
#include "tests/unit/nfs4_ops_util.h"

namespace nfsrdmad::nfs::v4::testing {
namespace {

class Nfs4Recovery : public Nfs4OpsFixture {
  protected:
    Options options() const override {
        Options o;
        std::string why;
        auto store = vfs::RecoveryStore::open(state_dir_, 1000, &why);
        EXPECT_TRUE(store.ok()) << why;
        if (store) o.recovery_store = std::move(*store);
        o.grace_period = std::chrono::seconds(60);
        return o;
    }
    void SetUp() override {
        Nfs4OpsFixture::SetUp();
        root_fh_ = exp_->root_handle();
    }
    // A new boot: the program is replaced; sessions and state are gone, the records stay.
    void restart() {
        program_.reset();
        program_ = std::make_unique<Nfs4Program>(registry_, options());
    }
    x4::nfs_argop4 put_root() { return op_putfh(root_fh_.data()); }
    x4::nfs_argop4 put(const std::vector<uint8_t>& fh) { return op_putfh(fh); }
    std::span<const uint8_t> s(const std::string& v) { return keep(v); }

    x4::nfs_argop4 claim_previous(const std::string& owner,
                                  uint32_t access = x4::OPEN4_SHARE_ACCESS_BOTH,
                                  x4::open_delegation_type4 deleg = x4::OPEN_DELEGATE_NONE) {
        x4::nfs_argop4 op = op_open(s(owner), s("unused"), false, access);
        op.opopen().claim.set_claim(x4::CLAIM_PREVIOUS);
        op.opopen().claim.delegate_type() = deleg;
        return op;
    }
    x4::nfs_argop4 reclaim_complete() { return op_reclaim_complete(); }
    std::string records() const {
        std::ifstream in(state_dir_ + "/" + vfs::RecoveryStore::kFile);
        return std::string((std::istreambuf_iterator<char>(in)), std::istreambuf_iterator<char>());
    }

    vfs::FileHandle root_fh_;
};

TEST_F(Nfs4Recovery, FirstBootHasNoGrace) {
    establish();
    Reply r = seq({put_root(), op_open(s("o"), s("new"), true, x4::OPEN4_SHARE_ACCESS_BOTH)});
    EXPECT_EQ(r.status(), x4::NFS4_OK);
    // Reclaiming with nothing to reclaim (§15.1.9.2).
    Reply p = seq({put_root(), op_lookup(s("new")), claim_previous("o")});
    EXPECT_EQ(p.status(), x4::NFS4ERR_NO_GRACE);
}

TEST_F(Nfs4Recovery, ConfirmedClientIsRecordedAndDestroyedOneIsNot) {
    establish("recorded-client");
    // "recorded-client" in hex.
    EXPECT_NE(records().find("client 7265636f726465642d636c69656e74"), std::string::npos)
        << records();
    x4::nfs_argop4 ds(x4::OP_DESTROY_SESSION);
    ds.opdestroy_session().dsa_sessionid = sessionid_;
    ASSERT_EQ(raw({ds}).status(), x4::NFS4_OK);
    x4::nfs_argop4 dc(x4::OP_DESTROY_CLIENTID);
    dc.opdestroy_clientid().dca_clientid = clientid_;
    ASSERT_EQ(raw({dc}).status(), x4::NFS4_OK);
    EXPECT_EQ(records().find("client "), std::string::npos) << records();
}

TEST_F(Nfs4Recovery, RestartGivesTheClientAGracePeriodToReclaim) {
    establish("returning");
    write_file("held", "data before the restart");
    Reply o = seq(
        {put_root(), op_open(s("oo"), s("held"), false, x4::OPEN4_SHARE_ACCESS_BOTH), op_getfh()});
    ASSERT_EQ(o.status(), x4::NFS4_OK);
    auto fh_view = o.op(3).opgetfh().resok4().object;
    const std::vector<uint8_t> fh(fh_view.begin(), fh_view.end());
    const uint64_t old_client = clientid_;

    restart();
    // The old session and client ID belong to the previous boot.
    EXPECT_EQ(seq({put_root()}).status(), x4::NFS4ERR_BADSESSION);
    reclaim_complete_ = false;  // it reclaims first
    establish("returning");
    EXPECT_NE(clientid_, old_client);

    // In grace: new opens, REMOVE and RENAME wait; the reclaim goes through.
    EXPECT_EQ(
        seq({put_root(), op_open(s("x"), s("other"), true, x4::OPEN4_SHARE_ACCESS_BOTH)}).status(),
        x4::NFS4ERR_GRACE);
    x4::nfs_argop4 rm(x4::OP_REMOVE);
    rm.opremove().target = s("held");
    EXPECT_EQ(seq({put_root(), rm}).status(), x4::NFS4ERR_GRACE);
    Reply rc = seq({put(fh), claim_previous("oo")});
    ASSERT_EQ(rc.status(), x4::NFS4_OK);
    const x4::stateid4 sid = rc.op(2).opopen().resok4().stateid;
    Reply rd = seq({put(fh), op_read(sid, 0, 100)});
    ASSERT_EQ(rd.status(), x4::NFS4_OK);
    const auto& data = rd.op(2).opread().resok4().data;
    EXPECT_EQ(std::string(data.begin(), data.end()), "data before the restart");

    // The only client of the previous boot is done: grace ends at once.
    ASSERT_EQ(seq({reclaim_complete()}).status(), x4::NFS4_OK);
    EXPECT_EQ(seq({reclaim_complete()}).status(), x4::NFS4ERR_COMPLETE_ALREADY);
    EXPECT_EQ(seq({put(fh), claim_previous("oo")}).status(), x4::NFS4ERR_NO_GRACE);
    EXPECT_EQ(
        seq({put_root(), op_open(s("x"), s("other"), true, x4::OPEN4_SHARE_ACCESS_BOTH)}).status(),
        x4::NFS4_OK);
}

// §10.2.1: the delegation a client held is reclaimed with its open (CLAIM_PREVIOUS'
// delegate_type). Here no callback path is set up (no backchannel), so it comes back
// granted and recalled (`recall` TRUE), and the client returns it. A write delegation is not
// reclaimed where this server grants none (write_delegations off).
TEST_F(Nfs4Recovery, ADelegationIsReclaimedWithItsOpen) {
    establish("delegated");
    write_file("cached", "read under a delegation");
    write_file("written", "written under a delegation");
    auto fh_of = [&](const char* name) {
        Reply l = seq({put_root(), op_lookup(s(name)), op_getfh()});
        EXPECT_EQ(l.status(), x4::NFS4_OK);
        auto v = l.op(3).opgetfh().resok4().object;
        return std::vector<uint8_t>(v.begin(), v.end());
    };
    const auto cached = fh_of("cached"), written = fh_of("written");
    restart();
    reclaim_complete_ = false;  // it reclaims first
    establish("delegated");
    Reply r = seq(
        {put(cached), claim_previous("r", x4::OPEN4_SHARE_ACCESS_READ, x4::OPEN_DELEGATE_READ)});
    ASSERT_EQ(r.status(), x4::NFS4_OK);
    const auto& d = r.op(2).opopen().resok4().delegation;
    ASSERT_EQ(d.delegation_type(), x4::OPEN_DELEGATE_READ);
    EXPECT_TRUE(d.read().recall) << "granted without a callback path and not recalled";
    x4::nfs_argop4 ret(x4::OP_DELEGRETURN);
    ret.opdelegreturn().deleg_stateid = d.read().stateid;
    EXPECT_EQ(seq({put(cached), ret}).status(), x4::NFS4_OK);
    Reply w = seq(
        {put(written), claim_previous("w", x4::OPEN4_SHARE_ACCESS_BOTH, x4::OPEN_DELEGATE_WRITE)});
    ASSERT_EQ(w.status(), x4::NFS4_OK);
    EXPECT_EQ(w.op(2).opopen().resok4().delegation.delegation_type(), x4::OPEN_DELEGATE_NONE);
    // Across a client restart (CLAIM_DELEG_PREV_FH): not supported (§10.2.1 "MAY"). Not a
    // reclaim, so after RECLAIM_COMPLETE (before it: GRACE, §18.51.3).
    ASSERT_EQ(seq({reclaim_complete()}).status(), x4::NFS4_OK);
    x4::nfs_argop4 prev = op_open(s("p"), s("unused"), false, x4::OPEN4_SHARE_ACCESS_READ);
    prev.opopen().claim.set_claim(x4::CLAIM_DELEG_PREV_FH);
    EXPECT_EQ(seq({put(cached), prev}).status(), x4::NFS4ERR_NOTSUPP);
}

TEST_F(Nfs4Recovery, AClientTheLastBootDidNotKnowCannotReclaim) {
    establish("old-one");
    restart();
    establish("newcomer");
    write_file("f", "x");
    Reply l = seq({put_root(), op_lookup(s("f")), op_getfh()});
    ASSERT_EQ(l.status(), x4::NFS4_OK);
    auto fh_view = l.op(3).opgetfh().resok4().object;
    const std::vector<uint8_t> fh(fh_view.begin(), fh_view.end());
    EXPECT_EQ(seq({put(fh), claim_previous("o")}).status(), x4::NFS4ERR_NO_GRACE);
    // ... and waits for grace like everyone else for a new open.
    EXPECT_EQ(
        seq({put_root(), op_open(s("o"), s("f"), false, x4::OPEN4_SHARE_ACCESS_READ)}).status(),
        x4::NFS4ERR_GRACE);
}

TEST_F(Nfs4Recovery, EpochGrowsAcrossBootsEvenInTheSameSecond) {
    std::string why;
    auto a = vfs::RecoveryStore::open(state_dir_, 5000, &why);
    ASSERT_TRUE(a.ok()) << why;
    const uint32_t first = (*a)->epoch();
    auto b = vfs::RecoveryStore::open(state_dir_, 5000, &why);
    ASSERT_TRUE(b.ok()) << why;
    EXPECT_GT((*b)->epoch(), first);
}

TEST_F(Nfs4Recovery, MalformedRecordsAreAnError) {
    {
        std::ofstream out(state_dir_ + "/" + vfs::RecoveryStore::kFile);
        out << "epoch 12\nclient zz\n";
    }
    std::string why;
    auto s = vfs::RecoveryStore::open(state_dir_, 1, &why);
    ASSERT_FALSE(s.ok());
    EXPECT_EQ(s.error(), EINVAL);
    EXPECT_NE(why.find(":2:"), std::string::npos) << why;
}

}  // namespace
}  // namespace nfsrdmad::nfs::v4::testing
