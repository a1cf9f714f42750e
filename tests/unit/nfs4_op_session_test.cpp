// EXCHANGE_ID, CREATE_SESSION and SEQUENCE through Nfs4Program (RFC 8881 §18.35,
// §18.36, §18.46), and the filehandle operations every COMPOUND starts from.
#include <gtest/gtest.h>

#include "nfs/v4/pseudo_fs.h"
#include "tests/unit/nfs4_ops_util.h"

namespace nfsrdmad::nfs::v4::testing {
namespace {

using Nfs4Session = Nfs4OpsFixture;

TEST_F(Nfs4Session, EstablishThenSequence) {
    reclaim_complete_ = false;  // the first SEQUENCE is this test's
    establish();
    Reply r = seq({op_putrootfh(), op_getfh()});
    ASSERT_TRUE(r.decoded);
    ASSERT_EQ(r.status(), x4::NFS4_OK);
    ASSERT_EQ(r.count(), 3u);
    const auto& sr = r.op(0).opsequence().sr_resok4();
    EXPECT_EQ(sr.sr_sessionid, sessionid_);
    EXPECT_EQ(sr.sr_sequenceid, 1u);
    // The root of the pseudo file system (the export is below it).
    auto fh = r.op(2).opgetfh().resok4().object;
    EXPECT_TRUE(is_pseudo_handle(fh));
}

TEST_F(Nfs4Session, OperationWithoutSequenceIsNotInSession) {
    Reply r = raw({op_putrootfh(), op_getfh()});
    ASSERT_TRUE(r.decoded);
    EXPECT_EQ(r.status(), x4::NFS4ERR_OP_NOT_IN_SESSION);
    EXPECT_EQ(r.count(), 1u);
}

TEST_F(Nfs4Session, UnknownSessionIsBadSession) {
    sessionid_ = {9, 9, 9};
    Reply r = seq({op_putrootfh()});
    ASSERT_TRUE(r.decoded);
    EXPECT_EQ(r.status(), x4::NFS4ERR_BADSESSION);
}

TEST_F(Nfs4Session, RetransmissionGetsTheCachedReply) {
    establish();
    Reply first = seq({op_putrootfh(), op_getfh()}, /*cachethis=*/true);
    ASSERT_EQ(first.status(), x4::NFS4_OK);
    --seqid_;  // the same slot and seqid again
    Reply again = seq({op_putrootfh(), op_getfh()}, true);
    EXPECT_EQ(*again.bytes, *first.bytes);
    // Not cached: a retransmission cannot be answered (§2.10.6.1.3).
    Reply second = seq({op_putrootfh()});
    ASSERT_EQ(second.status(), x4::NFS4_OK);
    --seqid_;
    Reply uncached = seq({op_putrootfh()});
    EXPECT_EQ(uncached.status(), x4::NFS4ERR_RETRY_UNCACHED_REP);
}

TEST_F(Nfs4Session, SeqidGapIsMisordered) {
    establish();
    ++seqid_;
    Reply r = seq({op_putrootfh()});
    EXPECT_EQ(r.status(), x4::NFS4ERR_SEQ_MISORDERED);
}

TEST_F(Nfs4Session, MoreOperationsThanTheChannelAllowsAreTooMany) {
    establish();  // ca_maxoperations 16
    std::vector<x4::nfs_argop4> ops(20, op_putrootfh());
    Reply r = seq(ops);
    ASSERT_TRUE(r.decoded);
    EXPECT_EQ(r.status(), x4::NFS4ERR_TOO_MANY_OPS);
    EXPECT_EQ(r.count(), 1u);
    // §18.46.3: an error of SEQUENCE leaves the slot as it was. The next seqid is
    // misordered; the same seqid carries the next request.
    EXPECT_EQ(seq({op_putrootfh()}).status(), x4::NFS4ERR_SEQ_MISORDERED);
    seqid_ -= 2;
    EXPECT_EQ(seq({op_putrootfh()}).status(), x4::NFS4_OK);
}

TEST_F(Nfs4Session, CreateSessionForAnUnknownClientIsStale) {
    Reply r = raw({op_create_session(0x1234, 1)});
    ASSERT_TRUE(r.decoded);
    EXPECT_EQ(r.status(), x4::NFS4ERR_STALE_CLIENTID);
}

TEST_F(Nfs4Session, PutfhChecksTheHandle) {
    establish();
    x4::nfs_argop4 put(x4::OP_PUTFH);
    const uint8_t junk[] = {1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11, 12, 13, 14, 15, 16};
    put.opputfh().object = junk;
    Reply r = seq({put, op_getfh()});
    ASSERT_TRUE(r.decoded);
    EXPECT_EQ(r.status(), x4::NFS4ERR_BADHANDLE);
    // A forged pseudo handle: the MAC does not match.
    auto fake = encode_pseudo_handle(vfs::HandleKey{}, 42);
    put.opputfh().object = fake.data();
    EXPECT_EQ(seq({put}).status(), x4::NFS4ERR_BADHANDLE);
}

TEST_F(Nfs4Session, SaveAndRestore) {
    establish();
    x4::nfs_argop4 put(x4::OP_PUTFH);
    auto root = exp_->root_handle();
    put.opputfh().object = root.data();
    Reply r = seq({put, op_savefh(), op_putrootfh(), op_restorefh(), op_getfh()});
    ASSERT_EQ(r.status(), x4::NFS4_OK);
    auto fh = r.op(5).opgetfh().resok4().object;
    EXPECT_TRUE(std::equal(fh.begin(), fh.end(), root.data().begin(), root.data().end()));
    // RESTOREFH with nothing saved.
    EXPECT_EQ(seq({op_putrootfh(), op_restorefh()}).status(), x4::NFS4ERR_NOFILEHANDLE);
}

}  // namespace
}  // namespace nfsrdmad::nfs::v4::testing
