// NFSv4.1 sessions (RFC 8881 §2.10): CREATE_SESSION's reply cache and channel attributes
// (§18.36), SEQUENCE's slot rules and reply cache (§2.10.6, §18.46), DESTROY_SESSION (§18.37)
// and connection binding (§18.34).
#include <gtest/gtest.h>

#include <atomic>
#include <string>
#include <thread>

#include "tests/unit/v4_state_util.h"

using namespace nfsrdmad::nfs::v4::state;
using namespace nfsrdmad::nfs::v4::state::testing;

namespace {

std::vector<uint8_t> bytes(size_t n, uint8_t fill) {
    return std::vector<uint8_t>(n, fill);
}

// ---- CREATE_SESSION ----

TEST(CreateSession, ConfirmsAndReplaysFromItsOneSlotCache) {
    FakeClock clock;
    ClientTable t(clock, 7);
    ExchangeIdResult e = t.exchange_id(exid("h", 1, "sys:0"));
    ASSERT_EQ(e.status, x4::NFS4_OK);
    // Before any CREATE_SESSION the slot holds eir_sequenceid - 1 and a contrived
    // SEQ_MISORDERED result (§18.36.4).
    CreateSessionResult contrived = t.create_session(csa(e.clientid, e.sequenceid - 1, "sys:0"));
    EXPECT_EQ(contrived.status, x4::NFS4ERR_SEQ_MISORDERED);
    EXPECT_FALSE(t.confirmed(e.clientid));
    // Misordered: more than one ahead.
    EXPECT_EQ(t.create_session(csa(e.clientid, e.sequenceid + 1, "sys:0")).status,
              x4::NFS4ERR_SEQ_MISORDERED);

    CreateSessionResult first = t.create_session(csa(e.clientid, e.sequenceid, "sys:0"));
    ASSERT_EQ(first.status, x4::NFS4_OK);
    EXPECT_FALSE(first.replay);
    EXPECT_EQ(first.sequence, e.sequenceid);
    EXPECT_TRUE(t.confirmed(e.clientid));
    // The confirmed record now answers EXCHANGE_ID case 2 with CONFIRMED_R.
    EXPECT_TRUE(t.exchange_id(exid("h", 1, "sys:0")).flags & x4::EXCHGID4_FLAG_CONFIRMED_R);

    // A retry: the cached result, no second session.
    CreateSessionResult replay = t.create_session(csa(e.clientid, e.sequenceid, "sys:0"));
    EXPECT_EQ(replay.status, x4::NFS4_OK);
    EXPECT_TRUE(replay.replay);
    EXPECT_EQ(replay.sessionid, first.sessionid);
    EXPECT_EQ(replay.fore, first.fore);
    EXPECT_EQ(t.session_count(e.clientid), 1u);

    EXPECT_EQ(t.create_session(csa(e.clientid, e.sequenceid + 2, "sys:0")).status,
              x4::NFS4ERR_SEQ_MISORDERED);
    CreateSessionResult second = t.create_session(csa(e.clientid, e.sequenceid + 1, "sys:0"));
    ASSERT_EQ(second.status, x4::NFS4_OK);
    EXPECT_NE(second.sessionid, first.sessionid);
    EXPECT_EQ(t.session_count(e.clientid), 2u);
}

// csa_cb_program and csa_sec_parms (RFC 8881 §18.36.3) stay with the session: the first
// AUTH_NONE or AUTH_SYS entry, AUTH_NONE for an empty list; an RPCSEC_GSS handle cannot exist
// on this server, so a list of those alone is NOENT, and that error changes nothing (the same
// csa_sequence works next).
TEST(CreateSession, KeepsTheCallbackProgramAndSecurity) {
    FakeClock clock;
    ClientTable t(clock, 7);
    ExchangeIdResult e = t.exchange_id(exid("cb", 1, "sys:0"));
    ASSERT_EQ(e.status, x4::NFS4_OK);

    CreateSessionArgs gss = csa(e.clientid, e.sequenceid, "sys:0");
    gss.cb_sec_parms.emplace_back(x4::RPCSEC_GSS);
    EXPECT_EQ(t.create_session(gss).status, x4::NFS4ERR_NOENT);
    EXPECT_FALSE(t.confirmed(e.clientid));

    CreateSessionArgs a = csa(e.clientid, e.sequenceid, "sys:0");
    a.cb_program = 0x40000123;
    a.cb_sec_parms.emplace_back(x4::AUTH_SYS);
    a.cb_sec_parms.back().cbsp_sys_cred().uid = 42;
    a.cb_sec_parms.back().cbsp_sys_cred().gid = 43;
    a.cb_sec_parms.emplace_back(x4::AUTH_NONE);
    CreateSessionResult r = t.create_session(a);
    ASSERT_EQ(r.status, x4::NFS4_OK);
    SequenceResult sr = t.sequence(seq(r.sessionid, 0, 1));
    ASSERT_EQ(sr.status, x4::NFS4_OK);
    ASSERT_TRUE(sr.session);
    CallbackParams cb = sr.session->callback();
    EXPECT_EQ(cb.program, 0x40000123u);
    EXPECT_EQ(cb.flavor, x4::AUTH_SYS);
    EXPECT_EQ(cb.uid, 42u);
    EXPECT_EQ(cb.gid, 43u);

    // BACKCHANNEL_CTL's rule (§18.33.3) is the same function: an empty list is AUTH_NONE.
    CallbackParams none{7, x4::AUTH_SYS, 1, 1};
    EXPECT_EQ(choose_callback_security({}, none), x4::NFS4_OK);
    EXPECT_EQ(none.program, 7u);
    EXPECT_EQ(none.flavor, x4::AUTH_NONE);

    // An RPCSEC_GSS entry (no such context here) is passed over for the next usable one;
    // a list of such entries alone is NOENT.
    std::vector<x4::callback_sec_parms4> mixed;
    mixed.emplace_back(x4::RPCSEC_GSS);
    mixed.emplace_back(x4::AUTH_SYS).cbsp_sys_cred().uid = 5;
    CallbackParams got{9};
    EXPECT_EQ(choose_callback_security(mixed, got), x4::NFS4_OK);
    EXPECT_EQ(got.flavor, x4::AUTH_SYS);
    EXPECT_EQ(got.uid, 5u);
    mixed.pop_back();
    EXPECT_EQ(choose_callback_security(mixed, got), x4::NFS4ERR_NOENT);
}

TEST(CreateSession, AnotherPrincipalCannotConfirm) {
    FakeClock clock;
    ClientTable t(clock, 7);
    ExchangeIdResult e = t.exchange_id(exid("h", 1, "sys:0"));
    // §18.36.4 "Unsuccessful Confirmation": CLID_INUSE and no change, the slot included.
    EXPECT_EQ(t.create_session(csa(e.clientid, e.sequenceid, "sys:5")).status,
              x4::NFS4ERR_CLID_INUSE);
    EXPECT_FALSE(t.confirmed(e.clientid));
    EXPECT_EQ(t.create_session(csa(e.clientid, e.sequenceid, "sys:0")).status, x4::NFS4_OK);
}

TEST(CreateSession, UnknownClientIsStale) {
    FakeClock clock;
    ClientTable t(clock, 7);
    EXPECT_EQ(t.create_session(csa(ClientId{7} << 32 | 99, 1, "sys:0")).status,
              x4::NFS4ERR_STALE_CLIENTID);
}

TEST(CreateSession, ChannelAttributesAreClampedToTheServer) {
    FakeClock clock;
    Limits l;
    l.fore.max_request_size = 8192;
    l.fore.max_response_size = 9000;
    l.fore.max_response_size_cached = 1024;
    l.fore.max_operations = 12;
    l.fore.max_slots = 4;
    l.fore.max_rdma_ird = 8;
    ClientTable t(clock, 7, l);
    ExchangeIdResult e = t.exchange_id(exid("h", 1, "sys:0"));
    CreateSessionArgs a = csa(e.clientid, e.sequenceid, "sys:0");
    a.fore.header_pad_size = 64;
    a.fore.max_request_size = 1 << 20;
    a.fore.max_response_size = 1 << 20;
    a.fore.max_response_size_cached = 1 << 20;
    a.fore.max_operations = 100;
    a.fore.max_requests = 1000;
    a.fore.rdma_ird = {100};
    a.back.max_operations = 3;
    a.back.max_requests = 5;
    a.flags = x4::CREATE_SESSION4_FLAG_PERSIST | x4::CREATE_SESSION4_FLAG_CONN_BACK_CHAN |
              x4::CREATE_SESSION4_FLAG_CONN_RDMA;
    CreateSessionResult r = t.create_session(a);
    ASSERT_EQ(r.status, x4::NFS4_OK);
    EXPECT_EQ(r.fore.header_pad_size, 0u);
    EXPECT_EQ(r.fore.max_request_size, 8192u);
    EXPECT_EQ(r.fore.max_response_size, 9000u);
    EXPECT_EQ(r.fore.max_response_size_cached, 1024u);
    EXPECT_EQ(r.fore.max_operations, 12u);
    EXPECT_EQ(r.fore.max_requests, 4u);
    EXPECT_EQ(r.fore.rdma_ird, std::vector<uint32_t>{8});
    // The back channel's operations and requests are the client's (§18.36.3 MUST NOT change).
    EXPECT_EQ(r.back.max_operations, 3u);
    EXPECT_EQ(r.back.max_requests, 5u);
    // No persistent cache, no RDMA step-up, no backchannel in this server.
    EXPECT_EQ(r.flags, 0u);

    // Smaller than the server's: kept as offered.
    CreateSessionArgs small = csa(e.clientid, e.sequenceid + 1, "sys:0", 1, 2);
    CreateSessionResult s = t.create_session(small);
    ASSERT_EQ(s.status, x4::NFS4_OK);
    EXPECT_EQ(s.fore.max_requests, 2u);
    EXPECT_EQ(s.fore.max_operations, 8u);
    EXPECT_TRUE(s.fore.rdma_ird.empty());
}

TEST(CreateSession, BadChannelAttributes) {
    FakeClock clock;
    ClientTable t(clock, 7);
    ExchangeIdResult e = t.exchange_id(exid("h", 1, "sys:0"));
    CreateSessionArgs a = csa(e.clientid, e.sequenceid, "sys:0");
    a.fore.rdma_ird = {1, 2};  // ca_rdma_ird<1>
    EXPECT_EQ(t.create_session(a).status, x4::NFS4ERR_INVAL);
    a = csa(e.clientid, e.sequenceid, "sys:0");
    a.back.rdma_ird = {1, 2};
    EXPECT_EQ(t.create_session(a).status, x4::NFS4ERR_INVAL);
    a = csa(e.clientid, e.sequenceid, "sys:0");
    a.fore.max_response_size = 16;
    EXPECT_EQ(t.create_session(a).status, x4::NFS4ERR_TOOSMALL);
    a = csa(e.clientid, e.sequenceid, "sys:0");
    a.fore.max_requests = 0;
    EXPECT_EQ(t.create_session(a).status, x4::NFS4ERR_TOOSMALL);
    // None of these touched the slot: the right request still is the next one.
    EXPECT_FALSE(t.confirmed(e.clientid));
    EXPECT_EQ(t.create_session(csa(e.clientid, e.sequenceid, "sys:0")).status, x4::NFS4_OK);
}

TEST(CreateSession, SessionsPerClientAreBoundedByNospc) {
    FakeClock clock;
    Limits l;
    l.max_sessions_per_client = 2;
    ClientTable t(clock, 7, l);
    Confirmed c = confirm(t, "h", "sys:0");
    CreateSessionResult two = t.create_session(csa(c.clientid, c.next_cs_sequence, "sys:0"));
    ASSERT_EQ(two.status, x4::NFS4_OK);
    EXPECT_EQ(t.create_session(csa(c.clientid, c.next_cs_sequence + 1, "sys:0")).status,
              x4::NFS4ERR_NOSPC);
    ASSERT_EQ(t.destroy_session(two.sessionid, 1, "sys:0", std::nullopt), x4::NFS4_OK);
    // The refused request left the slot alone: the same sequence now succeeds.
    EXPECT_EQ(t.create_session(csa(c.clientid, c.next_cs_sequence + 1, "sys:0")).status,
              x4::NFS4_OK);
}

TEST(CreateSession, SessionIdCarriesTheEpochAndDiffers) {
    FakeClock clock;
    ClientTable t(clock, 0x01020304);
    Confirmed a = confirm(t, "a", "sys:0");
    Confirmed b = confirm(t, "b", "sys:0");
    EXPECT_NE(a.sessionid, b.sessionid);
    for (const SessionId& s : {a.sessionid, b.sessionid}) {
        EXPECT_EQ(s[0], 1);
        EXPECT_EQ(s[1], 2);
        EXPECT_EQ(s[2], 3);
        EXPECT_EQ(s[3], 4);
    }
}

// ---- SEQUENCE ----

class Sequence : public ::testing::Test {
  protected:
    FakeClock clock;
    ClientTable t{clock, 7};
    Confirmed c = confirm(t, "h", "sys:0");
};

TEST_F(Sequence, NewRequestThenCachedReplay) {
    SequenceResult r = t.sequence(seq(c.sessionid, 0, 1, true));
    ASSERT_EQ(r.status, x4::NFS4_OK);
    EXPECT_FALSE(r.replay);
    EXPECT_EQ(r.clientid, c.clientid);
    EXPECT_EQ(r.highest_slotid, 7u);
    EXPECT_EQ(r.target_highest_slotid, 7u);
    EXPECT_EQ(r.status_flags, 0u);
    ASSERT_TRUE(r.session);
    const std::vector<uint8_t> reply = bytes(100, 0xab);
    ASSERT_EQ(r.session->finish(0, 1, reply), x4::NFS4_OK);

    SequenceResult again = t.sequence(seq(c.sessionid, 0, 1, true));
    ASSERT_EQ(again.status, x4::NFS4_OK);
    EXPECT_TRUE(again.replay);
    ASSERT_TRUE(again.reply);
    EXPECT_EQ(*again.reply, reply);
    EXPECT_FALSE(again.session);  // nothing to finish

    // The next request drops the cached reply and starts again.
    SequenceResult next = t.sequence(seq(c.sessionid, 0, 2, true));
    ASSERT_EQ(next.status, x4::NFS4_OK);
    EXPECT_FALSE(next.replay);
    EXPECT_EQ(next.session->cached_bytes(), 0u);
}

TEST_F(Sequence, ReplayOfAnUncachedRequest) {
    SequenceResult r = t.sequence(seq(c.sessionid, 1, 1, false));
    ASSERT_EQ(r.status, x4::NFS4_OK);
    ASSERT_EQ(r.session->finish(1, 1, bytes(10, 1)), x4::NFS4_OK);
    EXPECT_EQ(r.session->cached_bytes(), 0u);
    EXPECT_EQ(t.sequence(seq(c.sessionid, 1, 1, false)).status, x4::NFS4ERR_RETRY_UNCACHED_REP);
    EXPECT_EQ(t.sequence(seq(c.sessionid, 1, 1, true)).status, x4::NFS4ERR_RETRY_UNCACHED_REP);
}

TEST_F(Sequence, ReplayWhileTheOriginalIsInProgress) {
    SequenceResult r = t.sequence(seq(c.sessionid, 2, 1, true));
    ASSERT_EQ(r.status, x4::NFS4_OK);
    EXPECT_EQ(t.sequence(seq(c.sessionid, 2, 1, true)).status, x4::NFS4ERR_DELAY);
    ASSERT_EQ(r.session->finish(2, 1, bytes(5, 2)), x4::NFS4_OK);
    EXPECT_TRUE(t.sequence(seq(c.sessionid, 2, 1, true)).replay);
}

TEST_F(Sequence, MisorderedSeqids) {
    // A fresh slot's first request is 1 (§18.36.3): 0 and 2 are misordered.
    EXPECT_EQ(t.sequence(seq(c.sessionid, 3, 0)).status, x4::NFS4ERR_SEQ_MISORDERED);
    EXPECT_EQ(t.sequence(seq(c.sessionid, 3, 2)).status, x4::NFS4ERR_SEQ_MISORDERED);
    SequenceResult r = t.sequence(seq(c.sessionid, 3, 1));
    ASSERT_EQ(r.status, x4::NFS4_OK);
    ASSERT_EQ(r.session->finish(3, 1, std::nullopt), x4::NFS4_OK);
    EXPECT_EQ(t.sequence(seq(c.sessionid, 3, 3)).status, x4::NFS4ERR_SEQ_MISORDERED);
    EXPECT_EQ(t.sequence(seq(c.sessionid, 3, 0xffffffffu)).status, x4::NFS4ERR_SEQ_MISORDERED);
    // Slots are independent.
    EXPECT_EQ(t.sequence(seq(c.sessionid, 4, 1)).status, x4::NFS4_OK);
}

TEST_F(Sequence, BadSlotAndHighestSlot) {
    EXPECT_EQ(t.sequence(seq(c.sessionid, 8, 1)).status, x4::NFS4ERR_BADSLOT);
    EXPECT_EQ(t.sequence(seq(c.sessionid, 7, 1, true, 1, 7)).status, x4::NFS4_OK);
    EXPECT_EQ(t.sequence(seq(c.sessionid, 0, 1, true, 1, 8)).status, x4::NFS4ERR_BAD_HIGH_SLOT);
}

TEST_F(Sequence, TargetHighestSlot) {
    SequenceResult r = t.sequence(seq(c.sessionid, 0, 1));
    ASSERT_EQ(r.status, x4::NFS4_OK);
    r.session->set_target_highest_slotid(3);
    ASSERT_EQ(r.session->finish(0, 1, std::nullopt), x4::NFS4_OK);
    SequenceResult n = t.sequence(seq(c.sessionid, 0, 2));
    EXPECT_EQ(n.highest_slotid, 7u);
    EXPECT_EQ(n.target_highest_slotid, 3u);
    n.session->set_target_highest_slotid(100);
    EXPECT_EQ(t.sequence(seq(c.sessionid, 1, 1)).target_highest_slotid, 7u);
}

TEST_F(Sequence, UnknownSessionIsBadSession) {
    SessionId other = c.sessionid;
    other[15] ^= 1;
    EXPECT_EQ(t.sequence(seq(other, 0, 1)).status, x4::NFS4ERR_BADSESSION);
}

TEST_F(Sequence, CachedReplyIsBoundedByMaxResponseSizeCached) {
    SequenceResult r = t.sequence(seq(c.sessionid, 0, 1, true));
    ASSERT_EQ(r.status, x4::NFS4_OK);
    const uint32_t max = r.session->fore().max_response_size_cached;
    EXPECT_EQ(max, 2048u);
    EXPECT_EQ(r.session->finish(0, 1, bytes(max + 1, 3)), x4::NFS4ERR_REP_TOO_BIG_TO_CACHE);
    // Still in progress: the caller encodes the error reply and finishes with it.
    EXPECT_EQ(t.sequence(seq(c.sessionid, 0, 1, true)).status, x4::NFS4ERR_DELAY);
    ASSERT_EQ(r.session->finish(0, 1, bytes(max, 4)), x4::NFS4_OK);
    EXPECT_EQ(r.session->cached_bytes(), max);
    // Every slot full: at most slots * max bytes per session.
    for (uint32_t slot = 1; slot < 8; ++slot) {
        SequenceResult s = t.sequence(seq(c.sessionid, slot, 1, true, 1, 7));
        ASSERT_EQ(s.status, x4::NFS4_OK);
        ASSERT_EQ(s.session->finish(slot, 1, bytes(max, 5)), x4::NFS4_OK);
    }
    EXPECT_EQ(r.session->cached_bytes(), 8u * max);
}

TEST_F(Sequence, FinishThatMatchesNoRequestIsServerfault) {
    SequenceResult r = t.sequence(seq(c.sessionid, 0, 1));
    ASSERT_EQ(r.status, x4::NFS4_OK);
    EXPECT_EQ(r.session->finish(0, 2, std::nullopt), x4::NFS4ERR_SERVERFAULT);
    EXPECT_EQ(r.session->finish(1, 1, std::nullopt), x4::NFS4ERR_SERVERFAULT);
    EXPECT_EQ(r.session->finish(99, 1, std::nullopt), x4::NFS4ERR_SERVERFAULT);
    EXPECT_EQ(r.session->finish(0, 1, std::nullopt), x4::NFS4_OK);
    EXPECT_EQ(r.session->finish(0, 1, std::nullopt), x4::NFS4ERR_SERVERFAULT);
}

TEST_F(Sequence, StatusFlags) {
    t.set_external_status_flags(c.clientid, x4::SEQ4_STATUS_CB_PATH_DOWN);
    StateidTable::Result st = t.new_stateid(c.clientid, StateKind::Delegation);
    ASSERT_EQ(st.status, x4::NFS4_OK);
    ASSERT_EQ(t.revoke_stateid(st.stateid, x4::NFS4ERR_DELEG_REVOKED), x4::NFS4_OK);
    StateidTable::Result st2 = t.new_stateid(c.clientid, StateKind::Open);
    ASSERT_EQ(t.revoke_stateid(st2.stateid, x4::NFS4ERR_EXPIRED), x4::NFS4_OK);
    SequenceResult r = t.sequence(seq(c.sessionid, 0, 1));
    EXPECT_EQ(r.status_flags, x4::SEQ4_STATUS_CB_PATH_DOWN |
                                  x4::SEQ4_STATUS_RECALLABLE_STATE_REVOKED |
                                  x4::SEQ4_STATUS_EXPIRED_SOME_STATE_REVOKED);
    // A second expired stateid: the flag stays until both are freed.
    StateidTable::Result st3 = t.new_stateid(c.clientid, StateKind::Lock);
    ASSERT_EQ(t.revoke_stateid(st3.stateid, x4::NFS4ERR_EXPIRED), x4::NFS4_OK);
    ASSERT_EQ(t.free_stateid(c.clientid, st.stateid, false), x4::NFS4_OK);
    ASSERT_EQ(t.free_stateid(c.clientid, st2.stateid, false), x4::NFS4_OK);
    t.set_external_status_flags(c.clientid, 0);
    EXPECT_EQ(t.sequence(seq(c.sessionid, 1, 1)).status_flags,
              x4::SEQ4_STATUS_EXPIRED_SOME_STATE_REVOKED);
    ASSERT_EQ(t.free_stateid(c.clientid, st3.stateid, false), x4::NFS4_OK);
    EXPECT_EQ(t.sequence(seq(c.sessionid, 2, 1)).status_flags, 0u);
}

// ---- DESTROY_SESSION ----

TEST_F(Sequence, DestroySessionWithARequestInProgress) {
    SequenceResult busy = t.sequence(seq(c.sessionid, 5, 1));
    ASSERT_EQ(busy.status, x4::NFS4_OK);
    // Another slot is in progress: NFS4ERR_DELAY, nothing changes.
    EXPECT_EQ(t.destroy_session(c.sessionid, 1, "sys:0", std::nullopt), x4::NFS4ERR_DELAY);
    EXPECT_EQ(t.destroy_session(c.sessionid, 1, "sys:0", 0), x4::NFS4ERR_DELAY);
    // Its own SEQUENCE's slot is not "another request".
    EXPECT_EQ(t.destroy_session(c.sessionid, 1, "sys:0", 5), x4::NFS4_OK);
    EXPECT_EQ(t.session_count(c.clientid), 0u);
    // The worker still holding the session finishes harmlessly; the session is gone.
    EXPECT_TRUE(busy.session->dead());
    EXPECT_EQ(busy.session->finish(5, 1, bytes(4, 0)), x4::NFS4_OK);
    EXPECT_EQ(t.sequence(seq(c.sessionid, 0, 1)).status, x4::NFS4ERR_BADSESSION);
    EXPECT_EQ(t.destroy_session(c.sessionid, 1, "sys:0", std::nullopt), x4::NFS4ERR_BADSESSION);
    // The client and its lease are not affected (§18.37.3).
    EXPECT_TRUE(t.confirmed(c.clientid));
}

TEST_F(Sequence, DestroySessionOnAnUnboundConnection) {
    EXPECT_EQ(t.destroy_session(c.sessionid, 42, "sys:0", std::nullopt),
              x4::NFS4ERR_CONN_NOT_BOUND_TO_SESSION);
    // A SEQUENCE on connection 42 binds it (SP4_NONE), then it may.
    SequenceResult r = t.sequence(seq(c.sessionid, 0, 1, true, 42));
    ASSERT_EQ(r.status, x4::NFS4_OK);
    EXPECT_EQ(t.destroy_session(c.sessionid, 42, "sys:0", 0), x4::NFS4_OK);
}

TEST_F(Sequence, DestroySessionOnABackChannelConnection) {
    ASSERT_EQ(t.bind_conn_to_session(c.sessionid, 3, x4::CDFC4_BACK, "sys:0").status, x4::NFS4_OK);
    EXPECT_EQ(t.destroy_session(c.sessionid, 3, "sys:0", std::nullopt), x4::NFS4_OK);
}

// The daemon's state clock is the coarse monotonic one: never ahead of steady_clock, never
// more than a tick or so behind it (leases and grace count in seconds).
TEST(SteadyClockTest, IsTheSteadyClockATickBehindAtMost) {
    SteadyClock clock;
    for (int i = 0; i < 1000; ++i) {
        const auto coarse = clock.now();
        const auto precise = std::chrono::steady_clock::now();
        EXPECT_LE(coarse, precise);
        EXPECT_GT(coarse, precise - std::chrono::milliseconds(100));  // HZ=100: 10 ms a tick
    }
}

// Workers call concurrently: each thread drives its own slot while another thread creates and
// destroys sessions and runs the lease timer. Every request on a live slot must succeed and
// every reply must come back from the cache; ASan/TSan builds check the locking.
TEST(Concurrency, SlotsOfOneSessionInParallelWithTableChanges) {
    SteadyClock clock;
    ClientTable t(clock, 7);
    Confirmed c = confirm(t, "h", "sys:0");
    constexpr uint32_t kThreads = 4, kRequests = 2000;
    std::atomic<uint32_t> failures{0};
    std::vector<std::thread> workers;
    for (uint32_t slot = 0; slot < kThreads; ++slot) {
        workers.emplace_back([&, slot] {
            for (uint32_t n = 1; n <= kRequests; ++n) {
                SequenceResult r = t.sequence(seq(c.sessionid, slot, n, true, 1, kThreads - 1));
                const std::vector<uint8_t> reply(8, static_cast<uint8_t>(n));
                if (r.status != x4::NFS4_OK || !r.session ||
                    r.session->finish(slot, n, reply) != x4::NFS4_OK) {
                    ++failures;
                    continue;
                }
                SequenceResult again = t.sequence(seq(c.sessionid, slot, n, true, 1, kThreads - 1));
                if (!again.replay || *again.reply != reply) ++failures;
            }
        });
    }
    std::thread churn([&] {
        uint32_t sequence = c.next_cs_sequence;
        for (int i = 0; i < 200; ++i) {
            CreateSessionResult s = t.create_session(csa(c.clientid, sequence++, "sys:0", 5));
            if (s.status != x4::NFS4_OK ||
                t.destroy_session(s.sessionid, 5, "sys:0", std::nullopt) != x4::NFS4_OK)
                ++failures;
            Confirmed other = confirm(t, "o" + std::to_string(i), "sys:1", 6);
            if (t.destroy_session(other.sessionid, 6, "sys:1", std::nullopt) != x4::NFS4_OK ||
                t.destroy_clientid(other.clientid, "sys:1") != x4::NFS4_OK)
                ++failures;
            t.expired_clients();
            t.connection_closed(6);
        }
    });
    for (std::thread& w : workers) w.join();
    churn.join();
    EXPECT_EQ(failures.load(), 0u);
    EXPECT_EQ(t.client_count(), 1u);
    EXPECT_EQ(t.session_count(c.clientid), 1u);
}

// ---- connections ----

// A slot remembers the connection it last found bound to the fore channel (Session::begin),
// and forgets it when the bindings change: unbound, it is unbound at once; bound to the
// back channel only, it is no fore channel; bound again, it works again.
TEST(SessionSlots, ASlotRemembersItsConnectionOnlyUntilTheBindingsChange) {
    ChannelAttrs fore;
    fore.max_requests = 4;
    fore.max_response_size_cached = 4096;
    Session s(SessionId{}, 1, fore, ChannelAttrs{}, 0, 8);
    const ConnId c5 = 5, c6 = 6;
    x4::channel_dir_from_server4 dir;
    ASSERT_EQ(s.bind(c5, x4::CDFC4_FORE, dir), x4::NFS4_OK);
    uint32_t seqid = 0;
    auto begin = [&](uint32_t slot, ConnId conn) {
        SlotResult r = s.begin(slot, seqid + 1, 0, false, &conn);
        if (r.status == x4::NFS4_OK && !r.unbound && !r.replay) {
            ++seqid;
            EXPECT_EQ(s.finish(slot, seqid, std::nullopt), x4::NFS4_OK);
        }
        return r;
    };
    EXPECT_FALSE(begin(0, c5).unbound);
    EXPECT_FALSE(begin(0, c5).unbound);  // remembered
    EXPECT_TRUE(begin(0, c6).unbound);   // another connection is looked up, and is not bound
    ASSERT_TRUE(s.unbind(c5));
    EXPECT_TRUE(begin(0, c5).unbound);
    ASSERT_EQ(s.bind(c5, x4::CDFC4_BACK, dir), x4::NFS4_OK);
    EXPECT_TRUE(begin(0, c5).unbound);
    ASSERT_EQ(s.bind(c5, x4::CDFC4_FORE_OR_BOTH, dir), x4::NFS4_OK);
    EXPECT_FALSE(begin(0, c5).unbound);
    EXPECT_EQ(begin(0, c5).status, x4::NFS4_OK);
    // A slot beyond the table (no slot to remember anything): the binding is looked up, then
    // BADSLOT; unbound first when the connection is not bound.
    EXPECT_FALSE(begin(7, c5).unbound);
    EXPECT_EQ(begin(7, c5).status, x4::NFS4ERR_BADSLOT);
    EXPECT_TRUE(begin(7, c6).unbound);
    s.mark_dead();  // its bindings go with it
    EXPECT_TRUE(begin(0, c5).unbound);
    EXPECT_TRUE(begin(7, c5).unbound);
    // Dead, a slot beyond the table is BADSESSION before BADSLOT, as a slot within it is.
    EXPECT_EQ(s.begin(7, 1, 0, false).status, x4::NFS4ERR_BADSESSION);
    EXPECT_EQ(s.begin(0, seqid + 1, 0, false).status, x4::NFS4ERR_BADSESSION);
}

// A session destroyed while requests begin and end on its slots from other threads: it is
// destroyed only when no other slot is in progress, and no request begins after.
TEST(SessionSlots, DestroyWaitsForEverySlotAndNothingBeginsAfter) {
    ChannelAttrs fore;
    fore.max_requests = 4;
    fore.max_response_size_cached = 4096;
    Session s(SessionId{}, 1, fore, ChannelAttrs{}, 0, 8);
    std::atomic<bool> destroyed{false};
    std::atomic<uint32_t> begun_after{0}, finished{0};
    std::vector<std::thread> workers;
    for (uint32_t slot = 1; slot < 4; ++slot) {
        workers.emplace_back([&, slot] {
            for (uint32_t n = 1; n <= 20000; ++n) {
                const bool was = destroyed.load();
                SlotResult r = s.begin(slot, n, 0, false);
                if (r.status == x4::NFS4ERR_BADSESSION) break;
                if (was) ++begun_after;
                EXPECT_EQ(r.status, x4::NFS4_OK);
                EXPECT_EQ(s.finish(slot, n, std::nullopt), x4::NFS4_OK);
                ++finished;
            }
        });
    }
    while (finished.load() < 3000) std::this_thread::yield();  // all three under way
    Status st;
    while ((st = s.try_destroy(0)) == x4::NFS4ERR_DELAY) std::this_thread::yield();
    destroyed = true;
    EXPECT_EQ(st, x4::NFS4_OK);
    for (std::thread& w : workers) w.join();
    EXPECT_EQ(begun_after.load(), 0u);
    EXPECT_FALSE(s.in_progress());
    EXPECT_EQ(s.try_destroy(0), x4::NFS4ERR_BADSESSION);
}

TEST_F(Sequence, ConnectionsAreBoundNotOwners) {
    auto r = t.bind_conn_to_session(c.sessionid, 2, x4::CDFC4_FORE_OR_BOTH, "sys:0");
    EXPECT_EQ(r.status, x4::NFS4_OK);
    EXPECT_EQ(r.dir, x4::CDFS4_BOTH);
    r = t.bind_conn_to_session(c.sessionid, 3, x4::CDFC4_BACK, "sys:0");
    EXPECT_EQ(r.dir, x4::CDFS4_BACK);
    r = t.bind_conn_to_session(c.sessionid, 4, x4::CDFC4_FORE, "sys:0");
    EXPECT_EQ(r.dir, x4::CDFS4_FORE);
    SessionId other = c.sessionid;
    other[0] ^= 0xff;
    EXPECT_EQ(t.bind_conn_to_session(other, 2, x4::CDFC4_FORE, "sys:0").status,
              x4::NFS4ERR_BADSESSION);
    // Every connection closes: the session stays, a new connection picks it up.
    for (ConnId conn : {1, 2, 3, 4}) t.connection_closed(conn);
    SequenceResult s = t.sequence(seq(c.sessionid, 0, 1, true, 9));
    EXPECT_EQ(s.status, x4::NFS4_OK);
    EXPECT_EQ(s.session->connections(), 1u);
}

TEST(Connections, BoundedPerSession) {
    FakeClock clock;
    Limits l;
    l.max_connections_per_session = 2;
    ClientTable t(clock, 7, l);
    Confirmed c = confirm(t, "h", "sys:0");  // connection 1
    EXPECT_EQ(t.bind_conn_to_session(c.sessionid, 2, x4::CDFC4_FORE, "sys:0").status, x4::NFS4_OK);
    EXPECT_EQ(t.bind_conn_to_session(c.sessionid, 3, x4::CDFC4_FORE, "sys:0").status,
              x4::NFS4ERR_SERVERFAULT);
    EXPECT_EQ(t.sequence(seq(c.sessionid, 0, 1, true, 3)).status, x4::NFS4ERR_SERVERFAULT);
    t.connection_closed(2);
    EXPECT_EQ(t.sequence(seq(c.sessionid, 0, 1, true, 3)).status, x4::NFS4_OK);
}

TEST(Connections, MachCredEnforcesBinding) {
    FakeClock clock;
    ClientTable t(clock, 7);
    ExchangeIdArgs a =
        mach_exid("h", "krb5:host/h",
                  {x4::OP_BIND_CONN_TO_SESSION, x4::OP_DESTROY_SESSION, x4::OP_CREATE_SESSION});
    ExchangeIdResult e = t.exchange_id(a);
    ASSERT_EQ(e.status, x4::NFS4_OK);
    CreateSessionResult s = t.create_session(csa(e.clientid, e.sequenceid, "krb5:host/h"));
    ASSERT_EQ(s.status, x4::NFS4_OK);
    // A second session from a user principal: the machine credential must create it.
    EXPECT_EQ(t.create_session(csa(e.clientid, e.sequenceid + 1, "krb5:alice")).status,
              x4::NFS4ERR_WRONG_CRED);
    // Connection 2 is not bound and binding is enforced: no automatic binding.
    EXPECT_EQ(t.sequence(seq(s.sessionid, 0, 1, true, 2)).status,
              x4::NFS4ERR_CONN_NOT_BOUND_TO_SESSION);
    EXPECT_EQ(t.bind_conn_to_session(s.sessionid, 2, x4::CDFC4_FORE, "krb5:alice").status,
              x4::NFS4ERR_WRONG_CRED);
    EXPECT_EQ(t.bind_conn_to_session(s.sessionid, 2, x4::CDFC4_FORE, "krb5:host/h").status,
              x4::NFS4_OK);
    EXPECT_EQ(t.sequence(seq(s.sessionid, 0, 1, true, 2)).status, x4::NFS4_OK);
    EXPECT_EQ(t.destroy_session(s.sessionid, 2, "krb5:alice", 0), x4::NFS4ERR_WRONG_CRED);
    EXPECT_EQ(t.destroy_session(s.sessionid, 2, "krb5:host/h", 0), x4::NFS4_OK);
}

}  // namespace
