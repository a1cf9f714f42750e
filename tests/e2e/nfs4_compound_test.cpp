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
//   a retransmission (cachethis)          -> the same bytes, READ data included, on a
//                                            new connection
//   an unknown op, truncated arguments    -> OP_ILLEGAL, BADXDR
//   DESTROY_SESSION, then SEQUENCE        -> NFS4ERR_BADSESSION
//   too many ops, too big a request/reply -> TOO_MANY_OPS, REQ_TOO_BIG (RPC header
//                                            counted), REP_TOO_BIG
//   DESTROY_CLIENTID with state, DESTROY_SESSION from another connection, a new
//   session finding the old one's open   -> CLIENTID_BUSY, BADSESSION, the stateid
//                                            still good, STALE_CLIENTID at the end
// First (libnfs's AUTH_* macros): see nfs4_fixture.h.
#include "tests/e2e/nfs4_fixture.h"

#include <gtest/gtest.h>

#include <cstring>
#include <string>
#include <vector>

namespace nfsrdmad::e2e {
namespace {

using wire::Bytes;

class Nfs4Compound : public Nfs4DaemonTest {
  protected:
    // OPEN (create, UNCHECKED, read and write) of `name` in the export, by `owner`: its
    // stateid and handle.
    void OpenCreate(const std::string& name, const std::string& owner, x4::stateid4* sid,
                    Bytes* fh) {
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
        *sid = r.op(ops.size() - 2).opopen().resok4().stateid;
        auto fh_view = r.op(ops.size() - 1).opgetfh().resok4().object;
        fh->assign(fh_view.begin(), fh_view.end());
    }
    std::string data_;
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
    ops.push_back(op_getattr({x4::FATTR4_TYPE, x4::FATTR4_FSID}));
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

TEST_F(Nfs4Compound, OpenWriteReadCloseTheLargeReadIsSplicedSmallOnesOnTheLoop) {
    Establish();
    if (HasFatalFailure()) return;
    std::string name = "v4file", owner = "open-owner-1";
    std::string data(200000, '\0');
    for (size_t i = 0; i < data.size(); ++i) data[i] = char('a' + i % 23);

    x4::stateid4 sid{};
    Bytes fh;
    ASSERT_NO_FATAL_FAILURE(OpenCreate(name, owner, &sid, &fh));

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
    const auto spliced_after = daemon_->StatsCounterAtLeast("tcp", "payload_spliced_bytes",
                                                            *spliced_before + data.size());
    ASSERT_TRUE(spliced_after.has_value());
    EXPECT_GE(*spliced_after - *spliced_before, data.size()) << "the READ data was not spliced";

    // Small READs from the page cache are answered on the connection's loop (issue 13):
    // no worker, the data read into memory and sent with the reply.
    const auto loop_before = daemon_->StatsCounter("tcp", "reactor_calls");
    ASSERT_TRUE(loop_before.has_value());
    constexpr int kSmallReads = 8;
    for (int i = 0; i < kSmallReads; ++i) {
        x4::nfs_argop4 small = read;
        small.opread().offset = 1000 + 12345u * uint32_t(i);
        small.opread().count = 4000;
        Res r = Compound({Sequence(), putfh, small});
        ASSERT_EQ(r.error, "");
        ASSERT_EQ(r.status(), x4::NFS4_OK);
        const auto& part = r.op(2).opread().resok4();
        EXPECT_FALSE(part.eof);
        ASSERT_EQ(part.data.size(), 4000u);
        EXPECT_EQ(std::memcmp(part.data.data(), data.data() + small.opread().offset, 4000), 0)
            << "READ at " << small.opread().offset;
    }
    const auto loop_after = daemon_->StatsCounter("tcp", "reactor_calls");
    ASSERT_TRUE(loop_after.has_value());
    EXPECT_GE(*loop_after - *loop_before, uint64_t{kSmallReads}) << "READs answered on the loop";

    x4::nfs_argop4 close(x4::OP_CLOSE);
    close.opclose().open_stateid = sid;
    Res c = Compound({Sequence(), putfh, close});
    ASSERT_EQ(c.error, "");
    EXPECT_EQ(c.status(), x4::NFS4_OK);
    // The stateid is gone.
    Res after = Compound({Sequence(), putfh, read});
    EXPECT_EQ(after.status(), x4::NFS4ERR_BAD_STATEID);
}

// NFSv3 and NFSv4.1 share one descriptor cache (issue 16): a file an NFSv4.1 client
// opened and wrote is read over NFSv3 through the same descriptor, not a second one.
TEST_F(Nfs4Compound, Nfs3ReadsThroughTheDescriptorNfs41Opened) {
    Establish();
    if (HasFatalFailure()) return;
    const std::string name = "shared-fd", owner = "open-owner-2", data = "one file, one fd";
    x4::stateid4 sid{};
    Bytes fh;
    ASSERT_NO_FATAL_FAILURE(OpenCreate(name, owner, &sid, &fh));
    x4::nfs_argop4 putfh(x4::OP_PUTFH);
    putfh.opputfh().object = fh;
    x4::nfs_argop4 write(x4::OP_WRITE);
    write.opwrite().stateid = sid;
    write.opwrite().stable = x4::FILE_SYNC4;
    write.opwrite().data = view(data);
    Res w = Compound({Sequence(), putfh, write});
    ASSERT_EQ(w.error, "");
    ASSERT_EQ(w.status(), x4::NFS4_OK);

    const size_t fds_before = daemon_->OpenFdCount();
    wire::XdrOut args;  // READ3args (RFC 1813 §3.3.6): file, offset, count
    args.opaque(fh).u64(0).u32(4096);
    wire::Reply rd = RpcCall(*conn_, 100003, 3, 6, args.take());
    ASSERT_EQ(rd.parse_error, "");
    ASSERT_EQ(rd.accept_stat, wire::kSuccess);
    wire::XdrIn in(rd.results);
    uint32_t status = 1, follows = 0, count = 0, eof = 0;
    ASSERT_TRUE(in.u32(&status));
    ASSERT_EQ(status, 0u) << "NFSv3 READ of the NFSv4.1 file";
    ASSERT_TRUE(in.u32(&follows));
    if (follows) {
        ASSERT_TRUE(in.skip(84));  // fattr3
    }
    Bytes got;
    ASSERT_TRUE(in.u32(&count) && in.u32(&eof) && in.opaque(&got, 4096));
    EXPECT_EQ(std::string(got.begin(), got.end()), data);
    EXPECT_EQ(daemon_->OpenFdCount(), fds_before) << "NFSv3 opened the file a second time";
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

// A cached READ retransmitted on a new connection: the reply from the slot, its data
// sent out of line again from this call's own payload buffers (compound.cpp).
TEST_F(Nfs4Compound, CachedReadRetransmittedOnANewConnection) {
    Establish();
    if (HasFatalFailure()) return;
    const Bytes root = ExportHandle();
    ASSERT_FALSE(root.empty());
    // Within ca_maxresponsesize_cached (the server grants 4096).
    std::string data(2000, '\0');
    for (size_t i = 0; i < data.size(); ++i) data[i] = char('A' + i % 26);
    ASSERT_TRUE(WriteFile(daemon_->on_disk("replayed"), data));
    const std::string name = "replayed";
    const x4::stateid4 anon{};
    auto reads = [&](bool cachethis) {
        return std::vector<x4::nfs_argop4>{Sequence(cachethis), op_putfh(root),
                                           op_lookup(view(name)), op_read(anon, 0, 1200),
                                           op_read(anon, 1200, 1200)};
    };
    Res first = Compound(reads(true));
    ASSERT_EQ(first.error, "");
    ASSERT_EQ(first.status(), x4::NFS4_OK);
    --seqid_;
    auto other = Connect();
    ASSERT_NE(other, nullptr);
    Res again = Compound(reads(true), other.get());
    ASSERT_EQ(again.error, "");
    EXPECT_EQ(*again.bytes, *first.bytes);
    ASSERT_EQ(again.count(), 5u);
    const auto& a = again.op(3).opread().resok4();
    const auto& b = again.op(4).opread().resok4();
    EXPECT_EQ(std::string(a.data.begin(), a.data.end()) + std::string(b.data.begin(), b.data.end()),
              data);
    EXPECT_TRUE(b.eof);
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

// RFC 8881 §2.10.6.4 and §18.36.3: a COMPOUND beyond the session's fore channel. The
// request size is "the XDR encoded size of the request, including the RPC headers
// (including security flavor credentials and verifiers) but excludes any RPC transport
// framing headers".
TEST_F(Nfs4Compound, OversizedCompoundsMeetTheSessionsLimits) {
    Establish({0, 4096, 8192, 1024, 8, 8, {}});
    if (HasFatalFailure()) return;
    ASSERT_EQ(fore_.ca_maxrequestsize, 4096u);
    ASSERT_EQ(fore_.ca_maxresponsesize, 8192u);
    ASSERT_EQ(fore_.ca_maxoperations, 8u);
    const Bytes root = ExportHandle();
    ASSERT_FALSE(root.empty());

    // Nine operations where eight are allowed: SEQUENCE answers TOO_MANY_OPS, nothing runs.
    std::vector<x4::nfs_argop4> nine{Sequence()};
    for (int i = 0; i < 4; ++i) {
        nine.push_back(op_putrootfh());
        nine.push_back(op_getfh());
    }
    Res many = Compound(nine);
    ASSERT_EQ(many.error, "");
    EXPECT_EQ(many.status(), x4::NFS4ERR_TOO_MANY_OPS);
    EXPECT_EQ(many.count(), 1u);
    // §18.46.3: the slot is as it was; its seqid goes again with the next request.
    --seqid_;

    // A WRITE whose arguments fit in 4096 bytes but not with the RPC header before them.
    const size_t header = wire::EncodeCall(wire::RootCall(1, 100003, 4, 1, {})).size();
    ASSERT_GT(header, 40u);
    const x4::stateid4 anon{};
    auto write_of = [&](size_t n) {
        data_.assign(n, 'w');
        return std::vector<x4::nfs_argop4>{Sequence(), op_putfh(root),
                                           op_write(anon, 0, view(data_))};
    };
    const size_t empty = Encode(write_of(0)).size();
    --seqid_;
    const size_t over = (4096 - empty - header / 2) & ~size_t{3};
    Res big = Compound(write_of(over));
    ASSERT_EQ(big.error, "");
    EXPECT_EQ(big.status(), x4::NFS4ERR_REQ_TOO_BIG)
        << "args " << empty + over << " + header " << header;
    EXPECT_EQ(big.count(), 1u);
    --seqid_;  // the slot is as it was
    // Header included, within the limit: the request runs (the WRITE itself fails: the
    // export root is a directory).
    const size_t under = (4096 - empty - header) & ~size_t{3};
    Res fits = Compound(write_of(under));
    ASSERT_EQ(fits.error, "");
    EXPECT_EQ(fits.status(), x4::NFS4ERR_ISDIR);
    EXPECT_EQ(fits.count(), 3u);

    // A READ whose reply would pass 8192 bytes: REP_TOO_BIG for the READ, the results
    // before it stand.
    ASSERT_TRUE(WriteFile(daemon_->on_disk("big"), std::string(16384, 'r')));
    const std::string big_name = "big";
    Res rd =
        Compound({Sequence(), op_putfh(root), op_lookup(view(big_name)), op_read(anon, 0, 16384)});
    ASSERT_EQ(rd.error, "");
    EXPECT_EQ(rd.status(), x4::NFS4ERR_REP_TOO_BIG);
    EXPECT_EQ(rd.count(), 4u);
    Res small =
        Compound({Sequence(), op_putfh(root), op_lookup(view(big_name)), op_read(anon, 0, 4096)});
    ASSERT_EQ(small.error, "");
    EXPECT_EQ(small.status(), x4::NFS4_OK);
}

// RFC 8881 §18.37 and §18.50: sessions and client IDs destroyed while in use. State is
// the client's, not the session's or the connection's: it outlives a destroyed session.
TEST_F(Nfs4Compound, SessionsAndClientsDestroyedUnderUse) {
    Establish();
    if (HasFatalFailure()) return;
    const Bytes root = ExportHandle();
    ASSERT_FALSE(root.empty());
    const std::string owner = "owner", name = "held";
    Res o =
        Compound({Sequence(), op_putfh(root),
                  op_open(view(owner), view(name), true, x4::OPEN4_SHARE_ACCESS_BOTH), op_getfh()});
    ASSERT_EQ(o.error, "");
    ASSERT_EQ(o.status(), x4::NFS4_OK);
    const x4::stateid4 sid = o.op(2).opopen().resok4().stateid;
    auto fh_view = o.op(3).opgetfh().resok4().object;
    const Bytes fh(fh_view.begin(), fh_view.end());

    x4::nfs_argop4 destroy_client(x4::OP_DESTROY_CLIENTID);
    destroy_client.opdestroy_clientid().dca_clientid = clientid_;
    // §18.50.3: a client ID with sessions or state is busy.
    Res busy = Compound({destroy_client});
    ASSERT_EQ(busy.error, "");
    EXPECT_EQ(busy.status(), x4::NFS4ERR_CLIENTID_BUSY);

    // Another connection uses the session (implicitly bound), then destroys it while the
    // first connection still holds it.
    auto other = Connect();
    ASSERT_NE(other, nullptr);
    Res used = Compound({Sequence(), op_putrootfh()}, other.get());
    ASSERT_EQ(used.error, "");
    ASSERT_EQ(used.status(), x4::NFS4_OK);
    x4::nfs_argop4 destroy_session(x4::OP_DESTROY_SESSION);
    destroy_session.opdestroy_session().dsa_sessionid = session_;
    Res gone = Compound({destroy_session}, other.get());
    ASSERT_EQ(gone.error, "");
    EXPECT_EQ(gone.status(), x4::NFS4_OK);
    Res stale = Compound({Sequence(), op_putfh(fh), op_read(sid, 0, 10)});
    ASSERT_EQ(stale.error, "");
    EXPECT_EQ(stale.status(), x4::NFS4ERR_BADSESSION);
    // Still busy: the open is the client's.
    Res still = Compound({destroy_client});
    ASSERT_EQ(still.error, "");
    EXPECT_EQ(still.status(), x4::NFS4ERR_CLIENTID_BUSY);

    // A new session of the same client (EXCHANGE_ID again: the confirmed record) finds
    // the open stateid where it was.
    Establish();
    if (HasFatalFailure()) return;
    Res rd = Compound({Sequence(), op_putfh(fh), op_read(sid, 0, 10)});
    ASSERT_EQ(rd.error, "");
    EXPECT_EQ(rd.status(), x4::NFS4_OK);
    Res closed = Compound({Sequence(), op_putfh(fh), op_close(sid)});
    ASSERT_EQ(closed.error, "");
    ASSERT_EQ(closed.status(), x4::NFS4_OK);

    // No state, no session: DESTROY_CLIENTID succeeds, and the client ID is stale.
    destroy_session.opdestroy_session().dsa_sessionid = session_;
    ASSERT_EQ(Compound({destroy_session}).status(), x4::NFS4_OK);
    Res done = Compound({destroy_client});
    ASSERT_EQ(done.error, "");
    EXPECT_EQ(done.status(), x4::NFS4_OK);
    x4::nfs_argop4 cs(x4::OP_CREATE_SESSION);
    cs.opcreate_session().csa_clientid = clientid_;
    cs.opcreate_session().csa_fore_chan_attrs = {0, 1 << 20, 1 << 20, 8192, 16, 8, {}};
    cs.opcreate_session().csa_back_chan_attrs = {0, 4096, 4096, 0, 2, 1, {}};
    Res late = Compound({cs});
    ASSERT_EQ(late.error, "");
    EXPECT_EQ(late.status(), x4::NFS4ERR_STALE_CLIENTID);
    Res after = Compound({Sequence(), op_putrootfh()});
    ASSERT_EQ(after.error, "");
    EXPECT_EQ(after.status(), x4::NFS4ERR_BADSESSION);
}

// The fore channel the daemon offers fits what its transports carry (daemon.cpp
// fore_channel): with TCP records of at most 64 KiB, CREATE_SESSION grants no larger
// ca_maxrequestsize (RFC 8881 §18.36.3: the server MAY decrease what the client asks).
class Nfs4SmallRecords : public Nfs4DaemonTest {
  protected:
    DaemonOptions Options() override {
        DaemonOptions o = Nfs4DaemonTest::Options();
        o.config_yaml += "listeners: {max_record_size: 65536}\n";
        return o;
    }
};

TEST_F(Nfs4SmallRecords, ForeChannelIsClampedToTheRecordLimit) {
    Establish();
    if (HasFatalFailure()) return;
    EXPECT_EQ(fore_.ca_maxrequestsize, 65536u);
    EXPECT_EQ(fore_.ca_maxresponsesize, (1u << 20));
}

}  // namespace
}  // namespace nfsrdmad::e2e
