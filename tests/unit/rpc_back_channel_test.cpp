// Calls on a client's own connection (transport/rpc/back_channel.h): the call message,
// replies matched by XID, deadlines, the bound, and the registry of connections.
#include <gtest/gtest.h>

#include "transport/rpc/back_channel.h"
#include "xdr/runtime/xdr.h"

namespace nfsrdmad::rpc {
namespace {

using namespace std::chrono_literals;
using Clock = PendingCalls::Clock;

std::vector<uint8_t> reply(uint32_t xid, uint32_t accept_stat, std::vector<uint32_t> results = {}) {
    std::vector<uint8_t> out;
    xdr::Encoder e(out);
    for (uint32_t w : {xid, 1u, 0u, 0u, 0u, accept_stat}) e.put_u32(w);
    for (uint32_t w : results) e.put_u32(w);
    return out;
}

TEST(BackChannel, TheCallMessageCarriesTheClientsCredential) {
    BackCall c;
    c.prog = 0x40000000;
    c.vers = 1;
    c.proc = 0;
    c.flavor = 1;
    c.uid = 7;
    c.gid = 8;
    c.machine = "srv";
    c.args = {0, 0, 0, 9};
    auto m = encode_back_call(42, c);
    xdr::Decoder d(m);
    EXPECT_EQ(d.get_u32(), 42u);          // xid
    EXPECT_EQ(d.get_u32(), 0u);           // CALL
    EXPECT_EQ(d.get_u32(), 2u);           // rpcvers
    EXPECT_EQ(d.get_u32(), 0x40000000u);  // the client's callback program
    EXPECT_EQ(d.get_u32(), 1u);
    EXPECT_EQ(d.get_u32(), 0u);
    EXPECT_EQ(d.get_u32(), 1u);  // AUTH_SYS
    auto body = d.get_opaque(400);
    xdr::Decoder b(body);
    (void)b.get_u32();  // stamp
    EXPECT_EQ(b.get_string(255), "srv");
    EXPECT_EQ(b.get_u32(), 7u);
    EXPECT_EQ(b.get_u32(), 8u);
    EXPECT_EQ(b.get_u32(), 0u);  // no supplementary groups
    EXPECT_EQ(d.get_u32(), 0u);  // verifier AUTH_NONE
    EXPECT_EQ(d.get_u32(), 0u);
    EXPECT_EQ(d.get_u32(), 9u);  // the arguments
    EXPECT_TRUE(d.ok());
    EXPECT_EQ(d.remaining(), 0u);
    c.flavor = 0;  // AUTH_NONE: an empty credential
    auto n = encode_back_call(43, c);
    EXPECT_EQ(n.size(), 6 * 4 + 4 * 4 + 4u);
    uint32_t xid = 0;
    EXPECT_FALSE(is_reply(n, &xid));  // a CALL
    EXPECT_TRUE(is_reply(reply(43, 0), &xid));
    EXPECT_EQ(xid, 43u);
    EXPECT_FALSE(is_reply(std::vector<uint8_t>{0, 0, 0, 1}));  // too short
}

TEST(BackChannel, RepliesAreMatchedByXid) {
    PendingCalls p(4);
    std::vector<std::string> seen;
    auto note = [&seen](const std::string& tag) {
        return [&seen, tag](CallbackResult r) {
            seen.push_back(tag + (r.ok ? ":ok" : ":" + r.error));
        };
    };
    const auto t0 = Clock::now();
    ASSERT_TRUE(p.add(1, t0 + 10s, note("a")));
    ASSERT_TRUE(p.add(2, t0 + 10s, note("b")));
    EXPECT_FALSE(p.add(2, t0 + 10s, note("dup"))) << "two calls under one xid";
    EXPECT_FALSE(p.on_reply(reply(9, 0))) << "a reply to no call of ours";
    auto f = p.on_reply(reply(2, 0, {5}));
    ASSERT_TRUE(f);
    EXPECT_TRUE(f->result.ok);
    EXPECT_EQ(f->result.results, (std::vector<uint8_t>{0, 0, 0, 5}));
    f->done(f->result);
    auto g = p.on_reply(reply(1, 1));  // PROG_UNAVAIL: answered, not a success
    ASSERT_TRUE(g);
    EXPECT_FALSE(g->result.ok);
    EXPECT_EQ(g->result.error, "accept_stat 1");
    g->done(g->result);
    EXPECT_EQ(seen, (std::vector<std::string>{"b:ok", "a:accept_stat 1"}));
    EXPECT_EQ(p.size(), 0u);
    EXPECT_FALSE(p.on_reply(reply(1, 0))) << "a second reply to a finished call";
}

TEST(BackChannel, DeadlinesTheBoundAndClosing) {
    PendingCalls p(2);
    const auto t0 = Clock::now();
    auto nothing = [](CallbackResult) {};
    ASSERT_TRUE(p.add(1, t0 + 1s, nothing));
    ASSERT_TRUE(p.add(2, t0 + 5s, nothing));
    EXPECT_FALSE(p.add(3, t0 + 5s, nothing)) << "past the bound";
    EXPECT_EQ(p.next_deadline(), t0 + 1s);
    EXPECT_TRUE(p.expire(t0).empty());
    auto gone = p.expire(t0 + 2s);
    ASSERT_EQ(gone.size(), 1u);
    EXPECT_FALSE(gone[0].result.ok);
    EXPECT_EQ(gone[0].result.error, "no reply in time");
    EXPECT_FALSE(p.on_reply(reply(1, 0))) << "a late reply";
    ASSERT_TRUE(p.add(3, t0 + 5s, nothing));
    EXPECT_TRUE(p.contains(3));
    auto refused = p.fail(3, "the peer answered RDMA_ERROR");  // one call, at once
    ASSERT_TRUE(refused);
    EXPECT_EQ(refused->result.error, "the peer answered RDMA_ERROR");
    EXPECT_FALSE(p.contains(3));
    EXPECT_FALSE(p.fail(3, "again"));
    ASSERT_TRUE(p.add(3, t0 + 5s, nothing));
    auto closed = p.fail_all("the connection closed");
    EXPECT_EQ(closed.size(), 2u);
    for (auto& c : closed) EXPECT_EQ(c.result.error, "the connection closed");
    EXPECT_EQ(p.size(), 0u);
    EXPECT_FALSE(p.next_deadline());
}

struct FakeChannel : CallChannel {
    std::vector<std::pair<uint32_t, std::vector<uint8_t>>> sent;
    bool send_call(uint32_t xid, std::vector<uint8_t> message, std::chrono::milliseconds,
                   PendingCalls::Done) override {
        sent.emplace_back(xid, std::move(message));
        return true;
    }
};

TEST(BackChannel, TheRegistryFindsOpenConnectionsOnly) {
    ChannelRegistry reg;
    auto ch = std::make_shared<FakeChannel>();
    reg.add(7, ch);
    BackCall c;
    c.prog = 0x40000000;
    c.vers = 1;
    EXPECT_TRUE(reg.call(7, c, [](CallbackResult) {}));
    EXPECT_TRUE(reg.call(7, c, [](CallbackResult) {}));
    ASSERT_EQ(ch->sent.size(), 2u);
    EXPECT_NE(ch->sent[0].first, ch->sent[1].first) << "one xid per call";
    uint32_t xid = 0;
    xdr::Decoder d(ch->sent[1].second);
    xid = d.get_u32();
    EXPECT_EQ(xid, ch->sent[1].first);
    EXPECT_FALSE(reg.call(8, c, [](CallbackResult) {})) << "an unknown connection";
    reg.remove(7);
    EXPECT_FALSE(reg.call(7, c, [](CallbackResult) {}));
    reg.add(9, ch);
    ch.reset();  // the connection went away without removing itself yet
    EXPECT_FALSE(reg.call(9, c, [](CallbackResult) {}));
}

}  // namespace
}  // namespace nfsrdmad::rpc
