// The NFSv4.1 backchannel over TCP (RFC 8881 §2.10.3.1), from a raw client on the daemon's
// own connections (nfs4_fixture.h): CREATE_SESSION with CONN_BACK_CHAN is granted, and the
// daemon calls CB_NULL on that very connection, with the callback program and the
// AUTH_SYS credential the client gave; a refused probe or the back connection closing
// puts SEQ4_STATUS_CB_PATH_DOWN into SEQUENCE's flags, and BIND_CONN_TO_SESSION of
// another connection for both directions brings the path back (a new probe on it). A
// session without CONN_BACK_CHAN is never called.
#include "tests/e2e/nfs4_callback_fixture.h"

namespace nfsrdmad::e2e {
namespace {

using Nfs4Backchannel = Nfs4CallbackTest;

TEST_F(Nfs4Backchannel, CbNullOnTheSameConnectionThenTheSessionWorks) {
    Open(true);
    if (HasFatalFailure()) return;
    wire::Bytes call = NextCall(*conn_);
    ASSERT_FALSE(call.empty()) << "no CB_NULL on the session's connection";
    AnswerCbNull(*conn_, call, 0);
    if (HasFatalFailure()) return;
    // The fore channel goes on, and the path is not down; no second probe for a second
    // session of the same client (its path is up).
    EXPECT_EQ(Flags() & kDown, 0u);
    ASSERT_TRUE(WaitPathsUp(1)) << "the callback path never came up";
    EXPECT_EQ(Flags() & kDown, 0u);
    Open(true);
    if (HasFatalFailure()) return;
    EXPECT_TRUE(NextCall(*conn_, 500).empty()) << "a probe per session";
}

TEST_F(Nfs4Backchannel, ARefusedProbeIsPathDownUntilAnotherConnectionIsBound) {
    Open(true);
    if (HasFatalFailure()) return;
    wire::Bytes call = NextCall(*conn_);
    ASSERT_FALSE(call.empty());
    AnswerCbNull(*conn_, call, 1);  // PROG_UNAVAIL: no callback service here
    if (HasFatalFailure()) return;
    ASSERT_TRUE(WaitFlags(kDown, kDown)) << "SEQ4_STATUS_CB_PATH_DOWN never set";
    // A second connection bound for both directions: probed, answered, the path is up.
    auto c2 = Connect();
    ASSERT_NE(c2, nullptr);
    Res b = Compound({Bind(x4::CDFC4_FORE_OR_BOTH)}, c2.get());
    ASSERT_EQ(b.status(), x4::NFS4_OK) << b.error;
    EXPECT_EQ(b.op(0).opbind_conn_to_session().bctsr_resok4().bctsr_dir, x4::CDFS4_BOTH);
    wire::Bytes again = NextCall(*c2);
    ASSERT_FALSE(again.empty()) << "no CB_NULL on the newly bound connection";
    AnswerCbNull(*c2, again, 0);
    if (HasFatalFailure()) return;
    EXPECT_TRUE(WaitFlags(0, kDown, c2.get())) << "the path stayed down";
}

TEST_F(Nfs4Backchannel, TheBackConnectionClosingIsPathDown) {
    auto first = Connect();
    ASSERT_NE(first, nullptr);
    std::swap(conn_, first);  // the session is made on `first`
    Open(true);
    if (HasFatalFailure()) return;
    wire::Bytes call = NextCall(*conn_);
    ASSERT_FALSE(call.empty());
    AnswerCbNull(*conn_, call, 0);
    std::swap(conn_, first);
    EXPECT_EQ(Flags() & kDown, 0u);  // conn_ joins the fore channel
    first.reset();                   // the back connection goes
    ASSERT_TRUE(WaitFlags(kDown, kDown)) << "a closed back connection left the path up";
    // The Linux client's answer to that flag: BIND_CONN_TO_SESSION(FORE_OR_BOTH) on its
    // connection, already fore-bound (BACK_OR_BOTH there would change its channels:
    // NFS4ERR_INVAL, §18.34.3).
    Res bad = Compound({Bind(x4::CDFC4_BACK_OR_BOTH)});
    EXPECT_EQ(bad.status(), x4::NFS4ERR_INVAL) << bad.error;
    Res b = Compound({Bind(x4::CDFC4_FORE_OR_BOTH)});
    ASSERT_EQ(b.status(), x4::NFS4_OK) << b.error;
    wire::Bytes again = NextCall(*conn_);
    ASSERT_FALSE(again.empty());
    AnswerCbNull(*conn_, again, 0);
    EXPECT_TRUE(WaitFlags(0, kDown));
}

TEST_F(Nfs4Backchannel, NoBackChannelAskedNoCalls) {
    Open(false);
    if (HasFatalFailure()) return;
    EXPECT_EQ(Flags() & kDown, 0u);
    EXPECT_TRUE(NextCall(*conn_, 500).empty()) << "a call to a client without a backchannel";
    // Bound for the back channel of a session that has none: nothing to probe.
    Res b = Compound({Bind(x4::CDFC4_FORE_OR_BOTH)});
    ASSERT_EQ(b.status(), x4::NFS4_OK) << b.error;
    EXPECT_TRUE(NextCall(*conn_, 500).empty());
    EXPECT_EQ(Flags() & kDown, 0u);
}

}  // namespace
}  // namespace nfsrdmad::e2e
