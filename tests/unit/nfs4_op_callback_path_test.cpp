// Whether the server can call a client back (nfs/v4/callback/path.h): one CB_NULL probe
// per client, not per session; the path's connection closing moves it to the next bound
// connection, or down; SEQ4_STATUS_CB_PATH_DOWN while down. Calls go to a fake
// rpc::BackChannels whose answers the test decides.
#include <gtest/gtest.h>

#include <set>

#include "nfs/v4/callback/path.h"
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

// The flags as SEQUENCE reads them, through the session's memo (state::Session::
// callback_memo): the same as the direct answer, and the same again once memoized. Each
// test below keeps its memos from step to step, so a change that did not move the paths'
// generation would leave one answering what was true before it.
uint32_t Seq(const CallbackPaths& paths, state::ClientId client, const state::SessionId& session,
             std::atomic<uint64_t>& memo) {
    const uint32_t flags = paths.status_flags(client, session, memo);
    EXPECT_EQ(flags, paths.status_flags(client, &session));
    EXPECT_EQ(paths.status_flags(client, session, memo), flags);
    return flags;
}

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

// The client's answer to a CB_COMPOUND: CB_SEQUENCE with `seq`, then each op with `op`.
rpc::CallbackResult CbAnswer(const rpc::BackCall& call, xdr::nfs4::nfsstat4 seq,
                             xdr::nfs4::nfsstat4 op) {
    namespace x4 = xdr::nfs4;
    xdr::Decoder d(call.args);
    x4::CB_COMPOUND4args a;
    EXPECT_TRUE(x4::xdr_decode(d, a));
    x4::CB_COMPOUND4res res;
    res.status = seq != x4::NFS4_OK ? seq : op;
    for (const auto& arg : a.argarray) {
        x4::nfs_cb_resop4 r(arg.argop());
        if (arg.argop() == x4::OP_CB_SEQUENCE) {
            r.opcbsequence().set_csr_status(seq);
            if (seq == x4::NFS4_OK) {
                r.opcbsequence().csr_resok4().csr_sessionid = arg.opcbsequence().csa_sessionid;
                r.opcbsequence().csr_resok4().csr_sequenceid = arg.opcbsequence().csa_sequenceid;
            }
            res.resarray.push_back(std::move(r));
            if (seq != x4::NFS4_OK) break;
        } else {
            r.opcbrecall().status = op;
            res.resarray.push_back(std::move(r));
        }
    }
    rpc::CallbackResult out;
    out.ok = true;
    xdr::Encoder e(out.results);
    x4::xdr_encode(e, res);
    return out;
}

// CB_SEQUENCE's slot and sequence id of a sent CB_COMPOUND.
std::pair<uint32_t, uint32_t> SlotOf(const rpc::BackCall& call) {
    xdr::Decoder d(call.args);
    xdr::nfs4::CB_COMPOUND4args a;
    EXPECT_TRUE(xdr::nfs4::xdr_decode(d, a));
    EXPECT_FALSE(a.argarray.empty());
    if (a.argarray.empty()) return {99, 99};
    const auto& s = a.argarray[0].opcbsequence();
    return {s.csa_slotid, s.csa_sequenceid};
}

TEST(CallbackPaths, CompoundsTakeTheSessionsSlotsInOrderAndMoveTheirSequence) {
    namespace x4 = xdr::nfs4;
    auto ch = std::make_shared<FakeChannels>();
    CallbackPaths paths(ch, std::chrono::seconds(10));
    state::CallbackParams cb{0x40000000, 0, 0, 0};
    cb.session[0] = 0x5e;
    cb.back_slots = 1;  // the Linux client's backchannel has one slot
    const auto later = CallbackPaths::Clock::now() + std::chrono::hours(1);
    std::vector<std::string> results;
    auto done = [&](std::optional<CbReply> r, const std::string& why) {
        results.push_back(r ? "status " + std::to_string(r->ops.empty() ? r->status : r->ops[0])
                            : "failed: " + why);
    };
    paths.compound(7, cb_recall({1, {}}, false, {}), later, done);
    ASSERT_EQ(results.size(), 1u) << "a client without a path must fail at once";
    paths.bound(7, 100, cb);
    ASSERT_EQ(ch->sent.size(), 1u);
    paths.compound(7, cb_recall({1, {}}, false, {}), later, done);  // waits for the probe
    EXPECT_EQ(ch->sent.size(), 1u);
    ch->answer(0, true);
    ASSERT_EQ(ch->sent.size(), 2u) << "the queue did not move once the path came up";
    EXPECT_EQ(ch->sent[1].call.proc, 1u);  // CB_COMPOUND
    EXPECT_EQ(SlotOf(ch->sent[1].call), std::make_pair(0u, 1u));
    paths.compound(7, cb_recall({1, {}}, false, {}), later, done);
    EXPECT_EQ(ch->sent.size(), 2u) << "two calls on one slot";
    EXPECT_EQ(paths.queued(7), 1u);
    ch->sent[1].done(CbAnswer(ch->sent[1].call, x4::NFS4_OK, x4::NFS4_OK));
    EXPECT_EQ(results.back(), "status 0");
    ASSERT_EQ(ch->sent.size(), 3u);
    EXPECT_EQ(SlotOf(ch->sent[2].call), std::make_pair(0u, 2u));
    // No reply (timed out): the path is down, the slot's sequence id stays.
    rpc::CallbackResult lost;
    lost.error = "no reply";
    paths.compound(7, cb_recall({1, {}}, false, {}), later, done);
    ch->sent[2].done(lost);
    EXPECT_EQ(results.back(), "failed: no reply");
    EXPECT_EQ(paths.state(7), State::Down);
    EXPECT_EQ(ch->sent.size(), 3u) << "sent on a path that is down";
    paths.bound(7, 100, cb);  // BIND_CONN_TO_SESSION: probed again
    ASSERT_EQ(ch->sent.size(), 4u);
    ch->answer(3, true);
    ASSERT_EQ(ch->sent.size(), 5u);
    EXPECT_EQ(SlotOf(ch->sent[4].call), std::make_pair(0u, 2u));
    // A client that says BAD_STATEID took the sequence id all the same.
    ch->sent[4].done(CbAnswer(ch->sent[4].call, x4::NFS4_OK, x4::NFS4ERR_BAD_STATEID));
    EXPECT_EQ(results.back(), "status " + std::to_string(x4::NFS4ERR_BAD_STATEID));
    paths.compound(7, cb_recall({1, {}}, false, {}), later, done);
    ASSERT_EQ(ch->sent.size(), 6u);
    EXPECT_EQ(SlotOf(ch->sent[5].call), std::make_pair(0u, 3u));
    // The client took an earlier call on this id whose reply was lost, and says this one
    // reuses it (§20.9.3 SEQ_FALSE_RETRY): the path stays up, the next call takes the
    // next id (before, every call after it met the same answer and the path went down).
    ch->sent[5].done(CbAnswer(ch->sent[5].call, x4::NFS4ERR_SEQ_FALSE_RETRY, x4::NFS4_OK));
    EXPECT_EQ(paths.state(7), State::Up);
    paths.compound(7, cb_recall({1, {}}, false, {}), later, done);
    ASSERT_EQ(ch->sent.size(), 7u);
    EXPECT_EQ(SlotOf(ch->sent[6].call), std::make_pair(0u, 4u));
    // CB_SEQUENCE refused (the session is gone at the client): path down.
    ch->sent[6].done(CbAnswer(ch->sent[6].call, x4::NFS4ERR_BADSESSION, x4::NFS4_OK));
    EXPECT_EQ(paths.status_flags(7), kDown);
}

TEST(CallbackPaths, TheQueueIsBoundedAndItsCallsEnd) {
    auto ch = std::make_shared<FakeChannels>();
    CallbackPaths paths(ch, std::chrono::seconds(10));
    state::CallbackParams cb{0x40000000, 0, 0, 0};
    paths.bound(7, 100, cb);  // probing: calls wait
    size_t failed = 0;
    auto done = [&](std::optional<CbReply> r, const std::string&) { failed += !r; };
    const auto now = CallbackPaths::Clock::now();
    paths.compound(7, cb_recall({1, {}}, false, {}), now - std::chrono::seconds(1), done);
    for (size_t i = 1; i < CallbackPaths::kMaxQueued; ++i)
        paths.compound(7, cb_recall({1, {}}, false, {}), now + std::chrono::hours(1), done);
    EXPECT_EQ(failed, 0u);
    paths.compound(7, cb_recall({1, {}}, false, {}), now + std::chrono::hours(1), done);
    EXPECT_EQ(failed, 1u) << "a full queue took one more";
    paths.tick();  // the first one's deadline has passed
    EXPECT_EQ(failed, 2u);
    EXPECT_EQ(paths.queued(7), CallbackPaths::kMaxQueued - 1);
    paths.forget(7);
    EXPECT_EQ(failed, 1 + CallbackPaths::kMaxQueued);
}

TEST(CallbackPaths, ADestroyedSessionsConnectionIsNoPathForIt) {
    auto ch = std::make_shared<FakeChannels>();
    CallbackPaths paths(ch, std::chrono::seconds(10));
    state::CallbackParams a{0x40000000, 0, 0, 0}, b = a;
    a.session[0] = 1;
    b.session[0] = 2;
    paths.bound(7, 100, a);
    ch->answer(0, true);
    paths.bound(7, 101, b);                 // up already: kept for later
    paths.session_destroyed(7, b.session);  // not the path's: nothing changes
    EXPECT_EQ(paths.state(7), State::Up);
    paths.bound(7, 101, b);
    paths.session_destroyed(7, a.session);  // the path's session: the other is probed
    ASSERT_EQ(ch->sent.size(), 2u);
    EXPECT_EQ(ch->sent[1].conn, 101u);
    ch->answer(1, true);
    EXPECT_EQ(paths.state(7), State::Up);
    paths.session_destroyed(7, b.session);
    EXPECT_EQ(paths.state(7), State::Down);
    EXPECT_EQ(paths.status_flags(7), kDown);
}

// §18.46.3: a session whose backchannel lost its connection hears
// SEQ4_STATUS_CB_PATH_DOWN_SESSION, while the client's path still works through another
// session; a session that never had a backchannel hears nothing.
TEST(CallbackPaths, ASessionWithoutItsBackConnectionIsToldSo) {
    constexpr uint32_t kSessionDown = xdr::nfs4::SEQ4_STATUS_CB_PATH_DOWN_SESSION;
    auto ch = std::make_shared<FakeChannels>();
    CallbackPaths paths(ch, std::chrono::seconds(10));
    std::atomic<uint64_t> ma{0}, mb{0}, mn{0};  // each session's memo
    state::CallbackParams a{0x40000000, 0, 0, 0}, b = a;
    a.session[0] = 1;
    b.session[0] = 2;
    state::SessionId none{};
    none[0] = 3;
    paths.bound(7, 100, a);
    ch->answer(0, true);
    paths.bound(7, 101, b);
    EXPECT_EQ(Seq(paths, 7, a.session, ma), 0u);
    EXPECT_EQ(Seq(paths, 7, b.session, mb), 0u);
    paths.connection_closed(101);  // b's only back connection; the path stays on 100
    EXPECT_EQ(paths.state(7), State::Up);
    EXPECT_EQ(Seq(paths, 7, a.session, ma), 0u);
    EXPECT_EQ(Seq(paths, 7, b.session, mb), kSessionDown);
    EXPECT_EQ(Seq(paths, 7, none, mn), 0u);
    paths.bound(7, 102, b);  // BIND_CONN_TO_SESSION: b has one again, no probe needed
    EXPECT_EQ(ch->sent.size(), 1u);
    EXPECT_EQ(Seq(paths, 7, b.session, mb), 0u);
    paths.connection_closed(100);  // the path moves to 102 (b's), a has none left
    ASSERT_EQ(ch->sent.size(), 2u);
    ch->answer(1, false);  // and 102 does not answer either: down for both
    EXPECT_EQ(Seq(paths, 7, a.session, ma), kDown | kSessionDown);
    EXPECT_EQ(Seq(paths, 7, b.session, mb), kDown | kSessionDown);
    EXPECT_EQ(Seq(paths, 7, none, mn), kDown);
}

// One connection may carry the backchannels of two sessions: binding it to one leaves the
// other's in place (no CB_PATH_DOWN_SESSION for either).
TEST(CallbackPaths, OneConnectionServesTwoSessionsBackchannels) {
    constexpr uint32_t kSessionDown = xdr::nfs4::SEQ4_STATUS_CB_PATH_DOWN_SESSION;
    auto ch = std::make_shared<FakeChannels>();
    CallbackPaths paths(ch, std::chrono::seconds(10));
    std::atomic<uint64_t> ma{0}, mb{0};  // each session's memo
    state::CallbackParams a{0x40000000, 0, 0, 0}, b = a;
    a.session[0] = 1;
    b.session[0] = 2;
    paths.bound(7, 100, a);
    ch->answer(0, true);
    paths.bound(7, 100, b);
    paths.bound(7, 100, a);
    EXPECT_EQ(Seq(paths, 7, a.session, ma), 0u);
    EXPECT_EQ(Seq(paths, 7, b.session, mb), 0u);
    paths.session_destroyed(7, a.session);  // the connection still serves b
    EXPECT_EQ(paths.state(7), State::Up);
    EXPECT_EQ(Seq(paths, 7, b.session, mb), 0u);
    paths.connection_closed(100);
    EXPECT_EQ(Seq(paths, 7, b.session, mb), kDown | kSessionDown);
}

// BACKCHANNEL_CTL (§18.33): the session's later calls carry the new program and security.
TEST(CallbackPaths, BackchannelCtlChangesTheCallsThatFollow) {
    namespace x4 = xdr::nfs4;
    auto ch = std::make_shared<FakeChannels>();
    CallbackPaths paths(ch, std::chrono::seconds(10));
    state::CallbackParams cb{0x40000000, 0, 0, 0};
    cb.session[0] = 9;
    paths.bound(7, 100, cb);
    ch->answer(0, true);
    state::CallbackParams changed{0x40000001, 1, 1000, 100};
    paths.set_params(7, cb.session, changed);
    paths.compound(7, cb_recall({1, {}}, false, {}),
                   CallbackPaths::Clock::now() + std::chrono::hours(1),
                   [](std::optional<CbReply>, const std::string&) {});
    ASSERT_EQ(ch->sent.size(), 2u);
    EXPECT_EQ(ch->sent[1].call.prog, 0x40000001u);
    EXPECT_EQ(ch->sent[1].call.flavor, 1u);
    EXPECT_EQ(ch->sent[1].call.uid, 1000u);
    EXPECT_EQ(ch->sent[1].call.gid, 100u);
    EXPECT_EQ(SlotOf(ch->sent[1].call), std::make_pair(0u, 1u)) << "the slots were reset";
    ch->sent[1].done(CbAnswer(ch->sent[1].call, x4::NFS4_OK, x4::NFS4_OK));
}

// A probe refused (a program the client does not serve): the path is down until
// BACKCHANNEL_CTL gives another program, which is probed at once.
TEST(CallbackPaths, BackchannelCtlProbesAPathThatIsDownAgain) {
    auto ch = std::make_shared<FakeChannels>();
    CallbackPaths paths(ch, std::chrono::seconds(10));
    state::CallbackParams cb{0x40000000, 0, 0, 0};
    cb.session[0] = 9;
    paths.bound(7, 100, cb);
    ASSERT_EQ(ch->sent.size(), 1u);
    ch->answer(0, false);
    EXPECT_EQ(paths.state(7), State::Down);
    state::CallbackParams fixed{0x40000001, 0, 0, 0};
    paths.set_params(7, cb.session, fixed);
    ASSERT_EQ(ch->sent.size(), 2u) << "no probe after BACKCHANNEL_CTL";
    EXPECT_EQ(ch->sent[1].conn, 100u);
    EXPECT_EQ(ch->sent[1].call.proc, 0u);  // CB_NULL
    EXPECT_EQ(ch->sent[1].call.prog, 0x40000001u);
    ch->answer(1, true);
    EXPECT_EQ(paths.state(7), State::Up);
    EXPECT_EQ(paths.status_flags(7), 0u);
    // Up already: BACKCHANNEL_CTL probes nothing.
    paths.set_params(7, cb.session, cb);
    EXPECT_EQ(ch->sent.size(), 2u);
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
