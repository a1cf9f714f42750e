// BIND_CONN_TO_SESSION (RFC 8881 §18.34) through Nfs4Program: the directions granted, the
// session it names, the sole-operation rule, and what binding changes (DESTROY_SESSION
// must come on a bound connection, §18.37.3).
#include <gtest/gtest.h>

#include "tests/unit/nfs4_ops_util.h"

namespace nfsrdmad::nfs::v4::testing {
namespace {

class Nfs4BindConn : public Nfs4OpsFixture {
  protected:
    void SetUp() override {
        Nfs4OpsFixture::SetUp();
        establish();
    }
    x4::nfs_argop4 bind(x4::channel_dir_from_client4 dir, bool rdma = false) {
        x4::nfs_argop4 op(x4::OP_BIND_CONN_TO_SESSION);
        auto& a = op.opbind_conn_to_session();
        a.bctsa_sessid = sessionid_;
        a.bctsa_dir = dir;
        a.bctsa_use_conn_in_rdma_mode = rdma;
        return op;
    }
    // The calls that follow come on a connection the session has not seen.
    void new_connection() { peer_.conn = rpc::next_connection_id(); }
    x4::nfs_argop4 destroy_session() {
        x4::nfs_argop4 op(x4::OP_DESTROY_SESSION);
        op.opdestroy_session().dsa_sessionid = sessionid_;
        return op;
    }
};

TEST_F(Nfs4BindConn, DirectionsAsTheRfcRequires) {
    const std::pair<x4::channel_dir_from_client4, x4::channel_dir_from_server4> cases[] = {
        {x4::CDFC4_FORE, x4::CDFS4_FORE},
        {x4::CDFC4_BACK, x4::CDFS4_BACK},
        {x4::CDFC4_FORE_OR_BOTH, x4::CDFS4_BOTH},
        {x4::CDFC4_BACK_OR_BOTH, x4::CDFS4_BOTH},
    };
    for (auto [asked, granted] : cases) {
        new_connection();
        Reply r = raw({bind(asked, /*rdma=*/true)});
        ASSERT_TRUE(r.decoded);
        ASSERT_EQ(r.status(), x4::NFS4_OK) << asked;
        const auto& ok = r.op(0).opbind_conn_to_session().bctsr_resok4();
        EXPECT_EQ(ok.bctsr_sessid, sessionid_);
        EXPECT_EQ(ok.bctsr_dir, granted) << asked;
        EXPECT_FALSE(ok.bctsr_use_conn_in_rdma_mode);  // RDMA mode is not offered
    }
}

TEST_F(Nfs4BindConn, BindingLetsTheConnectionDestroyTheSession) {
    new_connection();
    // Not bound yet: DESTROY_SESSION alone on it is refused.
    EXPECT_EQ(raw({destroy_session()}).status(), x4::NFS4ERR_CONN_NOT_BOUND_TO_SESSION);
    ASSERT_EQ(raw({bind(x4::CDFC4_FORE)}).status(), x4::NFS4_OK);
    EXPECT_EQ(raw({destroy_session()}).status(), x4::NFS4_OK);
    // Gone: binding to it is BADSESSION.
    new_connection();
    EXPECT_EQ(raw({bind(x4::CDFC4_FORE)}).status(), x4::NFS4ERR_BADSESSION);
}

TEST_F(Nfs4BindConn, BoundConnectionCarriesTheSession) {
    new_connection();
    ASSERT_EQ(raw({bind(x4::CDFC4_FORE_OR_BOTH)}).status(), x4::NFS4_OK);
    Reply r = seq({op_putrootfh(), op_getfh()});
    EXPECT_EQ(r.status(), x4::NFS4_OK);
    // §18.34.3: binding again "has no effect" (NFS4_OK, the binding there is), unless it
    // demands another set of channels: NFS4ERR_INVAL, and the binding stays.
    for (auto same : {x4::CDFC4_FORE_OR_BOTH, x4::CDFC4_BACK_OR_BOTH}) {
        Reply again = raw({bind(same)});
        ASSERT_EQ(again.status(), x4::NFS4_OK) << same;
        EXPECT_EQ(again.op(0).opbind_conn_to_session().bctsr_resok4().bctsr_dir, x4::CDFS4_BOTH);
    }
    EXPECT_EQ(raw({bind(x4::CDFC4_BACK)}).status(), x4::NFS4ERR_INVAL);
    EXPECT_EQ(raw({bind(x4::CDFC4_FORE)}).status(), x4::NFS4ERR_INVAL);
    // A fore-only connection: FORE stands; BACK and BACK_OR_BOTH would change it.
    // FORE_OR_BOTH stands too and, as the Linux server does, adds the back channel: the
    // Linux client's answer to CB_PATH_DOWN on the connection it already uses.
    new_connection();
    ASSERT_EQ(raw({bind(x4::CDFC4_FORE)}).status(), x4::NFS4_OK);
    EXPECT_EQ(raw({bind(x4::CDFC4_FORE)}).status(), x4::NFS4_OK);
    EXPECT_EQ(raw({bind(x4::CDFC4_BACK_OR_BOTH)}).status(), x4::NFS4ERR_INVAL);
    EXPECT_EQ(raw({bind(x4::CDFC4_BACK)}).status(), x4::NFS4ERR_INVAL);
    Reply both = raw({bind(x4::CDFC4_FORE_OR_BOTH)});
    ASSERT_EQ(both.status(), x4::NFS4_OK);
    EXPECT_EQ(both.op(0).opbind_conn_to_session().bctsr_resok4().bctsr_dir, x4::CDFS4_BOTH);
    EXPECT_EQ(raw({bind(x4::CDFC4_FORE)}).status(), x4::NFS4ERR_INVAL);
    EXPECT_EQ(seq({op_putrootfh()}).status(), x4::NFS4_OK);
}

// SEQUENCE on a back-only connection binds its fore channel too (implicitly, §2.10.3.1)
// and keeps the back one: the connection is then bound to both.
TEST_F(Nfs4BindConn, SequenceOnABackConnectionKeepsItsBackChannel) {
    new_connection();
    ASSERT_EQ(raw({bind(x4::CDFC4_BACK)}).status(), x4::NFS4_OK);
    ASSERT_EQ(seq({op_putrootfh()}).status(), x4::NFS4_OK);
    Reply both = raw({bind(x4::CDFC4_BACK_OR_BOTH)});
    ASSERT_EQ(both.status(), x4::NFS4_OK);
    EXPECT_EQ(both.op(0).opbind_conn_to_session().bctsr_resok4().bctsr_dir, x4::CDFS4_BOTH);
}

TEST_F(Nfs4BindConn, UnknownSessionIsBadSession) {
    new_connection();
    x4::nfs_argop4 op = bind(x4::CDFC4_FORE);
    op.opbind_conn_to_session().bctsa_sessid[15] ^= 0xff;
    Reply r = raw({op});
    EXPECT_EQ(r.status(), x4::NFS4ERR_BADSESSION);
    ASSERT_EQ(r.count(), 1u);
}

TEST_F(Nfs4BindConn, MustBeTheOnlyOperation) {
    // Alone without SEQUENCE, or nothing: with another operation after it ...
    Reply r = raw({bind(x4::CDFC4_FORE), op_putrootfh()});
    EXPECT_EQ(r.status(), x4::NFS4ERR_NOT_ONLY_OP);
    ASSERT_EQ(r.count(), 1u);
    // ... and after a SEQUENCE.
    Reply s = seq({bind(x4::CDFC4_FORE)});
    EXPECT_EQ(s.status(), x4::NFS4ERR_NOT_ONLY_OP);
    ASSERT_EQ(s.count(), 2u);
    EXPECT_EQ(s.op(0).opsequence().sr_status(), x4::NFS4_OK);
}

TEST_F(Nfs4BindConn, UnknownDirectionIsBadXdr) {
    x4::nfs_argop4 op = bind(x4::CDFC4_FORE);
    op.opbind_conn_to_session().bctsa_dir = static_cast<x4::channel_dir_from_client4>(5);
    Reply r = raw({op});
    EXPECT_EQ(r.status(), x4::NFS4ERR_BADXDR);
}

}  // namespace
}  // namespace nfsrdmad::nfs::v4::testing
