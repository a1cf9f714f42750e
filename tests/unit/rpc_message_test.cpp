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

Words auth_none(Words w) { return w.u(0).u(0).u(0).u(0), w; }

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
    uint32_t min_version() const override { return 2; }
    uint32_t max_version() const override { return 4; }
    rpc::ProcedureInfo procedure(uint32_t, uint32_t proc) const override {
        return {proc <= 2, proc != 2, "echo"};
    }
    rpc::Outcome call(rpc::CallContext& ctx) override {
        ++calls;
        uint32_t v = ctx.args.get_u32();
        if (!ctx.args.ok()) return rpc::Outcome::garbage();
        if (ctx.header.proc == 1) return rpc::Outcome::system_error();
        ctx.res.put_u32(v + ctx.header.cred.sys.uid);
        return rpc::Outcome::ok();
    }
    int calls = 0;
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
    EXPECT_FALSE(send(Words().u(1).u(1).b));   // a REPLY
    EXPECT_FALSE(send(Words().u(1).b));        // 4 bytes
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
