// nfs4_fixture.h — a raw NFSv4.1 client over TCP against the running daemon: every byte
// is encoded with the generated RFC 5662 codecs (xdr/nfs4_prot.h) and sent on a plain
// socket with record marking, so what is tested is the daemon as a client meets it (the
// registry, the auth stage, COMPOUND, sessions).
//
//   Nfs4DaemonTest: a daemon without a libnfs client, one connection (conn_);
//   Establish() runs EXCHANGE_ID + CREATE_SESSION, Sequence() is the next SEQUENCE on
//   slot 0, Compound({ops}) sends a COMPOUND, ToExport() walks PUTROOTFH to the export.
//
// Include this header before anything that includes libnfs: libnfs's RPC headers define
// AUTH_NONE and AUTH_SYS as macros, which would break the generated constants.
#pragma once

#include "xdr/nfs4_prot.h"

#include <gtest/gtest.h>

#include <deque>
#include <functional>
#include <memory>
#include <string>
#include <vector>

#include "tests/e2e/daemon_fixture.h"
#include "tests/e2e/rpc_wire.h"
#include "tests/shared/nfs4_ops.h"

namespace nfsrdmad::e2e {

namespace x4 = xdr::nfs4;
using namespace nfsrdmad::test_nfs4;  // op_putfh(), op_open(), ...

inline std::span<const uint8_t> view(const std::string& s) {
    return {reinterpret_cast<const uint8_t*>(s.data()), s.size()};
}

// A decoded COMPOUND4res and the bytes its views point into.
struct Res {
    std::string error;  // transport or RPC-level problem
    uint32_t accept_stat = 0;
    std::shared_ptr<wire::Bytes> bytes;
    x4::COMPOUND4res res;
    x4::nfsstat4 status() const { return res.status; }
    size_t count() const { return res.resarray.size(); }
    const x4::nfs_resop4& op(size_t i) const { return res.resarray.at(i); }
};

class Nfs4DaemonTest : public DaemonTest {
  protected:
    Nfs4DaemonTest() { mount_client_ = false; }
    // The daemon's YAML configuration.
    virtual std::string Yaml() { return "nfsv4: {enabled: true, lease_time: 10}\n"; }
    DaemonOptions Options() override {
        DaemonOptions o;
        o.config_yaml = Yaml();
        return o;
    }

    void SetUp() override {
        DaemonTest::SetUp();
        if (HasFatalFailure()) return;
        conn_ = Connect();
        ASSERT_NE(conn_, nullptr);
    }

    std::unique_ptr<wire::Conn> Connect() {
        std::string why;
        auto c = wire::Conn::Open(daemon_->nfs_port(), &why);
        EXPECT_NE(c, nullptr) << why;
        return c;
    }

    // One call of NFSv4 procedure `proc` with these argument bytes on `c`.
    wire::Reply Call(wire::Conn& c, uint32_t proc, wire::Bytes args) {
        return RpcCall(c, 100003, 4, proc, std::move(args));
    }
    // One call of any program (AUTH_SYS root) on `c`.
    wire::Reply RpcCall(wire::Conn& c, uint32_t prog, uint32_t vers, uint32_t proc,
                        wire::Bytes args) {
        wire::Reply r;
        std::string why;
        if (!c.SendRecord(
                wire::EncodeCall(wire::RootCall(++xid_, prog, vers, proc, std::move(args))),
                &why)) {
            r.parse_error = "send: " + why;
            return r;
        }
        wire::Bytes rec;
        for (;;) {
            if (c.RecvRecord(&rec, 10000, &why) != wire::Conn::Recv::kOk) {
                r.parse_error = "receive: " + why;
                return r;
            }
            // A call from the server (the backchannel) may come first: kept for the test.
            if (rec.size() >= 8 && rec[4] == 0 && rec[5] == 0 && rec[6] == 0 && rec[7] == 0) {
                server_calls_.emplace_back(&c, std::move(rec));
                continue;
            }
            return wire::ParseReply(rec);
        }
    }
    // Calls the server sent on a connection while a reply was awaited (backchannel).
    std::vector<std::pair<wire::Conn*, wire::Bytes>> server_calls_;

    Res CallBytes(wire::Conn& c, wire::Bytes args) { return ResOf(Call(c, 1, std::move(args))); }
    // A COMPOUND reply, decoded.
    static Res ResOf(wire::Reply r) {
        Res out;
        if (!r.parse_error.empty()) {
            out.error = r.parse_error;
            return out;
        }
        out.accept_stat = r.accept_stat;
        if (r.reply_stat != wire::kMsgAccepted || r.accept_stat != wire::kSuccess) {
            out.error = r.Describe();
            return out;
        }
        out.bytes = std::make_shared<wire::Bytes>(std::move(r.results));
        xdr::Decoder d(*out.bytes);
        if (!x4::xdr_decode(d, out.res) || d.remaining() != 0)
            out.error = "undecodable COMPOUND4res";
        return out;
    }

    static wire::Bytes Encode(std::vector<x4::nfs_argop4> ops, uint32_t minor = 1) {
        x4::COMPOUND4args a;
        a.minorversion = minor;
        a.argarray = std::move(ops);
        wire::Bytes b;
        xdr::Encoder e(b);
        x4::xdr_encode(e, a);
        return b;
    }

    Res Compound(std::vector<x4::nfs_argop4> ops, wire::Conn* c = nullptr, uint32_t minor = 1) {
        return CallBytes(c ? *c : *conn_, Encode(std::move(ops), minor));
    }

    x4::nfs_argop4 Sequence(bool cachethis = false, uint32_t slot = 0) {
        x4::nfs_argop4 op(x4::OP_SEQUENCE);
        auto& s = op.opsequence();
        s.sa_sessionid = session_;
        s.sa_sequenceid = ++seqid_;
        s.sa_slotid = slot;
        s.sa_highest_slotid = slot;
        s.sa_cachethis = cachethis;
        return op;
    }

    // EXCHANGE_ID + CREATE_SESSION with these fore channel attributes (and whatever else
    // `adjust` sets in CREATE_SESSION's arguments); the session Sequence() uses from then
    // on, its csr_flags in session_flags_.
    void Establish(x4::channel_attrs4 fore = {0, 1 << 20, 1 << 20, 8192, 16, 8, {}},
                   const std::function<void(x4::CREATE_SESSION4args&)>& adjust = {}) {
        x4::nfs_argop4 ex = op_exchange_id(view(owner_));
        ex.opexchange_id().eia_flags = x4::EXCHGID4_FLAG_USE_NON_PNFS;
        Res r1 = Compound({ex});
        ASSERT_EQ(r1.error, "");
        ASSERT_EQ(r1.status(), x4::NFS4_OK);
        const auto& er = r1.op(0).opexchange_id().eir_resok4();
        EXPECT_TRUE(er.eir_flags & x4::EXCHGID4_FLAG_USE_NON_PNFS);
        clientid_ = er.eir_clientid;

        x4::nfs_argop4 cs = op_create_session(er.eir_clientid, er.eir_sequenceid);
        auto& ca = cs.opcreate_session();
        ca.csa_fore_chan_attrs = fore;
        if (adjust) adjust(ca);
        Res r2 = Compound({cs});
        ASSERT_EQ(r2.error, "");
        ASSERT_EQ(r2.status(), x4::NFS4_OK);
        session_ = r2.op(0).opcreate_session().csr_resok4().csr_sessionid;
        fore_ = r2.op(0).opcreate_session().csr_resok4().csr_fore_chan_attrs;
        session_flags_ = r2.op(0).opcreate_session().csr_resok4().csr_flags;
        seqid_ = 0;
        // As the Linux client: RECLAIM_COMPLETE before any OPEN (RFC 8881 §18.51.3), unless
        // the test reclaims (reclaim_complete_ false).
        if (reclaim_complete_) {
            Res r3 = Compound({Sequence(), op_reclaim_complete()});
            ASSERT_EQ(r3.error, "");
            // COMPLETE_ALREADY: another session of a client that sent it.
            ASSERT_TRUE(r3.status() == x4::NFS4_OK || r3.status() == x4::NFS4ERR_COMPLETE_ALREADY)
                << r3.status();
        }
    }
    bool reclaim_complete_ = true;

    // PUTROOTFH and a LOOKUP per component of the export's path.
    std::vector<x4::nfs_argop4> ToExport() {
        std::vector<x4::nfs_argop4> ops{x4::nfs_argop4(x4::OP_PUTROOTFH)};
        std::string path = daemon_->export_dir();
        size_t at = 1;
        while (at < path.size()) {
            size_t end = path.find('/', at);
            if (end == std::string::npos) end = path.size();
            names_.push_back(path.substr(at, end - at));
            ops.push_back(op_lookup(view(names_.back())));
            at = end + 1;
        }
        return ops;
    }

    // The export root's filehandle (through the pseudo file system).
    wire::Bytes ExportHandle() {
        auto ops = ToExport();
        ops.insert(ops.begin(), Sequence());
        ops.push_back(op_getfh());
        Res r = Compound(ops);
        EXPECT_EQ(r.error, "");
        EXPECT_EQ(r.status(), x4::NFS4_OK);
        if (r.status() != x4::NFS4_OK || r.count() != ops.size()) return {};
        auto fh = r.op(ops.size() - 1).opgetfh().resok4().object;
        return wire::Bytes(fh.begin(), fh.end());
    }

    std::unique_ptr<wire::Conn> conn_;
    uint32_t xid_ = 0;
    std::string owner_ = "e2e-nfs4-client";
    uint64_t clientid_ = 0;
    x4::sessionid4 session_{};
    x4::channel_attrs4 fore_{};  // as CREATE_SESSION granted it
    uint32_t session_flags_ = 0;  // csr_flags of that CREATE_SESSION
    uint32_t seqid_ = 0;
    std::deque<std::string> names_;
};

}  // namespace nfsrdmad::e2e
