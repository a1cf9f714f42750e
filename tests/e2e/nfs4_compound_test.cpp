// NFSv4.1 COMPOUNDs against the running daemon over TCP, from a raw client: every byte
// is encoded with the generated RFC 5662 codecs (xdr/nfs4_prot.h) and sent on a plain
// socket, so what is tested is the daemon as a client meets it — the registry (v3 and
// v4 under one program number), record marking, the auth stage, COMPOUND, sessions.
//
//   minor version 2                       -> NFS4ERR_MINOR_VERS_MISMATCH, no results
//   an operation outside a session        -> NFS4ERR_OP_NOT_IN_SESSION
//   EXCHANGE_ID, CREATE_SESSION, SEQUENCE -> a session other connections can use
//   the export's path from PUTROOTFH      -> the pseudo file system, fsid changes there
//   OPEN/WRITE/READ/CLOSE                 -> the data, READ spliced (the tcp counter)
//   a retransmission (cachethis)          -> the same bytes
//   an unknown op, truncated arguments    -> OP_ILLEGAL, BADXDR
//   DESTROY_SESSION, then SEQUENCE        -> NFS4ERR_BADSESSION
// First: libnfs's RPC headers define AUTH_NONE and AUTH_SYS as macros, which would
// break the generated constants of the same names.
#include "xdr/nfs4_prot.h"

#include <gtest/gtest.h>

#include <cstring>
#include <deque>
#include <memory>
#include <string>
#include <vector>

#include "tests/e2e/daemon_fixture.h"
#include "tests/e2e/rpc_wire.h"

namespace nfsrdmad::e2e {
namespace {

namespace x4 = xdr::nfs4;
using wire::Bytes;

std::span<const uint8_t> view(const std::string& s) {
    return {reinterpret_cast<const uint8_t*>(s.data()), s.size()};
}

// A decoded COMPOUND4res and the bytes its views point into.
struct Res {
    std::string error;  // transport or RPC-level problem
    uint32_t accept_stat = 0;
    std::shared_ptr<Bytes> bytes;
    x4::COMPOUND4res res;
    x4::nfsstat4 status() const { return res.status; }
    const x4::nfs_resop4& op(size_t i) const { return res.resarray.at(i); }
};

class Nfs4Compound : public DaemonTest {
  protected:
    Nfs4Compound() { mount_client_ = false; }
    DaemonOptions Options() override {
        DaemonOptions o;
        o.config_yaml = "nfsv4: {enabled: true, lease_time: 10}\n";
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
    wire::Reply Call(wire::Conn& c, uint32_t proc, Bytes args) {
        wire::Reply r;
        std::string why;
        if (!c.SendRecord(
                wire::EncodeCall(wire::RootCall(++xid_, 100003, 4, proc, std::move(args))), &why)) {
            r.parse_error = "send: " + why;
            return r;
        }
        Bytes rec;
        if (c.RecvRecord(&rec, 10000, &why) != wire::Conn::Recv::kOk) {
            r.parse_error = "receive: " + why;
            return r;
        }
        return wire::ParseReply(rec);
    }

    Res CallBytes(wire::Conn& c, Bytes args) {
        Res out;
        wire::Reply r = Call(c, 1, std::move(args));
        if (!r.parse_error.empty()) {
            out.error = r.parse_error;
            return out;
        }
        out.accept_stat = r.accept_stat;
        if (r.reply_stat != wire::kMsgAccepted || r.accept_stat != wire::kSuccess) {
            out.error = r.Describe();
            return out;
        }
        out.bytes = std::make_shared<Bytes>(std::move(r.results));
        xdr::Decoder d(*out.bytes);
        if (!x4::xdr_decode(d, out.res) || d.remaining() != 0)
            out.error = "undecodable COMPOUND4res";
        return out;
    }

    static Bytes Encode(std::vector<x4::nfs_argop4> ops, uint32_t minor = 1) {
        x4::COMPOUND4args a;
        a.minorversion = minor;
        a.argarray = std::move(ops);
        Bytes b;
        xdr::Encoder e(b);
        x4::xdr_encode(e, a);
        return b;
    }

    Res Compound(std::vector<x4::nfs_argop4> ops, wire::Conn* c = nullptr, uint32_t minor = 1) {
        return CallBytes(c ? *c : *conn_, Encode(std::move(ops), minor));
    }

    x4::nfs_argop4 Sequence(bool cachethis = false) {
        x4::nfs_argop4 op(x4::OP_SEQUENCE);
        auto& s = op.opsequence();
        s.sa_sessionid = session_;
        s.sa_sequenceid = ++seqid_;
        s.sa_slotid = 0;
        s.sa_highest_slotid = 0;
        s.sa_cachethis = cachethis;
        return op;
    }

    // EXCHANGE_ID + CREATE_SESSION; the session Sequence() uses from then on.
    void Establish() {
        x4::nfs_argop4 ex(x4::OP_EXCHANGE_ID);
        auto& ea = ex.opexchange_id();
        ea.eia_clientowner.co_ownerid = view(owner_);
        ea.eia_clientowner.co_verifier = {1, 2, 3, 4, 5, 6, 7, 8};
        ea.eia_flags = x4::EXCHGID4_FLAG_USE_NON_PNFS;
        ea.eia_state_protect.set_spa_how(x4::SP4_NONE);
        Res r1 = Compound({ex});
        ASSERT_EQ(r1.error, "");
        ASSERT_EQ(r1.status(), x4::NFS4_OK);
        const auto& er = r1.op(0).opexchange_id().eir_resok4();
        EXPECT_TRUE(er.eir_flags & x4::EXCHGID4_FLAG_USE_NON_PNFS);

        x4::nfs_argop4 cs(x4::OP_CREATE_SESSION);
        auto& ca = cs.opcreate_session();
        ca.csa_clientid = er.eir_clientid;
        ca.csa_sequence = er.eir_sequenceid;
        ca.csa_fore_chan_attrs = {0, 1 << 20, 1 << 20, 8192, 16, 8, {}};
        ca.csa_back_chan_attrs = {0, 4096, 4096, 0, 2, 1, {}};
        Res r2 = Compound({cs});
        ASSERT_EQ(r2.error, "");
        ASSERT_EQ(r2.status(), x4::NFS4_OK);
        session_ = r2.op(0).opcreate_session().csr_resok4().csr_sessionid;
        seqid_ = 0;
    }

    // PUTROOTFH and a LOOKUP per component of the export's path.
    std::vector<x4::nfs_argop4> ToExport() {
        std::vector<x4::nfs_argop4> ops{x4::nfs_argop4(x4::OP_PUTROOTFH)};
        std::string path = daemon_->export_dir();
        size_t at = 1;
        while (at < path.size()) {
            size_t end = path.find('/', at);
            if (end == std::string::npos) end = path.size();
            names_.push_back(path.substr(at, end - at));
            x4::nfs_argop4 op(x4::OP_LOOKUP);
            op.oplookup().objname = view(names_.back());
            ops.push_back(op);
            at = end + 1;
        }
        return ops;
    }

    x4::nfs_argop4 Getattr(std::initializer_list<uint32_t> attrs) {
        x4::nfs_argop4 op(x4::OP_GETATTR);
        auto& m = op.opgetattr().attr_request;
        for (uint32_t a : attrs) {
            if (m.size() <= a / 32) m.resize(a / 32 + 1);
            m[a / 32] |= 1u << (a % 32);
        }
        return op;
    }

    std::unique_ptr<wire::Conn> conn_;
    uint32_t xid_ = 0;
    std::string owner_ = "e2e-nfs4-client";
    x4::sessionid4 session_{};
    uint32_t seqid_ = 0;
    std::deque<std::string> names_;
};

TEST_F(Nfs4Compound, NullAndMinorVersionMismatch) {
    wire::Reply n = Call(*conn_, 0, {});
    ASSERT_EQ(n.parse_error, "");
    EXPECT_EQ(n.accept_stat, wire::kSuccess);
    EXPECT_TRUE(n.results.empty());

    Res r = Compound({x4::nfs_argop4(x4::OP_PUTROOTFH)}, nullptr, 2);
    ASSERT_EQ(r.error, "");
    EXPECT_EQ(r.status(), x4::NFS4ERR_MINOR_VERS_MISMATCH);
    EXPECT_TRUE(r.res.resarray.empty());
    // NFSv3 still answers under the same program number.
    wire::Reply v3 =
        wire::RoundTrip(daemon_->nfs_port(), wire::EncodeCall(wire::RootCall(99, 100003, 3, 0)));
    EXPECT_EQ(v3.accept_stat, wire::kSuccess) << v3.Describe();
}

TEST_F(Nfs4Compound, OutsideASessionOnlyTheSessionOpsRun) {
    Res r = Compound({x4::nfs_argop4(x4::OP_PUTROOTFH), x4::nfs_argop4(x4::OP_GETFH)});
    ASSERT_EQ(r.error, "");
    EXPECT_EQ(r.status(), x4::NFS4ERR_OP_NOT_IN_SESSION);
    EXPECT_EQ(r.res.resarray.size(), 1u);
}

TEST_F(Nfs4Compound, SessionWalksToTheExportOnAnyConnection) {
    Establish();
    if (HasFatalFailure()) return;
    auto ops = ToExport();
    ops.insert(ops.begin(), Sequence());
    ops.push_back(x4::nfs_argop4(x4::OP_GETFH));
    ops.push_back(Getattr({x4::FATTR4_TYPE, x4::FATTR4_FSID}));
    Res r = Compound(ops);
    ASSERT_EQ(r.error, "");
    ASSERT_EQ(r.status(), x4::NFS4_OK);
    EXPECT_EQ(r.res.resarray.size(), ops.size());

    // The session is not the connection's: a second connection uses it (the next seqid).
    auto other = Connect();
    ASSERT_NE(other, nullptr);
    Res again = Compound({Sequence(), x4::nfs_argop4(x4::OP_PUTROOTFH)}, other.get());
    ASSERT_EQ(again.error, "");
    EXPECT_EQ(again.status(), x4::NFS4_OK);
}

TEST_F(Nfs4Compound, OpenWriteReadCloseAndTheReadIsSpliced) {
    Establish();
    if (HasFatalFailure()) return;
    std::string name = "v4file", owner = "open-owner-1";
    std::string data(200000, '\0');
    for (size_t i = 0; i < data.size(); ++i) data[i] = char('a' + i % 23);

    auto ops = ToExport();
    ops.insert(ops.begin(), Sequence());
    x4::nfs_argop4 open(x4::OP_OPEN);
    auto& o = open.opopen();
    o.share_access = x4::OPEN4_SHARE_ACCESS_BOTH;
    o.share_deny = x4::OPEN4_SHARE_DENY_NONE;
    o.owner.owner = view(owner);
    o.openhow.set_opentype(x4::OPEN4_CREATE);
    o.openhow.how().set_mode(x4::UNCHECKED4);
    o.claim.set_claim(x4::CLAIM_NULL);
    o.claim.file() = view(name);
    ops.push_back(open);
    ops.push_back(x4::nfs_argop4(x4::OP_GETFH));
    Res r = Compound(ops);
    ASSERT_EQ(r.error, "");
    ASSERT_EQ(r.status(), x4::NFS4_OK);
    const x4::stateid4 sid = r.op(ops.size() - 2).opopen().resok4().stateid;
    auto fh_view = r.op(ops.size() - 1).opgetfh().resok4().object;
    const Bytes fh(fh_view.begin(), fh_view.end());

    x4::nfs_argop4 putfh(x4::OP_PUTFH);
    putfh.opputfh().object = fh;
    x4::nfs_argop4 write(x4::OP_WRITE);
    write.opwrite().stateid = sid;
    write.opwrite().offset = 0;
    write.opwrite().stable = x4::FILE_SYNC4;
    write.opwrite().data = view(data);
    Res w = Compound({Sequence(), putfh, write});
    ASSERT_EQ(w.error, "");
    ASSERT_EQ(w.status(), x4::NFS4_OK);
    EXPECT_EQ(w.op(2).opwrite().resok4().count, data.size());

    const auto spliced_before = daemon_->StatsCounter("tcp", "payload_spliced_bytes");
    ASSERT_TRUE(spliced_before.has_value());
    x4::nfs_argop4 read(x4::OP_READ);
    read.opread().stateid = sid;
    read.opread().offset = 0;
    read.opread().count = uint32_t(data.size()) + 100;
    Res rd = Compound({Sequence(), putfh, read});
    ASSERT_EQ(rd.error, "");
    ASSERT_EQ(rd.status(), x4::NFS4_OK);
    const auto& got = rd.op(2).opread().resok4();
    EXPECT_TRUE(got.eof);
    ASSERT_EQ(got.data.size(), data.size());
    EXPECT_EQ(std::memcmp(got.data.data(), data.data(), data.size()), 0);
    const auto spliced_after = daemon_->StatsCounter("tcp", "payload_spliced_bytes");
    ASSERT_TRUE(spliced_after.has_value());
    EXPECT_GE(*spliced_after - *spliced_before, data.size()) << "the READ data was not spliced";

    x4::nfs_argop4 close(x4::OP_CLOSE);
    close.opclose().open_stateid = sid;
    Res c = Compound({Sequence(), putfh, close});
    ASSERT_EQ(c.error, "");
    EXPECT_EQ(c.status(), x4::NFS4_OK);
    // The stateid is gone.
    Res after = Compound({Sequence(), putfh, read});
    EXPECT_EQ(after.status(), x4::NFS4ERR_BAD_STATEID);
}

TEST_F(Nfs4Compound, RetransmissionGetsTheSameBytes) {
    Establish();
    if (HasFatalFailure()) return;
    Res first =
        Compound({Sequence(true), x4::nfs_argop4(x4::OP_PUTROOTFH), x4::nfs_argop4(x4::OP_GETFH)});
    ASSERT_EQ(first.error, "");
    ASSERT_EQ(first.status(), x4::NFS4_OK);
    --seqid_;
    auto other = Connect();  // the client reconnected to retransmit
    ASSERT_NE(other, nullptr);
    Res again =
        Compound({Sequence(true), x4::nfs_argop4(x4::OP_PUTROOTFH), x4::nfs_argop4(x4::OP_GETFH)},
                 other.get());
    ASSERT_EQ(again.error, "");
    EXPECT_EQ(*again.bytes, *first.bytes);
    // The next seqid is a new request; one further on is misordered.
    ++seqid_;
    Res gap = Compound({Sequence(), x4::nfs_argop4(x4::OP_PUTROOTFH)});
    EXPECT_EQ(gap.status(), x4::NFS4ERR_SEQ_MISORDERED);
}

TEST_F(Nfs4Compound, IllegalOperationsAndBadXdr) {
    Establish();
    if (HasFatalFailure()) return;
    // An operation number no minor version defines (RFC 8881 §18.52).
    Bytes args = Encode({Sequence(), x4::nfs_argop4(x4::OP_PUTROOTFH)});
    args[8 + 3] = 3;  // argarray's count: the empty tag (4 bytes), minorversion (4), count
    wire::PutU32(args, 9999);
    Res ill = CallBytes(*conn_, args);
    ASSERT_EQ(ill.error, "");
    EXPECT_EQ(ill.status(), x4::NFS4ERR_OP_ILLEGAL);
    ASSERT_EQ(ill.res.resarray.size(), 3u);
    EXPECT_EQ(ill.op(2).resop(), x4::OP_ILLEGAL);

    // LOOKUP whose name runs past the end of the call.
    Bytes trunc = Encode({Sequence(), x4::nfs_argop4(x4::OP_PUTROOTFH)});
    trunc[8 + 3] = 3;
    wire::PutU32(trunc, x4::OP_LOOKUP);
    wire::PutU32(trunc, 100);  // a 100-byte name, and no bytes of it
    Res bad = CallBytes(*conn_, trunc);
    ASSERT_EQ(bad.error, "");
    EXPECT_EQ(bad.status(), x4::NFS4ERR_BADXDR);
}

TEST_F(Nfs4Compound, DestroyedSessionIsBadSession) {
    Establish();
    if (HasFatalFailure()) return;
    x4::nfs_argop4 destroy(x4::OP_DESTROY_SESSION);
    destroy.opdestroy_session().dsa_sessionid = session_;
    Res d = Compound({destroy});
    ASSERT_EQ(d.error, "");
    EXPECT_EQ(d.status(), x4::NFS4_OK);
    Res r = Compound({Sequence(), x4::nfs_argop4(x4::OP_PUTROOTFH)});
    ASSERT_EQ(r.error, "");
    EXPECT_EQ(r.status(), x4::NFS4ERR_BADSESSION);
}

}  // namespace
}  // namespace nfsrdmad::e2e
