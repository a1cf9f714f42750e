// Client and session corner cases through Nfs4Program, the ones a conformance suite (pynfs's
// server41tests: CSESS15, CSESS27, CSESS29, DSESS9004) probes: CREATE_SESSION's flags and
// back channel (RFC 8881 §18.36.3), DESTROY_SESSION's place in the COMPOUND (§18.37.3), a
// slot whose reply is too big to cache even as an error (§2.10.6.4), and the session
// operations this server answers without offering what they control: BACKCHANNEL_CTL
// (§18.33), SET_SSV (§18.47), DELEGPURGE (§18.5).
#include <gtest/gtest.h>

#include "tests/unit/nfs4_ops_util.h"

namespace nfsrdmad::nfs::v4::testing {
namespace {

class Nfs4Clients : public Nfs4OpsFixture {
  protected:
    // EXCHANGE_ID for `owner`; remembers the client ID and the csa_sequence to use.
    void exchange(const std::string& owner) {
        Reply r = raw({op_exchange_id(keep(owner), {8, 7, 6, 5, 4, 3, 2, 1})});
        ASSERT_TRUE(r.decoded);
        ASSERT_EQ(r.status(), x4::NFS4_OK);
        clientid_ = r.op(0).opexchange_id().eir_resok4().eir_clientid;
        cs_sequence_ = r.op(0).opexchange_id().eir_resok4().eir_sequenceid;
    }

    // The channel attributes pynfs sends by default.
    static x4::channel_attrs4 chan(uint32_t req = 8192, uint32_t resp = 8192,
                                   uint32_t cached = 8192, uint32_t ops = 128, uint32_t reqs = 8) {
        return {0, req, resp, cached, ops, reqs, {}};
    }

    x4::nfs_argop4 create_session(uint32_t flags, const x4::channel_attrs4& fore,
                                  const x4::channel_attrs4& back) {
        x4::nfs_argop4 cs(x4::OP_CREATE_SESSION);
        auto& ca = cs.opcreate_session();
        ca.csa_clientid = clientid_;
        ca.csa_sequence = cs_sequence_;
        ca.csa_flags = flags;
        ca.csa_fore_chan_attrs = fore;
        ca.csa_back_chan_attrs = back;
        ca.csa_cb_program = 0x40000000;
        return cs;
    }

    // A CREATE_SESSION that must succeed: the session seq() uses from then on.
    void session(const x4::channel_attrs4& fore) {
        Reply r = raw({create_session(0, fore, chan())});
        ASSERT_TRUE(r.decoded);
        ASSERT_EQ(r.status(), x4::NFS4_OK);
        sessionid_ = r.op(0).opcreate_session().csr_resok4().csr_sessionid;
        seqid_ = 0;
        ++cs_sequence_;
    }

    x4::nfs_argop4 destroy_session() {
        x4::nfs_argop4 op(x4::OP_DESTROY_SESSION);
        op.opdestroy_session().dsa_sessionid = sessionid_;
        return op;
    }

    uint32_t cs_sequence_ = 0;
};

// pynfs CSESS15: csa_flags 0xf has a bit §18.36.1 does not define.
TEST_F(Nfs4Clients, CreateSessionWithAnUndefinedFlagIsInval) {
    exchange("undefined-flag");
    Reply bad = raw({create_session(0xf, chan(), chan())});
    ASSERT_TRUE(bad.decoded);
    EXPECT_EQ(bad.status(), x4::NFS4ERR_INVAL);
    // Nothing changed: the same csa_sequence with the defined flags is a new request, and
    // the flags this server does not grant come back cleared.
    Reply ok = raw(
        {create_session(x4::CREATE_SESSION4_FLAG_PERSIST | x4::CREATE_SESSION4_FLAG_CONN_BACK_CHAN |
                            x4::CREATE_SESSION4_FLAG_CONN_RDMA,
                        chan(), chan())});
    ASSERT_TRUE(ok.decoded);
    ASSERT_EQ(ok.status(), x4::NFS4_OK);
    EXPECT_EQ(ok.op(0).opcreate_session().csr_resok4().csr_flags, 0u);
}

// pynfs CSESS29: a back channel that could never carry a CB_COMPOUND is TOOSMALL, every
// time (the slot is not used up), and a good one afterwards gets the session.
TEST_F(Nfs4Clients, CreateSessionWithATooSmallBackChannelIsTooSmall) {
    exchange("small-back-channel");
    for (int i = 0; i < 3; ++i) {
        Reply r = raw({create_session(0, chan(), chan(10, 8192, 8192, 128, 1))});
        ASSERT_TRUE(r.decoded);
        EXPECT_EQ(r.status(), x4::NFS4ERR_TOOSMALL);
    }
    Reply ops = raw({create_session(0, chan(), chan(8192, 8192, 8192, 1, 1))});
    EXPECT_EQ(ops.status(), x4::NFS4ERR_TOOSMALL);
    Reply resp = raw({create_session(0, chan(), chan(8192, 16, 8192, 2, 1))});
    EXPECT_EQ(resp.status(), x4::NFS4ERR_TOOSMALL);
    Reply ok = raw({create_session(0, chan(), chan())});
    ASSERT_TRUE(ok.decoded);
    EXPECT_EQ(ok.status(), x4::NFS4_OK);
}

// pynfs DSESS9004: after a SEQUENCE of the same session, DESTROY_SESSION must be last.
TEST_F(Nfs4Clients, DestroySessionNotLastAfterItsSequenceIsNotOnlyOp) {
    establish();
    Reply r = seq({destroy_session(), op_putrootfh()});
    ASSERT_TRUE(r.decoded);
    EXPECT_EQ(r.status(), x4::NFS4ERR_NOT_ONLY_OP);
    ASSERT_EQ(r.count(), 2u);
    // The session lives on; as the last operation it is destroyed.
    ASSERT_EQ(seq({op_putrootfh()}).status(), x4::NFS4_OK);
    Reply last = seq({op_putrootfh(), destroy_session()});
    ASSERT_TRUE(last.decoded);
    EXPECT_EQ(last.status(), x4::NFS4_OK);
    EXPECT_EQ(seq({op_putrootfh()}).status(), x4::NFS4ERR_BADSESSION);
}

// pynfs CSESS27: ca_maxresponsesize_cached of 10 bytes cannot hold even the error reply.
// The slot is freed all the same: a retransmission is RETRY_UNCACHED_REP (not DELAY for
// ever) and the session can be destroyed.
TEST_F(Nfs4Clients, ReplyTooBigToCacheEvenAsAnErrorFreesTheSlot) {
    exchange("tiny-cache");
    session(chan(8192, 8192, 10));
    Reply r = seq({}, /*cachethis=*/true);
    ASSERT_TRUE(r.decoded);
    EXPECT_EQ(r.status(), x4::NFS4ERR_REP_TOO_BIG_TO_CACHE);
    --seqid_;
    Reply again = seq({}, true);
    ASSERT_TRUE(again.decoded);
    EXPECT_EQ(again.status(), x4::NFS4ERR_RETRY_UNCACHED_REP);
    Reply next = seq({op_putrootfh()});
    EXPECT_EQ(next.status(), x4::NFS4_OK);
    EXPECT_EQ(raw({destroy_session()}).status(), x4::NFS4_OK);
}

// BACKCHANNEL_CTL (§18.33.3): needs a SEQUENCE; AUTH_NONE/AUTH_SYS are taken, an RPCSEC_GSS
// handle does not exist here (NOENT). It is in the §17 REQUIRED list: never OP_ILLEGAL.
TEST_F(Nfs4Clients, BackchannelCtlReplacesTheCallbackSecurity) {
    x4::nfs_argop4 ctl(x4::OP_BACKCHANNEL_CTL);
    ctl.opbackchannel_ctl().bca_cb_program = 0x40000001;
    ctl.opbackchannel_ctl().bca_sec_parms.emplace_back(x4::AUTH_SYS);
    ctl.opbackchannel_ctl().bca_sec_parms.back().cbsp_sys_cred().machinename = "client";

    Reply alone = raw({ctl});
    ASSERT_TRUE(alone.decoded);
    EXPECT_EQ(alone.status(), x4::NFS4ERR_OP_NOT_IN_SESSION);

    establish();
    Reply ok = seq({ctl});
    ASSERT_TRUE(ok.decoded);
    EXPECT_EQ(ok.status(), x4::NFS4_OK);
    ASSERT_EQ(ok.count(), 2u);
    EXPECT_EQ(ok.op(1).resop(), x4::OP_BACKCHANNEL_CTL);

    x4::nfs_argop4 gss(x4::OP_BACKCHANNEL_CTL);
    gss.opbackchannel_ctl().bca_cb_program = 0x40000001;
    auto& h = gss.opbackchannel_ctl().bca_sec_parms.emplace_back(x4::RPCSEC_GSS);
    h.cbsp_gss_handles().gcbp_service = x4::RPC_GSS_SVC_NONE;
    Reply noent = seq({gss});
    ASSERT_TRUE(noent.decoded);
    EXPECT_EQ(noent.status(), x4::NFS4ERR_NOENT);

    // An RPCSEC_GSS entry beside one this server can use is passed over, wherever it
    // stands (pynfs CSESS16, CSESS16a send such lists).
    x4::nfs_argop4 mixed(x4::OP_BACKCHANNEL_CTL);
    mixed.opbackchannel_ctl().bca_cb_program = 0x40000001;
    auto& m = mixed.opbackchannel_ctl().bca_sec_parms;
    m.emplace_back(x4::RPCSEC_GSS).cbsp_gss_handles().gcbp_service = x4::RPC_GSS_SVC_NONE;
    m.emplace_back(x4::AUTH_SYS).cbsp_sys_cred().machinename = "client";
    Reply passed = seq({mixed});
    ASSERT_TRUE(passed.decoded);
    EXPECT_EQ(passed.status(), x4::NFS4_OK);
}

// pynfs CSESS16 and CSESS16a: csa_sec_parms lists AUTH_NONE, AUTH_SYS and RPCSEC_GSS (in two
// orders); the server takes one it can use (§18.36.3) and the session is made.
TEST_F(Nfs4Clients, CreateSessionPassesOverAnRpcsecGssCallbackFlavor) {
    auto gss = [](std::vector<x4::callback_sec_parms4>& l) {
        l.emplace_back(x4::RPCSEC_GSS).cbsp_gss_handles().gcbp_service = x4::RPC_GSS_SVC_NONE;
    };
    for (bool gss_second : {false, true}) {
        SCOPED_TRACE(gss_second ? "NONE, GSS, SYS" : "NONE, SYS, GSS");
        exchange(gss_second ? "gss-second" : "gss-last");
        x4::nfs_argop4 cs = create_session(0, chan(), chan());
        auto& l = cs.opcreate_session().csa_sec_parms;
        l.emplace_back(x4::AUTH_NONE);
        if (gss_second) gss(l);
        l.emplace_back(x4::AUTH_SYS).cbsp_sys_cred().machinename = "client";
        if (!gss_second) gss(l);
        Reply r = raw({cs});
        ASSERT_TRUE(r.decoded);
        EXPECT_EQ(r.status(), x4::NFS4_OK);
    }
}

// SET_SSV (§18.47.3): the client ID was not made with SP4_SSV (this server grants none), so
// INVAL. DELEGPURGE (§18.5.3): not offered, NOTSUPP.
TEST_F(Nfs4Clients, SetSsvIsInvalAndDelegpurgeNotsupp) {
    establish();
    x4::nfs_argop4 ssv(x4::OP_SET_SSV);
    Reply r = seq({ssv});
    ASSERT_TRUE(r.decoded);
    EXPECT_EQ(r.status(), x4::NFS4ERR_INVAL);
    ASSERT_EQ(r.count(), 2u);
    EXPECT_EQ(r.op(1).resop(), x4::OP_SET_SSV);

    x4::nfs_argop4 purge(x4::OP_DELEGPURGE);
    Reply p = seq({purge});
    ASSERT_TRUE(p.decoded);
    EXPECT_EQ(p.status(), x4::NFS4ERR_NOTSUPP);
    ASSERT_EQ(p.count(), 2u);
    EXPECT_EQ(p.op(1).resop(), x4::OP_DELEGPURGE);
}

}  // namespace
}  // namespace nfsrdmad::nfs::v4::testing
