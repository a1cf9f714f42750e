// The NFSv4.1 backchannel over TCP (RFC 8881 §2.10.3.1), from a raw client on the daemon's
// own connections (nfs4_fixture.h): CREATE_SESSION with CONN_BACK_CHAN is granted, and the
// daemon calls CB_NULL on that very connection, with the callback program and the
// AUTH_SYS credential the client gave; a refused probe or the back connection closing
// puts SEQ4_STATUS_CB_PATH_DOWN into SEQUENCE's flags, and BIND_CONN_TO_SESSION of
// another connection for both directions brings the path back (a new probe on it). A
// session without CONN_BACK_CHAN is never called.
#include "tests/e2e/nfs4_fixture.h"

#include <thread>

namespace nfsrdmad::e2e {
namespace {

constexpr uint32_t kCbProgram = 0x40000000;

class Nfs4Backchannel : public Nfs4DaemonTest {
  protected:
    // EXCHANGE_ID + CREATE_SESSION on conn_, asking for a backchannel (or not), with the
    // callback program and an AUTH_SYS credential for it.
    void Open(bool back_chan) {
        Establish({0, 65536, 65536, 4096, 8, 8, {}}, [&](x4::CREATE_SESSION4args& ca) {
            ca.csa_flags = back_chan ? x4::CREATE_SESSION4_FLAG_CONN_BACK_CHAN : 0;
            ca.csa_cb_program = kCbProgram;
            x4::callback_sec_parms4 sys(x4::AUTH_SYS);
            sys.cbsp_sys_cred().machinename = machine_;
            sys.cbsp_sys_cred().uid = 0;
            sys.cbsp_sys_cred().gid = 0;
            ca.csa_sec_parms.push_back(std::move(sys));
        });
        if (HasFatalFailure()) return;
        EXPECT_EQ(session_flags_ & x4::CREATE_SESSION4_FLAG_CONN_BACK_CHAN,
                  back_chan ? x4::CREATE_SESSION4_FLAG_CONN_BACK_CHAN : 0u);
    }

    // The next call the server sends on `c` (one kept while a reply was awaited first);
    // empty if none comes within `ms`.
    wire::Bytes NextCall(wire::Conn& c, int ms = 5000) {
        for (auto it = server_calls_.begin(); it != server_calls_.end(); ++it)
            if (it->first == &c) {
                wire::Bytes b = std::move(it->second);
                server_calls_.erase(it);
                return b;
            }
        wire::Bytes rec;
        std::string why;
        if (c.RecvRecord(&rec, ms, &why) != wire::Conn::Recv::kOk) return {};
        return rec;
    }
    // Checks it is CB_NULL of our program with AUTH_SYS, and answers with accept_stat.
    void AnswerCbNull(wire::Conn& c, const wire::Bytes& call, uint32_t accept_stat) {
        wire::XdrIn in(call);
        uint32_t xid = 0, type = 9, rpcvers = 0, prog = 0, vers = 0, proc = 9, flavor = 9;
        ASSERT_TRUE(in.u32(&xid) && in.u32(&type) && in.u32(&rpcvers) && in.u32(&prog) &&
                    in.u32(&vers) && in.u32(&proc) && in.u32(&flavor));
        EXPECT_EQ(type, wire::kCall);
        EXPECT_EQ(rpcvers, 2u);
        EXPECT_EQ(prog, kCbProgram);
        EXPECT_EQ(vers, 1u);
        EXPECT_EQ(proc, 0u);    // CB_NULL
        EXPECT_EQ(flavor, 1u);  // AUTH_SYS, as csa_sec_parms said
        wire::XdrOut r;
        r.u32(xid).u32(wire::kReply).u32(0).u32(0).u32(0).u32(accept_stat);
        std::string why;
        ASSERT_TRUE(c.SendRecord(r.take(), &why)) << why;
    }
    // SEQUENCE's status flags, on `c`.
    uint32_t Flags(wire::Conn* c = nullptr) {
        Res r = Compound({Sequence()}, c);
        EXPECT_EQ(r.status(), x4::NFS4_OK) << r.error;
        return r.status() == x4::NFS4_OK ? r.op(0).opsequence().sr_resok4().sr_status_flags : 0;
    }
    bool WaitFlags(uint32_t want, uint32_t mask, wire::Conn* c = nullptr) {
        for (int i = 0; i < 100; ++i) {
            if ((Flags(c) & mask) == want) return true;
            std::this_thread::sleep_for(std::chrono::milliseconds(50));
        }
        return false;
    }
    x4::nfs_argop4 Bind(x4::channel_dir_from_client4 dir) {
        x4::nfs_argop4 op(x4::OP_BIND_CONN_TO_SESSION);
        op.opbind_conn_to_session().bctsa_sessid = session_;
        op.opbind_conn_to_session().bctsa_dir = dir;
        op.opbind_conn_to_session().bctsa_use_conn_in_rdma_mode = false;
        return op;
    }

    std::string machine_ = "cbclient";
};

constexpr uint32_t kDown = x4::SEQ4_STATUS_CB_PATH_DOWN;

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
    std::this_thread::sleep_for(std::chrono::milliseconds(200));
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
    // The Linux client's answer to that flag: BIND_CONN_TO_SESSION on its connection.
    Res b = Compound({Bind(x4::CDFC4_BACK_OR_BOTH)});
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
    Res b = Compound({Bind(x4::CDFC4_BACK_OR_BOTH)});
    ASSERT_EQ(b.status(), x4::NFS4_OK) << b.error;
    EXPECT_TRUE(NextCall(*conn_, 500).empty());
    EXPECT_EQ(Flags() & kDown, 0u);
}

}  // namespace
}  // namespace nfsrdmad::e2e
