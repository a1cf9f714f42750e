// Hostile and malformed input: RPC records built byte by byte on raw TCP sockets, plus
// protocol-valid but malicious NFS requests (stale/forged handles, escapes from the export).
// After every test the fixture checks that a fresh client is still served and that a file
// written through NFS at the start of the test is intact (over NFS and on disk).
#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

#include <chrono>
#include <set>
#include <string>
#include <thread>

#include <gtest/gtest.h>

#include "tests/e2e/daemon_fixture.h"
#include "tests/e2e/e2e_util.h"
#include "tests/e2e/raw_nfs.h"
#include "tests/e2e/rpc_wire.h"

namespace nfsrdmad::e2e {
namespace {

using wire::Bytes;
using wire::Conn;
using wire::Reply;
using wire::XdrOut;

constexpr uint32_t kNfs = 100003, kMount = 100005;
constexpr uint32_t kNfsGetattr = 1, kNfsLookup = 3, kNfsRead = 6, kNfsWrite = 7;
constexpr uint64_t kCanarySeed = 4242;
constexpr size_t kCanarySize = 65536;

Bytes FhArg(const Fh& fh) {
    return XdrOut().opaque(fh.data.data(), fh.data.size()).take();
}

// First word of a SUCCESS reply's results: the nfsstat3 of an NFS procedure.
int64_t NfsStatusOf(const Reply& r) {
    if (!r.parse_error.empty() || r.reply_stat != wire::kMsgAccepted ||
        r.accept_stat != wire::kSuccess || r.results.size() < 4)
        return -1;
    wire::XdrIn in(r.results);
    uint32_t st = 0;
    in.u32(&st);
    return st;
}

::testing::AssertionResult Accepted(const Reply& r, uint32_t xid, uint32_t accept_stat) {
    if (!r.parse_error.empty()) return ::testing::AssertionFailure() << r.parse_error;
    if (r.xid != xid)
        return ::testing::AssertionFailure() << "reply xid " << r.xid << " != call xid " << xid;
    if (r.reply_stat != wire::kMsgAccepted || r.accept_stat != accept_stat)
        return ::testing::AssertionFailure()
               << "expected MSG_ACCEPTED accept_stat=" << accept_stat << ", got " << r.Describe();
    return ::testing::AssertionSuccess();
}

::testing::AssertionResult Denied(const Reply& r, uint32_t xid, uint32_t reject_stat) {
    if (!r.parse_error.empty()) return ::testing::AssertionFailure() << r.parse_error;
    if (r.xid != xid)
        return ::testing::AssertionFailure() << "reply xid " << r.xid << " != call xid " << xid;
    if (r.reply_stat != wire::kMsgDenied || r.reject_stat != reject_stat)
        return ::testing::AssertionFailure()
               << "expected MSG_DENIED reject_stat=" << reject_stat << ", got " << r.Describe();
    return ::testing::AssertionSuccess();
}

class BadInputTest : public DaemonTest {
  protected:
    void SetUp() override {
        ASSERT_NO_FATAL_FAILURE(DaemonTest::SetUp());
        // "Data written earlier": a file written through NFS before the abuse starts.
        const std::string data = Pattern(kCanarySize, kCanarySeed);
        nfsfh* fh = nullptr;
        ASSERT_EQ(nfs_open2(client_->nfs(), "/canary.bin", O_CREAT | O_RDWR | O_TRUNC, 0644, &fh),
                  0)
            << client_->error();
        ASSERT_EQ(nfs_pwrite(client_->nfs(), fh, 0, data.size(), data.data()),
                  static_cast<int>(data.size()))
            << client_->error();
        ASSERT_EQ(nfs_fsync(client_->nfs(), fh), 0) << client_->error();
        ASSERT_EQ(nfs_close(client_->nfs(), fh), 0);
        canary_written_ = true;
    }

    void TearDown() override {
        if (canary_written_ && daemon_ && daemon_->running()) {
            SCOPED_TRACE("post-test health check: the daemon must still serve a new client");
            ExpectHealthy();
        }
        DaemonTest::TearDown();
    }

    void ExpectHealthy() {
        // A NULL call on a fresh connection, NFS and MOUNT ports.
        Reply n =
            wire::RoundTrip(daemon_->nfs_port(), wire::EncodeCall(wire::RootCall(777, kNfs, 3, 0)));
        EXPECT_TRUE(Accepted(n, 777, wire::kSuccess)) << "NFS NULL on a fresh connection";
        Reply m = wire::RoundTrip(daemon_->mount_port(),
                                  wire::EncodeCall(wire::RootCall(778, kMount, 3, 0)));
        EXPECT_TRUE(Accepted(m, 778, wire::kSuccess)) << "MOUNT NULL on a fresh connection";
        // A brand-new libnfs client mounts and reads the canary bit-exact.
        std::string why;
        auto c = NfsClient::Mount(*daemon_, &why);
        ASSERT_TRUE(c != nullptr) << "a new client cannot mount: " << why;
        nfsfh* fh = nullptr;
        ASSERT_EQ(nfs_open(c->nfs(), "/canary.bin", O_RDONLY, &fh), 0) << c->error();
        std::string got(kCanarySize, '\0');
        size_t done = 0;
        while (done < got.size()) {
            int r = nfs_pread(c->nfs(), fh, done, got.size() - done, got.data() + done);
            if (r <= 0) break;
            done += static_cast<size_t>(r);
        }
        nfs_close(c->nfs(), fh);
        EXPECT_EQ(done, kCanarySize);
        const std::string expect = Pattern(kCanarySize, kCanarySeed);
        EXPECT_TRUE(got == expect) << "canary changed (read over NFS)";
        std::string on_disk;
        EXPECT_TRUE(ReadFile(disk("canary.bin"), &on_disk));
        EXPECT_TRUE(on_disk == expect) << "canary changed on disk";
    }

    Reply Call(uint16_t port, const wire::Call& c, int timeout_ms = 10000) {
        return wire::RoundTrip(port, wire::EncodeCall(c), timeout_ms);
    }
    std::unique_ptr<Conn> Open(uint16_t port) {
        std::string why;
        auto c = Conn::Open(port, &why);
        EXPECT_TRUE(c != nullptr) << why;
        return c;
    }

    bool canary_written_ = false;
};

// ---- framing ------------------------------------------------------------------------------------

TEST_F(BadInputTest, GarbageBytesCloseTheConnectionOrAreAnswered) {
    // "GET " read as a record mark announces a ~1.2 GB fragment: far over any limit.
    {
        auto c = Open(daemon_->nfs_port());
        ASSERT_TRUE(c);
        const std::string http = "GET / HTTP/1.1\r\nHost: nfs\r\n\r\n";
        ASSERT_TRUE(c->Send(Bytes(http.begin(), http.end()), nullptr));
        EXPECT_TRUE(c->WaitForClose(5000)) << "an HTTP request must get the connection closed";
    }
    // A framed record of pseudo-random bytes: closed, answered, or ignored - never a crash.
    {
        auto c = Open(daemon_->nfs_port());
        ASSERT_TRUE(c);
        const std::string junk = Pattern(200, 1234);
        ASSERT_TRUE(c->SendRecord(Bytes(junk.begin(), junk.end()), nullptr));
        Bytes rec;
        std::string why;
        auto st = c->RecvRecord(&rec, 2000, &why);
        EXPECT_NE(st, Conn::Recv::kError) << why;
    }
    // An empty record, a REPLY message sent to the server, a NULL call behind a zero-length
    // fragment: answered, dropped or closed - never a crash or a hang of the server.
    const Bytes null_call = wire::EncodeCall(wire::RootCall(8, kNfs, 3, 0));
    for (const Bytes& odd :
         {wire::Frame(Bytes{}), wire::Frame(XdrOut().u32(9).u32(wire::kReply).u32(0).take()),
          wire::FrameFragments(null_call, {0, null_call.size()})}) {
        auto c = Open(daemon_->nfs_port());
        ASSERT_TRUE(c);
        ASSERT_TRUE(c->Send(odd, nullptr));
        Bytes rec;
        std::string why;
        auto st = c->RecvRecord(&rec, 1000, &why);
        EXPECT_NE(st, Conn::Recv::kError) << why;
    }
    // A second client is served normally while/after that happened.
    Reply r = Call(daemon_->nfs_port(), wire::RootCall(5, kNfs, 3, 0));
    EXPECT_TRUE(Accepted(r, 5, wire::kSuccess));
    // The same on the MOUNT port.
    {
        auto c = Open(daemon_->mount_port());
        ASSERT_TRUE(c);
        const std::string http = "GET / HTTP/1.1\r\n\r\n";
        ASSERT_TRUE(c->Send(Bytes(http.begin(), http.end()), nullptr));
        EXPECT_TRUE(c->WaitForClose(5000));
    }
}

TEST_F(BadInputTest, TruncatedFragmentThenCloseDoesNotBlockOthers) {
    auto stalled = Open(daemon_->nfs_port());
    ASSERT_TRUE(stalled);
    Bytes partial = wire::RecordMark(100, true);
    const Bytes call = wire::EncodeCall(wire::RootCall(1, kNfs, 3, 0));
    partial.insert(partial.end(), call.begin(), call.begin() + 20);
    ASSERT_TRUE(stalled->Send(partial, nullptr));

    // While one connection sits in the middle of a record, others are served.
    Reply r = Call(daemon_->nfs_port(), wire::RootCall(2, kNfs, 3, 0), 5000);
    EXPECT_TRUE(Accepted(r, 2, wire::kSuccess)) << "a half-sent record must not block the server";

    // Close mid-record, then wait until the server has seen the close.
    auto closed_before = daemon_->StatsCounter("tcp", "closed");
    ASSERT_TRUE(closed_before);
    stalled.reset();
    auto closed = [&] {
        auto n = daemon_->StatsCounter("tcp", "closed");
        return n && *n > *closed_before;
    };
    EXPECT_TRUE(WaitFor(closed, std::chrono::seconds(10))) << "the server never noticed the close";
    Reply r2 = Call(daemon_->nfs_port(), wire::RootCall(3, kNfs, 3, 0));
    EXPECT_TRUE(Accepted(r2, 3, wire::kSuccess));
}

TEST_F(BadInputTest, RecordOverTheLimitClosesTheConnection) {
    {
        auto c = Open(daemon_->nfs_port());
        ASSERT_TRUE(c);
        Bytes b = wire::RecordMark(64u << 20, true);  // announce 64 MiB
        b.resize(b.size() + 1024, 0);
        std::string why;
        c->Send(b, &why);  // may already fail if the server closed after the mark
        EXPECT_TRUE(c->WaitForClose(5000)) << "a 64 MiB record must get the connection closed";
    }
    {
        // Many small non-last fragments adding up to 4 MiB: the limit applies to the record.
        auto c = Open(daemon_->nfs_port());
        ASSERT_TRUE(c);
        Bytes frag = wire::RecordMark(65536, false);
        frag.resize(frag.size() + 65536, 0);
        bool send_failed = false;
        for (int i = 0; i < 64 && !send_failed; ++i) send_failed = !c->Send(frag, nullptr);
        EXPECT_TRUE(send_failed || c->WaitForClose(5000))
            << "a 4 MiB multi-fragment record must get the connection closed";
    }
}

TEST_F(BadInputTest, MultiFragmentCallGetsNormalReply) {
    auto c = Open(daemon_->nfs_port());
    ASSERT_TRUE(c);
    const Bytes call = wire::EncodeCall(wire::RootCall(0xabc, kNfs, 3, 0));
    ASSERT_GT(call.size(), 30u);
    ASSERT_TRUE(c->Send(wire::FrameFragments(call, {10, 17, call.size() - 27}), nullptr));
    Bytes rec;
    std::string why;
    ASSERT_EQ(c->RecvRecord(&rec, 5000, &why), Conn::Recv::kOk) << why;
    Reply r = wire::ParseReply(rec);
    EXPECT_TRUE(Accepted(r, 0xabc, wire::kSuccess));
    EXPECT_TRUE(r.results.empty()) << "NULL returns no results";

    // Same connection, with 1-byte fragments that split the xid and the header words.
    const Bytes call2 = wire::EncodeCall(wire::RootCall(0xabd, kNfs, 3, 0));
    ASSERT_TRUE(c->Send(wire::FrameFragments(call2, {1, 1, 2, 3, call2.size() - 7}), nullptr));
    ASSERT_EQ(c->RecvRecord(&rec, 5000, &why), Conn::Recv::kOk) << why;
    EXPECT_TRUE(Accepted(wire::ParseReply(rec), 0xabd, wire::kSuccess));

    // A GETATTR split across fragments in the middle of the file handle.
    const Bytes ga = wire::EncodeCall(wire::RootCall(0xabe, kNfs, 3, kNfsGetattr, FhArg(root_)));
    ASSERT_TRUE(c->Send(wire::FrameFragments(ga, {ga.size() - 5, 5}), nullptr));
    ASSERT_EQ(c->RecvRecord(&rec, 5000, &why), Conn::Recv::kOk) << why;
    Reply gr = wire::ParseReply(rec);
    EXPECT_TRUE(Accepted(gr, 0xabe, wire::kSuccess));
    EXPECT_EQ(NfsStatusOf(gr), 0) << "GETATTR of the root";
}

TEST_F(BadInputTest, PipelinedCallsOnOneConnectionAreAllAnswered) {
    auto c = Open(daemon_->nfs_port());
    ASSERT_TRUE(c);
    Bytes all;
    for (uint32_t xid : {11u, 12u, 13u}) {
        Bytes one = wire::Frame(wire::EncodeCall(wire::RootCall(xid, kNfs, 3, 0)));
        all.insert(all.end(), one.begin(), one.end());
    }
    // Plus a GETATTR of the root so that not every reply is trivial.
    Bytes ga =
        wire::Frame(wire::EncodeCall(wire::RootCall(14, kNfs, 3, kNfsGetattr, FhArg(root_))));
    all.insert(all.end(), ga.begin(), ga.end());
    ASSERT_TRUE(c->Send(all, nullptr));
    std::set<uint32_t> xids;
    for (int i = 0; i < 4; ++i) {
        Bytes rec;
        std::string why;
        ASSERT_EQ(c->RecvRecord(&rec, 5000, &why), Conn::Recv::kOk) << "reply " << i << ": " << why;
        Reply r = wire::ParseReply(rec);
        ASSERT_TRUE(r.parse_error.empty()) << r.parse_error;
        EXPECT_EQ(r.accept_stat, wire::kSuccess);
        if (r.xid == 14) {
            EXPECT_EQ(NfsStatusOf(r), 0) << "GETATTR of the root";
        }
        xids.insert(r.xid);
    }
    EXPECT_EQ(xids, (std::set<uint32_t>{11, 12, 13, 14}));
}

// A client that pipelines far more 1 MiB READs than the server queues, and only starts
// reading replies later, must get every reply: the server stops reading while its queue is
// full (so memory stays bounded) and must start again once the client drains it.
TEST_F(BadInputTest, PipelinedReadsBeyondTheQueueLimitAreAllAnsweredOnceTheClientReads) {
    constexpr uint32_t kMiB = 1u << 20;
    constexpr uint32_t kCalls = 100;  // more than the per-connection limit of 64
    ASSERT_TRUE(WriteFile(disk("big.bin"), Pattern(kMiB, 99)));
    LookupRes big = Lookup(rpc(), root_, "big.bin");
    ASSERT_TRUE(NfsIs(big, NFS3_OK));
    auto c = Open(daemon_->nfs_port());
    ASSERT_TRUE(c);
    Bytes all;
    for (uint32_t i = 0; i < kCalls; ++i) {
        wire::XdrOut args;
        args.raw(FhArg(big.fh)).u64(0).u32(kMiB);
        Bytes one = wire::Frame(wire::EncodeCall(wire::RootCall(1000 + i, kNfs, 3, kNfsRead, args.take())));
        all.insert(all.end(), one.begin(), one.end());
    }
    // The calls are small; the kernel buffers them while the server reads at its own pace.
    auto calls_before = daemon_->StatsCounter("rpc", "calls");
    ASSERT_TRUE(calls_before);
    std::thread sender([&] { EXPECT_TRUE(c->Send(all, nullptr)); });
    // Let the server's queue fill: it has run at least a queue's worth (64) of the calls.
    auto queued = [&] {
        auto n = daemon_->StatsCounter("rpc", "calls");
        return n && *n >= *calls_before + 64;
    };
    EXPECT_TRUE(WaitFor(queued, std::chrono::seconds(10)))
        << "the server did not take a queue's worth of calls";
    std::set<uint32_t> xids;
    for (uint32_t i = 0; i < kCalls; ++i) {
        Bytes rec;
        std::string why;
        ASSERT_EQ(c->RecvRecord(&rec, 20000, &why), Conn::Recv::kOk)
            << "reply " << i << " of " << kCalls << ": " << why;
        Reply r = wire::ParseReply(rec);
        ASSERT_TRUE(r.parse_error.empty()) << r.parse_error;
        EXPECT_EQ(NfsStatusOf(r), 0);
        EXPECT_GT(rec.size(), kMiB) << "a whole 1 MiB READ reply";
        xids.insert(r.xid);
    }
    sender.join();
    EXPECT_EQ(xids.size(), kCalls);
}

// ---- RPC-level errors ---------------------------------------------------------------------------

TEST_F(BadInputTest, UnknownProgramIsProgUnavail) {
    EXPECT_TRUE(Accepted(Call(daemon_->nfs_port(), wire::RootCall(21, 100099, 1, 0)), 21,
                         wire::kProgUnavail));
    EXPECT_TRUE(Accepted(Call(daemon_->mount_port(), wire::RootCall(22, 100099, 1, 0)), 22,
                         wire::kProgUnavail));
}

TEST_F(BadInputTest, WrongVersionIsProgMismatchWithSupportedRange) {
    // NFSv3 and NFSv4 (on by default) are served: 2 and 5 are outside 3..4.
    for (uint32_t v : {2u, 5u}) {
        Reply r = Call(daemon_->nfs_port(), wire::RootCall(30 + v, kNfs, v, 0));
        ASSERT_TRUE(Accepted(r, 30 + v, wire::kProgMismatch)) << "NFS version " << v;
        EXPECT_EQ(r.mismatch_low, 3u);
        EXPECT_EQ(r.mismatch_high, 4u);
    }
    Reply m = Call(daemon_->mount_port(), wire::RootCall(40, kMount, 4, 0));
    ASSERT_TRUE(Accepted(m, 40, wire::kProgMismatch)) << "MOUNT version 4";
    EXPECT_EQ(m.mismatch_low, 1u);
    EXPECT_EQ(m.mismatch_high, 3u);
}

TEST_F(BadInputTest, UnknownProcedureIsProcUnavail) {
    EXPECT_TRUE(Accepted(Call(daemon_->nfs_port(), wire::RootCall(51, kNfs, 3, 22)), 51,
                         wire::kProcUnavail));
    EXPECT_TRUE(Accepted(Call(daemon_->nfs_port(), wire::RootCall(52, kNfs, 3, 0xffffffffu)), 52,
                         wire::kProcUnavail));
    EXPECT_TRUE(Accepted(Call(daemon_->mount_port(), wire::RootCall(53, kMount, 3, 6)), 53,
                         wire::kProcUnavail));
}

TEST_F(BadInputTest, UndecodableArgumentsAreGarbageArgs) {
    // GETATTR: handle length says 32, only 8 bytes follow.
    Bytes args = XdrOut().u32(32).u32(0x01020304).u32(0x05060708).take();
    EXPECT_TRUE(Accepted(Call(daemon_->nfs_port(), wire::RootCall(61, kNfs, 3, kNfsGetattr, args)),
                         61, wire::kGarbageArgs));
    // GETATTR with no arguments at all.
    EXPECT_TRUE(Accepted(Call(daemon_->nfs_port(), wire::RootCall(62, kNfs, 3, kNfsGetattr)), 62,
                         wire::kGarbageArgs));
    // LOOKUP: valid directory handle, then a name claiming 1 000 000 bytes.
    Bytes lk =
        XdrOut().opaque(root_.data.data(), root_.data.size()).u32(1000000).u32(0x41414141).take();
    EXPECT_TRUE(Accepted(Call(daemon_->nfs_port(), wire::RootCall(63, kNfs, 3, kNfsLookup, lk)), 63,
                         wire::kGarbageArgs));
    // WRITE: data length 4096 but 16 bytes present (handle of the canary).
    LookupRes canary = Lookup(rpc(), root_, "canary.bin");
    ASSERT_TRUE(NfsIs(canary, NFS3_OK));
    Bytes wr = XdrOut()
                   .opaque(canary.fh.data.data(), canary.fh.data.size())
                   .u64(0)
                   .u32(4096)
                   .u32(2 /*FILE_SYNC*/)
                   .u32(4096)
                   .raw(std::string(16, 'Z').data(), 16)
                   .take();
    EXPECT_TRUE(Accepted(Call(daemon_->nfs_port(), wire::RootCall(64, kNfs, 3, kNfsWrite, wr)), 64,
                         wire::kGarbageArgs));
    // MNT with a path length far beyond MNTPATHLEN and no bytes.
    Bytes mnt = XdrOut().u32(0x7fffffff).take();
    EXPECT_TRUE(Accepted(Call(daemon_->mount_port(), wire::RootCall(65, kMount, 3, 1, mnt)), 65,
                         wire::kGarbageArgs));

    // A handle longer than NFS3_FHSIZE (64) is invalid XDR for nfs_fh3.
    Bytes big(68, 0x5a);
    Reply r = Call(daemon_->nfs_port(), wire::RootCall(66, kNfs, 3, kNfsGetattr,
                                                       XdrOut().opaque(big.data(), 65).take()));
    ASSERT_TRUE(r.parse_error.empty()) << r.parse_error;
    const bool garbage = r.reply_stat == wire::kMsgAccepted && r.accept_stat == wire::kGarbageArgs;
    const bool badhandle = NfsStatusOf(r) == NFS3ERR_BADHANDLE;
    EXPECT_TRUE(garbage || badhandle) << "65-byte handle: " << r.Describe();
}

// RFC 4506 §4.3: an enum may only hold the values its declaration lists, so a WRITE whose
// stable_how is 7 does not decode: GARBAGE_ARGS (RFC 5531 §9), and nothing is written.
TEST_F(BadInputTest, OutOfRangeEnumIsGarbageArgs) {
    LookupRes canary = Lookup(rpc(), root_, "canary.bin");
    ASSERT_TRUE(NfsIs(canary, NFS3_OK));
    auto write = [&](uint32_t stable) {
        return XdrOut()
            .opaque(canary.fh.data.data(), canary.fh.data.size())
            .u64(0)
            .u32(4)
            .u32(stable)
            .opaque("ZZZZ", 4)
            .take();
    };
    EXPECT_TRUE(
        Accepted(Call(daemon_->nfs_port(), wire::RootCall(67, kNfs, 3, kNfsWrite, write(7))), 67,
                 wire::kGarbageArgs));
    EXPECT_TRUE(Accepted(
        Call(daemon_->nfs_port(), wire::RootCall(68, kNfs, 3, kNfsWrite, write(0xffffffffu))), 68,
        wire::kGarbageArgs));
    // The teardown's health check proves the canary's first bytes are still intact.
}

TEST_F(BadInputTest, RpcVersion3IsRpcMismatch) {
    wire::Call c = wire::RootCall(71, kNfs, 3, 0);
    c.rpcvers = 3;
    Reply r = Call(daemon_->nfs_port(), c);
    ASSERT_TRUE(Denied(r, 71, wire::kRpcMismatch));
    EXPECT_EQ(r.mismatch_low, 2u);
    EXPECT_EQ(r.mismatch_high, 2u);
}

TEST_F(BadInputTest, MalformedAuthSysIsAuthBadcred) {
    // Credential body of 400 bytes whose machinename claims 10 000 bytes.
    wire::Call c = wire::RootCall(81, kNfs, 3, kNfsGetattr, FhArg(root_));
    c.cred_body = XdrOut().u32(1).u32(10000).take();
    c.cred_body.resize(400, 'm');
    Reply r = Call(daemon_->nfs_port(), c);
    ASSERT_TRUE(Denied(r, 81, wire::kAuthError));
    EXPECT_EQ(r.auth_stat, wire::kAuthBadcred);

    // 17 supplementary gids (the limit is 16).
    wire::Call g = wire::RootCall(82, kNfs, 3, kNfsGetattr, FhArg(root_));
    std::vector<uint32_t> gids(17, 100);
    g.cred_body = wire::AuthSysBody(1, "host", 0, 0, gids);
    r = Call(daemon_->nfs_port(), g);
    ASSERT_TRUE(Denied(r, 82, wire::kAuthError));
    EXPECT_EQ(r.auth_stat, wire::kAuthBadcred);

    // Body shorter than the fields it must contain.
    wire::Call s = wire::RootCall(83, kNfs, 3, kNfsGetattr, FhArg(root_));
    s.cred_body = XdrOut().u32(1).take();
    r = Call(daemon_->nfs_port(), s);
    ASSERT_TRUE(Denied(r, 83, wire::kAuthError));
    EXPECT_EQ(r.auth_stat, wire::kAuthBadcred);

    // Unknown flavor.
    wire::Call u = wire::RootCall(84, kNfs, 3, kNfsGetattr, FhArg(root_));
    u.cred_flavor = 0x4e5;
    r = Call(daemon_->nfs_port(), u);
    ASSERT_TRUE(Denied(r, 84, wire::kAuthError));
    EXPECT_TRUE(r.auth_stat == wire::kAuthBadcred || r.auth_stat == wire::kAuthRejectedcred ||
                r.auth_stat == wire::kAuthTooweak)
        << "auth_stat " << r.auth_stat;
}

// ---- malicious but well-formed NFS requests -----------------------------------------------------

TEST_F(BadInputTest, HandleOfDeletedObjectIsStale) {
    NewObjRes f = Create(rpc(), root_, "doomed", GUARDED, SetAttrs::Mode(0644));
    ASSERT_TRUE(NfsIs(f, NFS3_OK));
    LookupRes fl = Lookup(rpc(), root_, "doomed");
    ASSERT_TRUE(NfsIs(fl, NFS3_OK));
    ASSERT_TRUE(NfsIs(Getattr(rpc(), fl.fh), NFS3_OK));
    ASSERT_TRUE(NfsIs(Remove(rpc(), root_, "doomed"), NFS3_OK));
    EXPECT_TRUE(NfsIs(Getattr(rpc(), fl.fh), NFS3ERR_STALE)) << "GETATTR of a removed file";

    ASSERT_TRUE(NfsIs(Mkdir(rpc(), root_, "doomed_dir", SetAttrs::Mode(0755)), NFS3_OK));
    LookupRes dl = Lookup(rpc(), root_, "doomed_dir");
    ASSERT_TRUE(NfsIs(dl, NFS3_OK));
    ASSERT_TRUE(NfsIs(Rmdir(rpc(), root_, "doomed_dir"), NFS3_OK));
    EXPECT_TRUE(NfsIs(Getattr(rpc(), dl.fh), NFS3ERR_STALE)) << "GETATTR of a removed directory";
    EXPECT_TRUE(NfsIs(Lookup(rpc(), dl.fh, "x"), NFS3ERR_STALE)) << "LOOKUP in a removed directory";
}

TEST_F(BadInputTest, ForgedHandleIsRejectedAndNeverReturnsData) {
    const std::string secret = "top secret content of the victim file";
    ASSERT_TRUE(WriteFile(disk("victim"), secret));
    LookupRes v = Lookup(rpc(), root_, "victim");
    ASSERT_TRUE(NfsIs(v, NFS3_OK));
    ASSERT_GE(v.fh.size(), 2u);

    Fh forged = v.fh;
    forged.data[forged.size() / 2] ^= static_cast<char>(0xff);
    EXPECT_TRUE(NfsIsOneOf(Getattr(rpc(), forged), {NFS3ERR_BADHANDLE, NFS3ERR_STALE}))
        << "GETATTR with byte " << forged.size() / 2 << " flipped";
    ReadRes rd = Read(rpc(), forged, 0, 4096);
    EXPECT_TRUE(NfsIsOneOf(rd, {NFS3ERR_BADHANDLE, NFS3ERR_STALE})) << "READ with a forged handle";
    EXPECT_TRUE(rd.data.empty());

    // Whatever byte is flipped, the forged handle never yields the victim's content.
    for (size_t i = 0; i < v.fh.size(); ++i) {
        Fh f = v.fh;
        f.data[i] ^= 0x01;
        ReadRes r = Read(rpc(), f, 0, 4096);
        if (!r.rpc_error.empty()) continue;  // rejected at the RPC level: no data either
        EXPECT_FALSE(r.status == NFS3_OK && r.data == secret)
            << "flipping bit 0 of byte " << i << " still reads the victim";
    }

    // Truncated and empty handles.
    Fh half = v.fh;
    half.data.resize(v.fh.size() / 2);
    EXPECT_TRUE(NfsIsOneOf(Getattr(rpc(), half), {NFS3ERR_BADHANDLE, NFS3ERR_STALE}))
        << "half handle";
    EXPECT_TRUE(NfsIsOneOf(Getattr(rpc(), Fh{}), {NFS3ERR_BADHANDLE, NFS3ERR_STALE}))
        << "empty handle";
    Fh zeros;
    zeros.data.assign(v.fh.size(), 0);
    EXPECT_TRUE(NfsIsOneOf(Read(rpc(), zeros, 0, 100), {NFS3ERR_BADHANDLE, NFS3ERR_STALE}))
        << "all-zero handle";
}

TEST_F(BadInputTest, LookupDotDotAtExportRootStaysAtRoot) {
    GetattrRes root = Getattr(rpc(), root_);
    ASSERT_TRUE(NfsIs(root, NFS3_OK));
    LookupRes up = Lookup(rpc(), root_, "..");
    ASSERT_TRUE(NfsIs(up, NFS3_OK));
    GetattrRes upa = Getattr(rpc(), up.fh);
    ASSERT_TRUE(NfsIs(upa, NFS3_OK));
    EXPECT_EQ(upa.attr.fileid, root.attr.fileid) << "LOOKUP .. at the export root is the root";
    struct stat parent;
    ASSERT_EQ(::stat(daemon_->base_dir().c_str(), &parent), 0);
    EXPECT_NE(upa.attr.fileid, static_cast<uint64_t>(parent.st_ino)) << "escaped to the parent";

    LookupRes up2 = Lookup(rpc(), up.fh, "..");
    ASSERT_TRUE(NfsIs(up2, NFS3_OK));
    GetattrRes up2a = Getattr(rpc(), up2.fh);
    ASSERT_TRUE(NfsIs(up2a, NFS3_OK));
    EXPECT_EQ(up2a.attr.fileid, root.attr.fileid);
    // And nothing outside is reachable from there.
    EXPECT_TRUE(NfsFailed(Lookup(rpc(), up2.fh, "state"))) << "the state dir next to the export";

    // READDIR and READDIRPLUS of the root agree with LOOKUP: ".." is the root itself.
    for (bool plus : {false, true}) {
        ReaddirRes list = plus ? ReaddirplusAll(rpc(), root_, 4096, 16384) : ReaddirAll(rpc(), root_, 4096);
        ASSERT_TRUE(NfsIs(list, NFS3_OK));
        bool found = false;
        for (const auto& e : list.entries) {
            if (e.name != "..") continue;
            found = true;
            EXPECT_EQ(e.fileid, root.attr.fileid) << (plus ? "READDIRPLUS" : "READDIR") << " '..' of the root";
            if (plus && e.has_attr) {
                EXPECT_EQ(e.attr.fileid, root.attr.fileid);
            }
        }
        EXPECT_TRUE(found) << "'..' missing from the root listing";
    }
    EXPECT_TRUE(NfsFailed(Lookup(rpc(), up2.fh, "daemon.log")));
}

TEST_F(BadInputTest, SymlinksPointingOutsideAreNotFollowedByTheServer) {
    ASSERT_EQ(::symlink("/etc", disk("etc_link").c_str()), 0);
    ASSERT_EQ(::symlink("/etc/passwd", disk("passwd_link").c_str()), 0);
    ASSERT_EQ(::symlink("../../../../../../../../etc/passwd", disk("up_link").c_str()), 0);

    for (const char* name : {"etc_link", "passwd_link", "up_link"}) {
        SCOPED_TRACE(name);
        LookupRes l = Lookup(rpc(), root_, name);
        ASSERT_TRUE(NfsIs(l, NFS3_OK));
        if (l.has_obj_attr) {
            EXPECT_EQ(l.obj_attr.type, NF3LNK);
        }
        GetattrRes g = Getattr(rpc(), l.fh);
        ASSERT_TRUE(NfsIs(g, NFS3_OK));
        EXPECT_EQ(g.attr.type, NF3LNK) << "LOOKUP must not follow the final symlink";

        ReadRes rd = Read(rpc(), l.fh, 0, 4096);
        EXPECT_TRUE(NfsFailed(rd)) << "READ on a symlink handle";
        EXPECT_EQ(rd.data.find("root:"), std::string::npos) << "leaked /etc/passwd";
        EXPECT_TRUE(rd.data.empty());
        EXPECT_TRUE(NfsFailed(Lookup(rpc(), l.fh, "passwd"))) << "LOOKUP through a symlink handle";
        EXPECT_TRUE(NfsFailed(Readdir(rpc(), l.fh, 0, Verf8{}, 4096))) << "READDIR of a symlink";
        EXPECT_TRUE(NfsFailed(Write(rpc(), l.fh, 0, "pwned", FILE_SYNC))) << "WRITE via a symlink";
    }
    ReadlinkRes t = Readlink(rpc(), Lookup(rpc(), root_, "etc_link").fh);
    ASSERT_TRUE(NfsIs(t, NFS3_OK));
    EXPECT_EQ(t.target, "/etc") << "READLINK returns the stored text; the client resolves it";
    EXPECT_TRUE(NfsFailed(LookupPath(rpc(), root_, "etc_link/passwd")));

    // Creating through a symlink to a directory outside must not create anything outside.
    ASSERT_EQ(::mkdir(disk("../outside").c_str(), 0755), 0);
    ASSERT_EQ(::symlink(disk("../outside").c_str(), disk("out_link").c_str()), 0);
    LookupRes ol = Lookup(rpc(), root_, "out_link");
    ASSERT_TRUE(NfsIs(ol, NFS3_OK));
    EXPECT_TRUE(NfsFailed(Create(rpc(), ol.fh, "planted", UNCHECKED, SetAttrs::Mode(0644))));
    EXPECT_TRUE(Absent(disk("../outside/planted")));
}

TEST_F(BadInputTest, NamesWithSlashOrDotDotOrTooLongAreRejected) {
    ASSERT_EQ(::mkdir(disk("sub").c_str(), 0755), 0);
    ASSERT_TRUE(WriteFile(disk("sub/file"), "inside"));

    LookupRes l = Lookup(rpc(), root_, "sub/file");
    EXPECT_TRUE(NfsFailed(l)) << "LOOKUP of a name containing '/'";
    EXPECT_TRUE(l.fh.empty());
    EXPECT_TRUE(NfsFailed(Lookup(rpc(), root_, "../state"))) << "'..' with a slash";
    EXPECT_TRUE(NfsFailed(Lookup(rpc(), root_, ""))) << "empty name";

    EXPECT_TRUE(NfsFailed(Create(rpc(), root_, "sub/evil", UNCHECKED, SetAttrs::Mode(0644))));
    EXPECT_TRUE(Absent(disk("sub/evil")));
    EXPECT_TRUE(NfsFailed(Create(rpc(), root_, "../escaped", UNCHECKED, SetAttrs::Mode(0644))));
    EXPECT_TRUE(Absent(daemon_->base_dir() + "/escaped"));
    EXPECT_TRUE(NfsFailed(Mkdir(rpc(), root_, "a/b")));
    EXPECT_TRUE(NfsFailed(Rename(rpc(), root_, "canary.bin", root_, "sub/moved")));
    EXPECT_TRUE(Absent(disk("sub/moved")));
    EXPECT_TRUE(NfsFailed(Remove(rpc(), root_, "sub/file")));
    EXPECT_FALSE(Absent(disk("sub/file")));
    EXPECT_TRUE(NfsFailed(Create(rpc(), root_, "..", UNCHECKED, SetAttrs::Mode(0644))));
    EXPECT_TRUE(NfsFailed(Create(rpc(), root_, ".", UNCHECKED, SetAttrs::Mode(0644))));

    // A name with an embedded NUL: "sub\0file" must not be truncated to "sub".
    Bytes args = XdrOut()
                     .opaque(root_.data.data(), root_.data.size())
                     .str(std::string("sub\0file", 8))
                     .take();
    Reply r = Call(daemon_->nfs_port(), wire::RootCall(91, kNfs, 3, kNfsLookup, args));
    ASSERT_TRUE(r.parse_error.empty()) << r.parse_error;
    const bool garbage = r.reply_stat == wire::kMsgAccepted && r.accept_stat == wire::kGarbageArgs;
    const int64_t st = NfsStatusOf(r);
    EXPECT_TRUE(garbage || (st > 0))
        << "LOOKUP \"sub\\0file\": " << r.Describe() << " status " << st;

    const std::string long_name(300, 'n');
    EXPECT_TRUE(NfsIs(Create(rpc(), root_, long_name, UNCHECKED, SetAttrs::Mode(0644)),
                      NFS3ERR_NAMETOOLONG));
    EXPECT_TRUE(NfsIsOneOf(Lookup(rpc(), root_, long_name), {NFS3ERR_NAMETOOLONG, NFS3ERR_NOENT}));
}

// RFC 1813 §3.2 (General comments on filenames) and the IMPLEMENTATION of RMDIR, RENAME
// and LINK: each refused name gets the status the RFC gives it (nfs/v3/names.h).
TEST_F(BadInputTest, RefusedNamesGetTheStatusRfc1813Gives) {
    ASSERT_EQ(::mkdir(disk("sub").c_str(), 0755), 0);
    ASSERT_TRUE(WriteFile(disk("sub/file"), "inside"));
    LookupRes sub = Lookup(rpc(), root_, "sub");
    ASSERT_TRUE(NfsIs(sub, NFS3_OK));
    LookupRes file = Lookup(rpc(), sub.fh, "file");
    ASSERT_TRUE(NfsIs(file, NFS3_OK));

    // §3.2 item 1: empty is NFS3ERR_ACCES; item 5: a character the server cannot handle.
    EXPECT_TRUE(NfsIs(Lookup(rpc(), root_, ""), NFS3ERR_ACCES)) << "LOOKUP \"\"";
    EXPECT_TRUE(NfsIs(Lookup(rpc(), root_, "sub/file"), NFS3ERR_ACCES)) << "LOOKUP sub/file";
    EXPECT_TRUE(NfsIs(Create(rpc(), root_, "", UNCHECKED, SetAttrs::Mode(0644)), NFS3ERR_ACCES));
    EXPECT_TRUE(NfsIs(Mkdir(rpc(), root_, "a/b"), NFS3ERR_ACCES));
    EXPECT_TRUE(NfsIs(Symlink(rpc(), root_, "", "target"), NFS3ERR_ACCES));
    EXPECT_TRUE(NfsIs(Remove(rpc(), root_, "sub/file"), NFS3ERR_ACCES));
    EXPECT_FALSE(Absent(disk("sub/file")));
    EXPECT_TRUE(NfsIs(Rename(rpc(), sub.fh, "file", root_, "x/y"), NFS3ERR_ACCES));
    EXPECT_TRUE(NfsIs(Link(rpc(), file.fh, root_, ""), NFS3ERR_ACCES));
    Bytes args = XdrOut()
                     .opaque(root_.data.data(), root_.data.size())
                     .str(std::string("sub\0file", 8))
                     .take();
    Reply r = Call(daemon_->nfs_port(), wire::RootCall(92, kNfs, 3, kNfsLookup, args));
    ASSERT_TRUE(r.parse_error.empty()) << r.parse_error;
    EXPECT_EQ(NfsStatusOf(r), NFS3ERR_ACCES) << "LOOKUP \"sub\\0file\": " << r.Describe();

    // "." and "..": they exist (creations); RMDIR "." INVAL and ".." EXIST (§3.3.13);
    // RENAME either name and LINK's new name INVAL (§3.3.14, §3.3.15).
    EXPECT_TRUE(NfsIs(Mkdir(rpc(), root_, "."), NFS3ERR_EXIST));
    EXPECT_TRUE(NfsIs(Create(rpc(), root_, "..", UNCHECKED, SetAttrs::Mode(0644)), NFS3ERR_EXIST));
    EXPECT_TRUE(NfsIs(Remove(rpc(), sub.fh, "."), NFS3ERR_INVAL));
    EXPECT_TRUE(NfsIs(Rmdir(rpc(), sub.fh, "."), NFS3ERR_INVAL));
    EXPECT_TRUE(NfsIs(Rmdir(rpc(), sub.fh, ".."), NFS3ERR_EXIST));
    EXPECT_TRUE(NfsIs(Rename(rpc(), sub.fh, "file", root_, ".."), NFS3ERR_INVAL));
    EXPECT_TRUE(NfsIs(Rename(rpc(), sub.fh, "file", root_, "."), NFS3ERR_INVAL));
    EXPECT_TRUE(NfsIs(Rename(rpc(), root_, "..", root_, "moved"), NFS3ERR_INVAL));
    EXPECT_TRUE(NfsIs(Link(rpc(), file.fh, root_, "."), NFS3ERR_INVAL));
    EXPECT_TRUE(NfsIs(Link(rpc(), file.fh, root_, ".."), NFS3ERR_INVAL));
    EXPECT_FALSE(Absent(disk("sub/file")));
    EXPECT_TRUE(Absent(disk("moved")));
    // LOOKUP resolves both (§3.2 items 2 and 3).
    EXPECT_TRUE(NfsIs(Lookup(rpc(), sub.fh, "."), NFS3_OK));
    EXPECT_TRUE(NfsIs(Lookup(rpc(), sub.fh, ".."), NFS3_OK));
}

}  // namespace
}  // namespace nfsrdmad::e2e
