// Whether the server can call a client back (nfs/v4/callback_path.h): one CB_NULL probe
// per client, not per session; the path's connection closing moves it to the next bound
// connection, or down; SEQ4_STATUS_CB_PATH_DOWN while down. Calls go to a fake
// rpc::BackChannels whose answers the test decides.
#include <gtest/gtest.h>

#include <set>

#include "nfs/v4/callback_path.h"
#include "xdr/nfs4_prot.h"

namespace nfsrdmad::nfs::v4 {
namespace {

struct FakeChannels : rpc::BackChannels {
    struct Sent {
        uint64_t conn;
        rpc::BackCall call;
        rpc::PendingCalls::Done done;
    };
    std::vector<Sent> sent;
    std::set<uint64_t> dead;  // connections that carry no calls
    bool call(uint64_t conn, rpc::BackCall c, rpc::PendingCalls::Done done) override {
        if (dead.count(conn)) return false;
        sent.push_back({conn, std::move(c), std::move(done)});
        return true;
    }
    void answer(size_t i, bool ok) {
        rpc::CallbackResult r;
        r.ok = ok;
        if (!ok) r.error = "accept_stat 1";
        sent.at(i).done(r);
    }
};

constexpr uint32_t kDown = xdr::nfs4::SEQ4_STATUS_CB_PATH_DOWN;
using State = CallbackPaths::State;

TEST(CallbackPaths, OneProbePerClientWithItsProgramAndCredential) {
    auto ch = std::make_shared<FakeChannels>();
    CallbackPaths paths(ch, std::chrono::seconds(10));
    state::CallbackParams cb{0x40000000, 1, 5, 6};
    paths.bound(7, 100, cb);
    ASSERT_EQ(ch->sent.size(), 1u);
    EXPECT_EQ(ch->sent[0].conn, 100u);
    EXPECT_EQ(ch->sent[0].call.prog, 0x40000000u);
    EXPECT_EQ(ch->sent[0].call.vers, 1u);
    EXPECT_EQ(ch->sent[0].call.proc, 0u);  // CB_NULL
    EXPECT_EQ(ch->sent[0].call.flavor, 1u);
    EXPECT_EQ(ch->sent[0].call.uid, 5u);
    EXPECT_EQ(ch->sent[0].call.gid, 6u);
    EXPECT_EQ(paths.state(7), State::Probing);
    EXPECT_EQ(paths.status_flags(7), 0u);
    ch->answer(0, true);
    EXPECT_EQ(paths.state(7), State::Up);
    paths.bound(7, 100, cb);  // another session on the same connection
    paths.bound(7, 101, cb);  // and on another: the path is up, no more probes
    EXPECT_EQ(ch->sent.size(), 1u);
    EXPECT_EQ(paths.status_flags(8), 0u);  // a client never bound: nothing to say
}

TEST(CallbackPaths, AClosedConnectionMovesThePathOnOrDown) {
    auto ch = std::make_shared<FakeChannels>();
    CallbackPaths paths(ch, std::chrono::seconds(10));
    state::CallbackParams cb{0x40000000, 0, 0, 0};
    paths.bound(7, 100, cb);
    ch->answer(0, true);
    paths.bound(7, 101, cb);  // a second back connection, kept for later
    paths.connection_closed(100);
    ASSERT_EQ(ch->sent.size(), 2u) << "the next bound connection was not probed";
    EXPECT_EQ(ch->sent[1].conn, 101u);
    ch->answer(0, false);  // a late answer of the old probe changes nothing
    EXPECT_EQ(paths.state(7), State::Probing);
    ch->answer(1, true);
    EXPECT_EQ(paths.state(7), State::Up);
    paths.connection_closed(101);
    EXPECT_EQ(paths.state(7), State::Down);
    EXPECT_EQ(paths.status_flags(7), kDown);
    paths.connection_closed(999);  // not a path: nothing changes
    EXPECT_EQ(paths.status_flags(7), kDown);
    // BIND_CONN_TO_SESSION of a new connection: probed; refused: still down; another: up.
    paths.bound(7, 102, cb);
    ASSERT_EQ(ch->sent.size(), 3u);
    ch->answer(2, false);
    EXPECT_EQ(paths.status_flags(7), kDown);
    ch->dead.insert(103);
    paths.bound(7, 103, cb);  // a connection that carries no calls: down at once
    EXPECT_EQ(paths.state(7), State::Down);
    paths.bound(7, 104, cb);
    ch->answer(3, true);
    EXPECT_EQ(paths.status_flags(7), 0u);
    paths.forget(7);
    EXPECT_EQ(paths.state(7), State::Unknown);
}

TEST(CallbackPaths, NoChannelsNoProbes) {
    CallbackPaths paths(nullptr, std::chrono::seconds(10));
    EXPECT_FALSE(paths.enabled());
    paths.bound(7, 100, {});
    EXPECT_EQ(paths.state(7), State::Unknown);
    EXPECT_EQ(paths.status_flags(7), 0u);
}

}  // namespace
}  // namespace nfsrdmad::nfs::v4
