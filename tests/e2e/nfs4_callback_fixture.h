// nfs4_callback_fixture.h — a raw NFSv4.1 client that takes calls on its backchannel
// (RFC 8881 §2.10.3.1): sessions made with CONN_BACK_CHAN and the callback program, the
// server's calls read off the connection (CB_NULL answered, CB_COMPOUND decoded and
// answered as the test says), and SEQUENCE's status flags watched.
#pragma once

#include "tests/e2e/nfs4_fixture.h"

#include <functional>
#include <thread>

namespace nfsrdmad::e2e {

inline constexpr uint32_t kDown = x4::SEQ4_STATUS_CB_PATH_DOWN;

inline constexpr uint32_t kCbProgram = 0x40000000;

class Nfs4CallbackTest : public Nfs4DaemonTest {
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
    // Waits until the daemon has logged `n` callback paths up (nfs/v4/callback/path.cpp):
    // the CB_NULL answer is taken on a worker after the client sent it, and the path is
    // not up (no delegation, a second probe) until then.
    bool WaitPathsUp(size_t n) {
        for (int i = 0; i < 500; ++i) {  // 10 s
            std::string log;
            size_t seen = 0;
            if (ReadFile(daemon_->log_path(), &log))
                for (size_t at = log.find(kPathUp); at != std::string::npos;
                     at = log.find(kPathUp, at + 1))
                    ++seen;
            if (seen >= n) return true;
            std::this_thread::sleep_for(std::chrono::milliseconds(20));
        }
        return false;
    }
    static constexpr const char* kPathUp = " up (CB_NULL on connection ";
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

    // A CB_COMPOUND call the server sent, decoded (RFC 8881 §19.2).
    struct CbCall {
        uint32_t xid = 0, prog = 0, proc = 0, flavor = 0;
        std::shared_ptr<wire::Bytes> bytes;  // what the views in args point into
        x4::CB_COMPOUND4args args;
    };
    // Parses `call` as an RPC call of CB_COMPOUND; false (with a failure) otherwise.
    bool ParseCbCompound(const wire::Bytes& call, CbCall& out) {
        wire::XdrIn in(call);
        uint32_t type = 9, rpcvers = 0, vers = 0, cred_len = 0, verf_flavor = 0;
        wire::Bytes skip;
        if (!(in.u32(&out.xid) && in.u32(&type) && in.u32(&rpcvers) && in.u32(&out.prog) &&
              in.u32(&vers) && in.u32(&out.proc) && in.u32(&out.flavor) && in.opaque(&skip, 400) &&
              in.u32(&verf_flavor) && in.opaque(&skip, 400))) {
            ADD_FAILURE() << "not an RPC call";
            return false;
        }
        (void)cred_len;
        EXPECT_EQ(type, wire::kCall);
        EXPECT_EQ(out.prog, kCbProgram);
        EXPECT_EQ(vers, 1u);
        if (out.proc != 1) {
            ADD_FAILURE() << "procedure " << out.proc << ", not CB_COMPOUND";
            return false;
        }
        out.bytes = std::make_shared<wire::Bytes>(call.begin() + in.offset(), call.end());
        xdr::Decoder d(*out.bytes);
        if (!x4::xdr_decode(d, out.args) || d.remaining() != 0) {
            ADD_FAILURE() << "CB_COMPOUND4args do not decode";
            return false;
        }
        return true;
    }
    // The next call on `c`, which must be a CB_COMPOUND.
    bool NextCbCompound(wire::Conn& c, CbCall& out, int ms = 5000) {
        wire::Bytes call = NextCall(c, ms);
        if (call.empty()) {
            ADD_FAILURE() << "no call from the server within " << ms << " ms";
            return false;
        }
        return ParseCbCompound(call, out);
    }
    // Answers `call` with `status` for the compound and CB_SEQUENCE answered OK; every other
    // operation's result is made by `fill` (from its arguments).
    using CbFill = std::function<void(const x4::nfs_cb_argop4&, x4::nfs_cb_resop4&)>;
    void AnswerCb(wire::Conn& c, const CbCall& call, x4::nfsstat4 status, const CbFill& fill) {
        x4::CB_COMPOUND4res res;
        res.status = status;
        for (const auto& op : call.args.argarray) {
            x4::nfs_cb_resop4 r(op.argop());
            if (op.argop() == x4::OP_CB_SEQUENCE) {
                r.opcbsequence().set_csr_status(x4::NFS4_OK);
                auto& ok = r.opcbsequence().csr_resok4();
                const auto& a = op.opcbsequence();
                ok.csr_sessionid = a.csa_sessionid;
                ok.csr_sequenceid = a.csa_sequenceid;
                ok.csr_slotid = a.csa_slotid;
                ok.csr_highest_slotid = a.csa_highest_slotid;
                ok.csr_target_highest_slotid = a.csa_highest_slotid;
            } else {
                fill(op, r);
            }
            res.resarray.push_back(std::move(r));
        }
        wire::Bytes body;
        xdr::Encoder e(body);
        x4::xdr_encode(e, res);
        wire::XdrOut r;
        r.u32(call.xid).u32(wire::kReply).u32(0).u32(0).u32(0).u32(0).raw(body);
        std::string why;
        ASSERT_TRUE(c.SendRecord(r.take(), &why)) << why;
    }
    // Answers `call` with `status` for the compound, CB_SEQUENCE answered OK and every
    // other operation answered with `status`.
    void AnswerCbCompound(wire::Conn& c, const CbCall& call, x4::nfsstat4 status) {
        AnswerCb(c, call, status, [&](const x4::nfs_cb_argop4& op, x4::nfs_cb_resop4& r) {
            if (op.argop() == x4::OP_CB_RECALL) r.opcbrecall().status = status;
        });
    }

    // Another client identity on its own connection: the fixture's client fields are
    // swapped with these (Swap), so Establish(), Sequence() and Compound() act as it.
    struct Identity {
        std::unique_ptr<wire::Conn> conn;
        std::string owner;
        uint64_t clientid = 0;
        x4::sessionid4 session{};
        uint32_t seqid = 0, flags = 0;
    };
    void Swap(Identity& o) {
        std::swap(conn_, o.conn);
        std::swap(owner_, o.owner);
        std::swap(clientid_, o.clientid);
        std::swap(session_, o.session);
        std::swap(seqid_, o.seqid);
        std::swap(session_flags_, o.flags);
    }

    std::string machine_ = "cbclient";
};

}  // namespace nfsrdmad::e2e
