// RPC call headers (RFC 5531 §9) and the dispatcher's answers to what it cannot run.
#include <gtest/gtest.h>

#include "transport/rpc/dispatcher.h"
#include "transport/rpc/message.h"
#include "xdr/rpc_prot.h"

using namespace nfsrdmad;
namespace x = xdr::rpc;

namespace {

struct Words {
    std::vector<uint8_t> b;
    Words& u(uint32_t w) {
        for (int s = 24; s >= 0; s -= 8) b.push_back(uint8_t(w >> s));
        return *this;
    }
    Words& str(std::string_view s) {
        u(uint32_t(s.size()));
        b.insert(b.end(), s.begin(), s.end());
        b.resize(b.size() + xdr::pad4(s.size()), 0);
        return *this;
    }
};

// xid, CALL, rpcvers, prog, vers, proc, then credential and verifier.
Words call(uint32_t xid, uint32_t prog, uint32_t vers, uint32_t proc, uint32_t rpcvers = 2) {
    Words w;
    w.u(xid).u(0).u(rpcvers).u(prog).u(vers).u(proc);
    return w;
}

Words auth_none(Words w) {
    return w.u(0).u(0).u(0).u(0), w;
}

Words auth_sys(Words w, uint32_t uid, uint32_t gid, std::vector<uint32_t> gids) {
    Words body;
    body.u(77).str("client.example").u(uid).u(gid).u(uint32_t(gids.size()));
    for (auto g : gids) body.u(g);
    w.u(1).u(uint32_t(body.b.size()));
    w.b.insert(w.b.end(), body.b.begin(), body.b.end());
    return w.u(0).u(0), w;
}

class EchoProgram : public rpc::Program {
  public:
    uint32_t number() const override { return 400000; }
    std::vector<uint32_t> versions() const override { return {2, 3, 4}; }
    rpc::ProcedureInfo procedure(uint32_t, uint32_t proc) const override {
        return {proc <= 2, proc != 2, "echo"};
    }
    rpc::Outcome call(rpc::CallContext& ctx) override {
        ++calls;
        last_cred = ctx.header.cred;
        uint32_t v = ctx.args.get_u32();
        if (!ctx.args.ok()) return rpc::Outcome::garbage();
        if (ctx.header.proc == 1) return rpc::Outcome::system_error();
        // A program that read the clock last says so: the call ends at that reading.
        if (v == 7777) ctx.last_reading = ctx.started + rpc::latency::ticks_of_ns(3000000000u);
        ctx.res.put_u32(v + ctx.header.cred.sys.uid);
        return rpc::Outcome::ok();
    }
    int calls = 0;
    rpc::Credential last_cred;
};

class NullAlloc : public rpc::PayloadAllocator {
  public:
    std::unique_ptr<rpc::PayloadBuffer> allocate(size_t) override { return nullptr; }
};

struct Fixture : ::testing::Test {
    Fixture() {
        prog = std::make_shared<EchoProgram>();
        d.add(prog);
        peer.text = "192.0.2.1:800";
    }
    std::optional<rpc::Reply> send(const std::vector<uint8_t>& bytes) {
        rpc::Message m;
        m.bytes = bytes;
        return d.dispatch(m, peer, alloc);
    }
    // Decodes a reply header; returns the rest.
    x::rpc_msg decode(const rpc::Reply& r, std::span<const uint8_t>* rest = nullptr) {
        xdr::Decoder dec(r.bytes);
        x::rpc_msg m;
        EXPECT_TRUE(x::xdr_decode(dec, m));
        if (rest) *rest = dec.rest();
        return m;
    }
    std::shared_ptr<EchoProgram> prog;
    rpc::Dispatcher d;
    rpc::Peer peer;
    NullAlloc alloc;
};

}  // namespace

TEST_F(Fixture, SuccessCarriesResults) {
    auto r = send(auth_sys(call(9, 400000, 3, 0), 1000, 100, {1, 2}).u(5).b);
    ASSERT_TRUE(r);
    std::span<const uint8_t> rest;
    auto m = decode(*r, &rest);
    EXPECT_EQ(m.xid, 9u);
    EXPECT_EQ(m.body.rbody().stat(), x::MSG_ACCEPTED);
    EXPECT_EQ(m.body.rbody().areply().reply_data.stat(), x::SUCCESS);
    ASSERT_EQ(rest.size(), 4u);
    EXPECT_EQ(rest[3], 5 + 1000 - 768);  // 1005 = 0x3ed
    EXPECT_EQ(rest[2], 3);
}

// The call's time runs from the dispatcher's reading to the program's last one when the
// program took one (CallContext::last_reading), else to the dispatcher's own second one.
TEST_F(Fixture, ACallEndsAtTheProgramsLastClockReading) {
    ASSERT_TRUE(send(auth_none(call(1, 400000, 3, 0)).u(7777).b));
    ASSERT_TRUE(send(auth_none(call(2, 400000, 3, 0)).u(5).b));
    double seconds = -1;
    uint64_t calls = 0;
    for (const auto& st : d.registry().stats())
        for (const auto& o : st->snapshot().ops) {
            seconds = o.seconds;
            calls = o.calls;
        }
    EXPECT_EQ(calls, 2u);
    EXPECT_GE(seconds, 3.0);
    EXPECT_LT(seconds, 4.0);
}

TEST_F(Fixture, ProgUnavail) {
    auto m = decode(*send(auth_none(call(1, 123, 1, 0)).b));
    EXPECT_EQ(m.body.rbody().areply().reply_data.stat(), x::PROG_UNAVAIL);
}

TEST_F(Fixture, ProgMismatchGivesSupportedRange) {
    auto m = decode(*send(auth_none(call(1, 400000, 9, 0)).b));
    EXPECT_EQ(m.body.rbody().areply().reply_data.stat(), x::PROG_MISMATCH);
    EXPECT_EQ(m.body.rbody().areply().reply_data.mismatch_info().low, 2u);
    EXPECT_EQ(m.body.rbody().areply().reply_data.mismatch_info().high, 4u);
}

TEST_F(Fixture, ProcUnavail) {
    auto m = decode(*send(auth_none(call(1, 400000, 2, 3)).b));
    EXPECT_EQ(m.body.rbody().areply().reply_data.stat(), x::PROC_UNAVAIL);
}

TEST_F(Fixture, GarbageArgs) {
    auto m = decode(*send(auth_none(call(1, 400000, 2, 0)).b));  // no argument word
    EXPECT_EQ(m.body.rbody().areply().reply_data.stat(), x::GARBAGE_ARGS);
}

TEST_F(Fixture, SystemErr) {
    auto m = decode(*send(auth_none(call(1, 400000, 2, 1)).u(0).b));
    EXPECT_EQ(m.body.rbody().areply().reply_data.stat(), x::SYSTEM_ERR);
}

TEST_F(Fixture, RpcMismatch) {
    auto m = decode(*send(auth_none(call(4, 400000, 2, 0, 3)).u(0).b));
    EXPECT_EQ(m.xid, 4u);
    EXPECT_EQ(m.body.rbody().stat(), x::MSG_DENIED);
    EXPECT_EQ(m.body.rbody().rreply().stat(), x::RPC_MISMATCH);
    EXPECT_EQ(m.body.rbody().rreply().mismatch_info().low, 2u);
    EXPECT_EQ(m.body.rbody().rreply().mismatch_info().high, 2u);
}

TEST_F(Fixture, AuthSysWithInconsistentLengthIsBadCred) {
    // The body says 24 bytes but its machinename claims 10 000.
    Words w = call(5, 400000, 2, 0);
    w.u(1).u(24).u(0).u(10000).u(0).u(0).u(0).u(0).u(0).u(0);
    auto m = decode(*send(w.b));
    EXPECT_EQ(m.body.rbody().stat(), x::MSG_DENIED);
    EXPECT_EQ(m.body.rbody().rreply().stat(), x::AUTH_ERROR);
    EXPECT_EQ(m.body.rbody().rreply().auth_stat(), x::AUTH_BADCRED);
    EXPECT_EQ(prog->calls, 0);
}

TEST_F(Fixture, AuthSysWithSeventeenGroupsIsBadCred) {
    std::vector<uint32_t> gids(17, 5);
    auto m = decode(*send(auth_sys(call(5, 400000, 2, 0), 1, 1, gids).u(0).b));
    EXPECT_EQ(m.body.rbody().rreply().auth_stat(), x::AUTH_BADCRED);
}

TEST_F(Fixture, AnAuthSysCredentialReachesTheProgramWhole) {
    std::vector<uint32_t> gids;
    for (uint32_t g = 100; g < 116; ++g) gids.push_back(g);  // 16: the most there may be
    auto r = send(auth_sys(call(5, 400000, 2, 0), 1234, 4321, gids).u(1).b);
    ASSERT_TRUE(r);
    EXPECT_EQ(decode(*r).body.rbody().areply().reply_data.stat(), x::SUCCESS);
    const rpc::Credential& c = prog->last_cred;
    EXPECT_EQ(c.flavor, x::AUTH_SYS);
    EXPECT_EQ(c.sys.stamp, 77u);
    EXPECT_EQ(c.sys.machinename, "client.example");
    EXPECT_EQ(c.sys.uid, 1234u);
    EXPECT_EQ(c.sys.gid, 4321u);
    EXPECT_EQ(std::vector<uint32_t>(c.sys.gids.begin(), c.sys.gids.end()), gids);
    // And a credential without groups after it leaves none behind.
    ASSERT_TRUE(send(auth_sys(call(6, 400000, 2, 0), 1, 2, {}).u(1).b));
    EXPECT_TRUE(prog->last_cred.sys.gids.empty());
}

TEST_F(Fixture, AnAuthSysCredentialWithBytesAfterItIsBadCred) {
    Words w = call(5, 400000, 2, 0);
    Words body;
    body.u(77).str("m").u(1).u(1).u(1).u(9).u(0);  // one group, then a word too many
    w.u(1).u(uint32_t(body.b.size()));
    w.b.insert(w.b.end(), body.b.begin(), body.b.end());
    w.u(0).u(0).u(0);
    auto m = decode(*send(w.b));
    EXPECT_EQ(m.body.rbody().rreply().auth_stat(), x::AUTH_BADCRED);
    EXPECT_EQ(prog->calls, 0);
}

TEST_F(Fixture, AnAuthSysCredentialWithAnotherVerifierIsBadVerf) {
    Words w = auth_sys(call(5, 400000, 2, 0), 1, 1, {});
    w.b.resize(w.b.size() - 8);
    w.u(1).u(0).u(0);  // an AUTH_SYS verifier
    auto m = decode(*send(w.b));
    EXPECT_EQ(m.body.rbody().rreply().auth_stat(), x::AUTH_BADVERF);
    EXPECT_EQ(prog->calls, 0);
}

// RFC 5531 §8.2: AUTH_NONE carries no body. A credential with one is AUTH_BADCRED, an
// AUTH_NONE verifier with one AUTH_BADVERF, under AUTH_NONE and AUTH_SYS alike (as the Linux
// server's svcauth_null_accept and svcauth_unix_accept answer).
TEST_F(Fixture, AuthNoneWithABodyIsRefused) {
    Words cred = call(5, 400000, 2, 0);
    cred.u(0).u(8).u(1).u(2).u(0).u(0);  // AUTH_NONE credential of 8 bytes, empty verifier
    auto m = decode(*send(cred.b));
    EXPECT_EQ(m.body.rbody().rreply().auth_stat(), x::AUTH_BADCRED);
    Words verf = call(6, 400000, 2, 0);
    verf.u(0).u(0).u(0).u(4).u(7);  // empty credential, AUTH_NONE verifier of 4 bytes
    m = decode(*send(verf.b));
    EXPECT_EQ(m.body.rbody().rreply().auth_stat(), x::AUTH_BADVERF);
    Words sys = auth_sys(call(7, 400000, 2, 0), 1, 1, {});
    sys.b.resize(sys.b.size() - 8);
    sys.u(0).u(4).u(7);
    m = decode(*send(sys.b));
    EXPECT_EQ(m.body.rbody().rreply().auth_stat(), x::AUTH_BADVERF);
    EXPECT_EQ(prog->calls, 0);
}

TEST(Groups, KeepsSixteenInPlaceAndMoreOnTheHeap) {
    rpc::Groups g;
    for (uint32_t i = 0; i < 40; ++i) {
        g.push_back(i * 3);
        ASSERT_EQ(g.size(), i + 1);
        for (uint32_t j = 0; j <= i; ++j) ASSERT_EQ(g[j], j * 3) << i;
    }
    rpc::Groups copy = g;
    EXPECT_EQ(copy, g);
    rpc::Groups moved = std::move(copy);
    EXPECT_EQ(moved, g);
    EXPECT_TRUE(copy.empty());  // NOLINT(bugprone-use-after-move): moved-from is empty
    rpc::Groups few{1, 2, 3};
    moved = few;
    EXPECT_EQ(moved, (rpc::Groups{1, 2, 3}));
    EXPECT_NE(moved, g);
    few = std::move(g);
    EXPECT_EQ(few.size(), 40u);
    EXPECT_EQ(few[39], 117u);
    few.assign(moved.begin(), moved.end());
    EXPECT_EQ(few, moved);
    few.clear();
    EXPECT_TRUE(few.empty());
    EXPECT_EQ(few.begin(), few.end());
}

TEST_F(Fixture, CredentialLongerThan400IsBadCred) {
    Words w = call(5, 400000, 2, 0);
    w.u(1).u(404);
    w.b.resize(w.b.size() + 404 + 8, 0);
    auto m = decode(*send(w.b));
    EXPECT_EQ(m.body.rbody().rreply().auth_stat(), x::AUTH_BADCRED);
}

TEST_F(Fixture, UnknownFlavorIsBadCred) {
    Words w = call(5, 400000, 2, 0);
    w.u(6).u(0).u(0).u(0).u(0);
    auto m = decode(*send(w.b));
    EXPECT_EQ(m.body.rbody().rreply().auth_stat(), x::AUTH_BADCRED);
}

TEST_F(Fixture, RepliesAndShortMessagesAreDropped) {
    EXPECT_FALSE(send(Words().u(1).u(1).b));  // a REPLY
    EXPECT_FALSE(send(Words().u(1).b));       // 4 bytes
    EXPECT_FALSE(send({}));
}

TEST_F(Fixture, NonIdempotentRetransmissionIsReplayedNotRerun) {
    auto msg = auth_sys(call(77, 400000, 2, 2), 10, 10, {}).u(1).b;
    auto first = send(msg);
    auto second = send(msg);
    ASSERT_TRUE(first && second);
    EXPECT_EQ(prog->calls, 1);
    EXPECT_EQ(first->bytes, second->bytes);
    EXPECT_EQ(d.counters().cache_replays.load(), 1u);
    // Same xid from another client port is a different call.
    peer.text = "192.0.2.1:801";
    send(msg);
    EXPECT_EQ(prog->calls, 2);
}

TEST_F(Fixture, IdempotentCallsAreNotCached) {
    auto msg = auth_none(call(78, 400000, 2, 0)).u(1).b;
    send(msg);
    send(msg);
    EXPECT_EQ(prog->calls, 2);
}

TEST(ReplyCache, EvictsOldestFinishedEntries) {
    rpc::ReplyCache c(2);
    std::vector<uint8_t> out;
    auto key = [](uint32_t xid) { return rpc::ReplyCache::Key{"p", xid, 1, 1, 1, 0}; };
    for (uint32_t i = 0; i < 3; ++i) {
        ASSERT_EQ(c.begin(key(i), out), rpc::ReplyCache::Lookup::New);
        c.finish(key(i), {uint8_t(i)});
    }
    EXPECT_EQ(c.size(), 2u);
    EXPECT_EQ(c.begin(key(2), out), rpc::ReplyCache::Lookup::Done);
    EXPECT_EQ(out, std::vector<uint8_t>{2});
    EXPECT_EQ(c.begin(key(0), out), rpc::ReplyCache::Lookup::New);  // evicted
}

TEST(ReplyCache, InProgressRetransmissionIsDropped) {
    rpc::ReplyCache c;
    std::vector<uint8_t> out;
    rpc::ReplyCache::Key k{"p", 1, 1, 1, 1, 0};
    EXPECT_EQ(c.begin(k, out), rpc::ReplyCache::Lookup::New);
    EXPECT_EQ(c.begin(k, out), rpc::ReplyCache::Lookup::InProgress);
    c.abandon(k);
    EXPECT_EQ(c.begin(k, out), rpc::ReplyCache::Lookup::New);
}

// --- The program registry: (program, version) ------------------------------------

namespace {

class VersionProgram : public rpc::Program {
  public:
    VersionProgram(uint32_t number, std::vector<uint32_t> versions, uint32_t tag)
        : number_(number), versions_(std::move(versions)), tag_(tag) {}
    uint32_t number() const override { return number_; }
    std::vector<uint32_t> versions() const override { return versions_; }
    rpc::ProcedureInfo procedure(uint32_t, uint32_t) const override { return {true, true, "p"}; }
    rpc::Outcome call(rpc::CallContext& ctx) override {
        ctx.res.put_u32(tag_);
        return rpc::Outcome::ok();
    }

  private:
    uint32_t number_;
    std::vector<uint32_t> versions_;
    uint32_t tag_;
};

}  // namespace

TEST_F(Fixture, TwoObjectsServeTwoVersionsOfOneProgram) {
    d.add(std::make_shared<VersionProgram>(100003, std::vector<uint32_t>{3}, 33));
    d.add(std::make_shared<VersionProgram>(100003, std::vector<uint32_t>{4}, 44));
    for (auto [vers, tag] : {std::pair{3u, 33u}, {4u, 44u}}) {
        std::span<const uint8_t> rest;
        auto reply = send(auth_none(call(1, 100003, vers, 0)).b);  // `rest` points into it
        auto m = decode(*reply, &rest);
        ASSERT_EQ(m.body.rbody().areply().reply_data.stat(), x::SUCCESS) << vers;
        ASSERT_EQ(rest.size(), 4u);
        EXPECT_EQ(rest[3], tag);
    }
    // PROG_MISMATCH spans every registered version of the number (RFC 5531 §9).
    auto m = decode(*send(auth_none(call(1, 100003, 2, 0)).b));
    EXPECT_EQ(m.body.rbody().areply().reply_data.stat(), x::PROG_MISMATCH);
    EXPECT_EQ(m.body.rbody().areply().reply_data.mismatch_info().low, 3u);
    EXPECT_EQ(m.body.rbody().areply().reply_data.mismatch_info().high, 4u);
}

TEST_F(Fixture, AGapBetweenVersionsIsAMismatch) {
    d.add(std::make_shared<VersionProgram>(100005, std::vector<uint32_t>{1, 3}, 1));
    auto m = decode(*send(auth_none(call(1, 100005, 2, 0)).b));
    EXPECT_EQ(m.body.rbody().areply().reply_data.stat(), x::PROG_MISMATCH);
    EXPECT_EQ(m.body.rbody().areply().reply_data.mismatch_info().low, 1u);
    EXPECT_EQ(m.body.rbody().areply().reply_data.mismatch_info().high, 3u);
}

TEST_F(Fixture, AVersionRegisteredTwiceIsRefusedWhole) {
    d.add(std::make_shared<VersionProgram>(100003, std::vector<uint32_t>{3}, 33));
    EXPECT_THROW(d.add(std::make_shared<VersionProgram>(100003, std::vector<uint32_t>{4, 3}, 44)),
                 std::invalid_argument);
    // Nothing of the refused object was registered: version 4 is still unknown.
    auto m = decode(*send(auth_none(call(1, 100003, 4, 0)).b));
    EXPECT_EQ(m.body.rbody().areply().reply_data.stat(), x::PROG_MISMATCH);
}

TEST_F(Fixture, RegistrationsListEveryProgramAndVersion) {
    d.add(std::make_shared<VersionProgram>(100005, std::vector<uint32_t>{3, 1}, 1));
    using P = std::pair<uint32_t, uint32_t>;
    EXPECT_EQ(d.registry().registrations(),
              (std::vector<P>{{100005, 1}, {100005, 3}, {400000, 2}, {400000, 3}, {400000, 4}}));
}

TEST_F(Fixture, AnUnknownFlavorIsRefusedBeforeTheProgramIsLookedUp) {
    Words w = call(5, 123456, 1, 0);  // no such program
    w.u(6).u(0).u(0).u(0);
    auto m = decode(*send(w.b));
    EXPECT_EQ(m.body.rbody().stat(), x::MSG_DENIED);
    EXPECT_EQ(m.body.rbody().rreply().auth_stat(), x::AUTH_BADCRED);
}

// --- The auth stage: a flavor that verifies, unwraps, wraps and signs -------------------

namespace {

// Flavor 9: the credential is one word, a uid; 13 is refused (AUTH_TOOWEAK), 14 dropped.
// Arguments arrive as [word count][words ^ 0xff]; results leave followed by a checksum
// word; every reply verifier is a fresh sequence number. A stand-in for RPCSEC_GSS.
class TestFlavor : public rpc::AuthFlavor {
  public:
    uint32_t number() const override { return 9; }
    Result accept(const rpc::RawAuth& raw, rpc::CallAuth& out) const override {
        xdr::Decoder d(raw.cred);
        uint32_t uid = d.get_u32();
        if (!d.ok() || d.remaining() != 0) return {Verdict::Reject, x::AUTH_BADCRED};
        if (uid == 13) return {Verdict::Reject, x::AUTH_TOOWEAK};
        if (uid == 14) return {Verdict::Drop, 0};
        out.cred.flavor = 9;
        out.cred.sys.uid = uid;
        out.context = std::make_shared<uint32_t>(uid);
        return {};
    }
    rpc::OpaqueAuth reply_verifier(const rpc::CallAuth&) const override {
        uint32_t n = ++verifiers;
        return {9, {uint8_t(n >> 24), uint8_t(n >> 16), uint8_t(n >> 8), uint8_t(n)}};
    }
    bool unwrap_arguments(const rpc::CallAuth&, std::span<const uint8_t> in,
                          std::vector<uint8_t>& storage,
                          std::span<const uint8_t>& out) const override {
        xdr::Decoder d(in);
        uint32_t n = d.get_u32();
        auto words = d.get_fixed(size_t(n) * 4);
        if (!d.ok() || n > 16) return false;
        storage.assign(words.begin(), words.end());
        for (auto& b : storage) b ^= 0xff;
        out = storage;
        return true;
    }
    bool wrap_results(const rpc::CallAuth&, std::vector<uint8_t>& reply,
                      size_t results_offset) const override {
        ++wraps;
        uint8_t sum = 0;
        for (size_t i = results_offset; i < reply.size(); ++i) sum += reply[i];
        xdr::Encoder(reply).put_u32(sum);
        return true;
    }
    mutable std::atomic<uint32_t> verifiers{0}, wraps{0};
};

Words flavor9(Words w, uint32_t uid) {
    return w.u(9).u(4).u(uid).u(0).u(0), w;
}

struct AuthStageTest : Fixture {
    AuthStageTest() {
        auto f = std::make_unique<TestFlavor>();
        flavor = f.get();
        d.auth().add(std::move(f));
    }
    TestFlavor* flavor = nullptr;
};

}  // namespace

TEST_F(AuthStageTest, ArgumentsUnwrappedResultsWrappedVerifierSent) {
    // EchoProgram adds the uid to the word it decodes: 5 ^ 0xffffffff arrives wrapped.
    std::span<const uint8_t> rest;
    auto reply = send(flavor9(call(3, 400000, 2, 0), 1000).u(1).u(~5u).b);  // `rest` points into it
    auto m = decode(*reply, &rest);
    ASSERT_EQ(m.body.rbody().stat(), x::MSG_ACCEPTED);
    auto& a = m.body.rbody().areply();
    EXPECT_EQ(a.verf.flavor, 9u);
    ASSERT_EQ(a.verf.body.size(), 4u);
    EXPECT_EQ(a.verf.body[3], 1);
    EXPECT_EQ(a.reply_data.stat(), x::SUCCESS);
    ASSERT_EQ(rest.size(), 8u);  // the result, then the checksum wrap_results appended
    EXPECT_EQ(rest[2] * 256 + rest[3], 1005);
    EXPECT_EQ(rest[7], uint8_t(0x03 + 0xed));
}

TEST_F(AuthStageTest, RefusedAndDroppedCredentials) {
    auto m = decode(*send(flavor9(call(3, 400000, 2, 0), 13).u(0).b));
    EXPECT_EQ(m.body.rbody().stat(), x::MSG_DENIED);
    EXPECT_EQ(m.body.rbody().rreply().auth_stat(), x::AUTH_TOOWEAK);
    EXPECT_FALSE(send(flavor9(call(3, 400000, 2, 0), 14).u(0).b));
    EXPECT_EQ(prog->calls, 0);
}

TEST_F(AuthStageTest, ArgumentsThatDoNotUnwrapAreGarbage) {
    auto m = decode(*send(flavor9(call(3, 400000, 2, 0), 1).u(99).b));
    EXPECT_EQ(m.body.rbody().areply().reply_data.stat(), x::GARBAGE_ARGS);
    EXPECT_EQ(m.body.rbody().areply().verf.flavor, 9u);
    EXPECT_EQ(prog->calls, 0);
}

TEST_F(AuthStageTest, ErrorsAreNotWrapped) {
    auto m = decode(*send(flavor9(call(3, 400000, 2, 1), 1).u(1).u(0).b));  // SYSTEM_ERR
    EXPECT_EQ(m.body.rbody().areply().reply_data.stat(), x::SYSTEM_ERR);
    EXPECT_EQ(flavor->wraps.load(), 0u);
}

TEST_F(AuthStageTest, AReplayGetsItsOwnVerifierAndIsWrappedAgain) {
    auto msg = flavor9(call(77, 400000, 2, 2), 10).u(1).u(~1u).b;  // procedure 2: cached
    auto first = send(msg);
    auto second = send(msg);
    ASSERT_TRUE(first && second);
    EXPECT_EQ(prog->calls, 1);
    EXPECT_EQ(d.counters().cache_replays.load(), 1u);
    EXPECT_EQ(flavor->wraps.load(), 2u);
    std::span<const uint8_t> r1, r2;
    auto m1 = decode(*first, &r1);
    auto m2 = decode(*second, &r2);
    EXPECT_EQ(m1.body.rbody().areply().verf.body[3], 1);
    EXPECT_EQ(m2.body.rbody().areply().verf.body[3], 2);
    // The results, and their wrapping, are the same: the cache kept them unwrapped.
    EXPECT_EQ(std::vector<uint8_t>(r1.begin(), r1.end()),
              std::vector<uint8_t>(r2.begin(), r2.end()));
    EXPECT_EQ(r1.size(), 8u);
}
