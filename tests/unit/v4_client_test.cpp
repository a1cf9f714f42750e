// NFSv4.1 client records (RFC 8881 §2.4, EXCHANGE_ID §18.35, DESTROY_CLIENTID §18.50) and
// leases (§8.3): every record-matching case of EXCHANGE_ID's IMPLEMENTATION list (§18.35.4),
// table-driven, plus flags, state protection, bounds and lease expiry on a hand-driven clock.
#include <gtest/gtest.h>

#include <cctype>
#include <ostream>
#include <string>

#include "tests/unit/v4_state_util.h"

using namespace nfsrdmad::nfs::v4::state;
using namespace nfsrdmad::nfs::v4::state::testing;

namespace {

constexpr uint32_t kUpd = x4::EXCHGID4_FLAG_UPD_CONFIRMED_REC_A;

// What the server holds for owner "host" before the request.
enum class Before {
    Nothing,
    Unconfirmed,         // EXCHANGE_ID only (verifier 1, principal "sys:0")
    ConfirmedWithState,  // + CREATE_SESSION: a session is state
    ConfirmedIdle,       // + DESTROY_SESSION: no state
    ConfirmedExpired,    // with state, lease run out
};

// What the reply's client ID is.
enum class Id { None, New, SameAsBefore };

struct Row {
    const char* rfc_case;
    Before before;
    uint8_t verifier;
    const char* principal;
    uint32_t flags;
    x4::nfsstat4 status;
    Id id;
    bool confirmed_r;
    bool purges_before;    // the reply names the previous record as purged
    bool before_survives;  // the previous record still answers afterwards
};

const Row kRows[] = {
    {"1 New Owner ID", Before::Nothing, 1, "sys:0", 0, x4::NFS4_OK, Id::New, false, false, false},
    {"2 Non-Update on Existing Client ID", Before::ConfirmedWithState, 1, "sys:0", 0, x4::NFS4_OK,
     Id::SameAsBefore, true, false, true},
    {"3 Client Collision, live state: CLID_INUSE", Before::ConfirmedWithState, 1, "sys:9", 0,
     x4::NFS4ERR_CLID_INUSE, Id::None, false, false, true},
    {"3 Client Collision, no state: as case 1", Before::ConfirmedIdle, 1, "sys:9", 0, x4::NFS4_OK,
     Id::New, false, true, false},
    {"3 Client Collision, lease expired: as case 1", Before::ConfirmedExpired, 2, "sys:9", 0,
     x4::NFS4_OK, Id::New, false, true, false},
    {"4 Replacement of Unconfirmed Record", Before::Unconfirmed, 2, "sys:9", 0, x4::NFS4_OK,
     Id::New, false, false, false},
    {"4 Replacement of Unconfirmed Record, same args", Before::Unconfirmed, 1, "sys:0", 0,
     x4::NFS4_OK, Id::New, false, false, false},
    {"5 Client Restart", Before::ConfirmedWithState, 2, "sys:0", 0, x4::NFS4_OK, Id::New, false,
     false, true},
    {"6 Update", Before::ConfirmedWithState, 1, "sys:0", kUpd, x4::NFS4_OK, Id::SameAsBefore, true,
     false, true},
    {"7 Update but No Confirmed Record", Before::Nothing, 1, "sys:0", kUpd, x4::NFS4ERR_NOENT,
     Id::None, false, false, false},
    {"7 Update but No Confirmed Record, unconfirmed intact", Before::Unconfirmed, 1, "sys:0", kUpd,
     x4::NFS4ERR_NOENT, Id::None, false, false, true},
    {"8 Update but Wrong Verifier", Before::ConfirmedWithState, 2, "sys:0", kUpd,
     x4::NFS4ERR_NOT_SAME, Id::None, false, false, true},
    {"9 Update but Wrong Principal", Before::ConfirmedWithState, 1, "sys:9", kUpd, x4::NFS4ERR_PERM,
     Id::None, false, false, true},
};

void PrintTo(const Row& row, std::ostream* os) {
    *os << row.rfc_case;
}

class ExchangeIdCase : public ::testing::TestWithParam<Row> {};

// Whether the server still knows `id` (as the record it was before the request).
bool known(ClientTable& t, ClientId id, bool was_confirmed) {
    if (was_confirmed) return t.confirmed(id);
    // An unconfirmed record answers CREATE_SESSION's misordered sequence, an unknown one STALE.
    return t.create_session(csa(id, 7, "sys:0")).status != x4::NFS4ERR_STALE_CLIENTID;
}

TEST_P(ExchangeIdCase, MatchesTheRfc) {
    const Row& row = GetParam();
    FakeClock clock;
    ClientTable t(clock, 7);
    ClientId before = 0;
    bool before_confirmed = false;
    switch (row.before) {
        case Before::Nothing:
            break;
        case Before::Unconfirmed:
            before = t.exchange_id(exid("host", 1, "sys:0")).clientid;
            break;
        case Before::ConfirmedWithState:
        case Before::ConfirmedIdle:
        case Before::ConfirmedExpired: {
            Confirmed c = confirm(t, "host", "sys:0");
            before = c.clientid;
            before_confirmed = true;
            if (row.before == Before::ConfirmedIdle) {
                ASSERT_EQ(t.destroy_session(c.sessionid, 1, "sys:0", std::nullopt), x4::NFS4_OK);
            }
            if (row.before == Before::ConfirmedExpired) clock.advance(std::chrono::seconds(91));
            break;
        }
    }

    ExchangeIdResult r = t.exchange_id(exid("host", row.verifier, row.principal, row.flags));
    EXPECT_EQ(r.status, row.status) << row.rfc_case;
    if (row.id == Id::New) {
        EXPECT_NE(r.clientid, before) << row.rfc_case;
        EXPECT_FALSE(t.confirmed(r.clientid)) << row.rfc_case;
        EXPECT_EQ(epoch_of(r.clientid), 7u);
    }
    if (row.id == Id::SameAsBefore) {
        EXPECT_EQ(r.clientid, before) << row.rfc_case;
    }
    EXPECT_EQ((r.flags & x4::EXCHGID4_FLAG_CONFIRMED_R) != 0, row.confirmed_r) << row.rfc_case;
    EXPECT_EQ(r.purged.has_value(), row.purges_before) << row.rfc_case;
    if (row.purges_before && r.purged) {
        EXPECT_EQ(*r.purged, before);
    }
    if (before) {
        EXPECT_EQ(known(t, before, before_confirmed), row.before_survives) << row.rfc_case;
    }
}

// Test names from the case titles: "3 Client Collision, no state: as case 1" →
// "Case3_Client_Collision_no_state_as_case_1".
std::string row_name(const ::testing::TestParamInfo<Row>& info) {
    std::string out = "Case";
    bool gap = false;
    for (const char* p = info.param.rfc_case; *p; ++p) {
        if (std::isalnum(static_cast<unsigned char>(*p))) {
            if (gap && out.size() > 4) out += '_';
            out += *p;
            gap = false;
        } else {
            gap = true;
        }
    }
    return out;
}

INSTANTIATE_TEST_SUITE_P(Rfc8881_18_35_4, ExchangeIdCase, ::testing::ValuesIn(kRows), row_name);

// Case 5 continued: CREATE_SESSION on the new incarnation destroys the old confirmed record
// (§18.36.4 "Successful Confirmation") and names it for the lock tables.
TEST(ClientRecord, ClientRestartIsCompletedByCreateSession) {
    FakeClock clock;
    ClientTable t(clock, 7);
    Confirmed old = confirm(t, "host", "sys:0");
    ASSERT_EQ(t.new_stateid(old.clientid, StateKind::Open).status, x4::NFS4_OK);
    ExchangeIdResult e = t.exchange_id(exid("host", 2, "sys:0"));
    ASSERT_EQ(e.status, x4::NFS4_OK);
    CreateSessionResult s = t.create_session(csa(e.clientid, e.sequenceid, "sys:0"));
    ASSERT_EQ(s.status, x4::NFS4_OK);
    ASSERT_TRUE(s.purged.has_value());
    EXPECT_EQ(*s.purged, old.clientid);
    EXPECT_TRUE(t.confirmed(e.clientid));
    EXPECT_FALSE(t.confirmed(old.clientid));
    EXPECT_EQ(t.sequence(seq(old.sessionid, 0, 1)).status, x4::NFS4ERR_BADSESSION);
    EXPECT_EQ(t.client_count(), 1u);
    // The replayed CREATE_SESSION does not name the purged record again.
    CreateSessionResult again = t.create_session(csa(e.clientid, e.sequenceid, "sys:0"));
    EXPECT_TRUE(again.replay);
    EXPECT_FALSE(again.purged.has_value());
}

TEST(ClientRecord, FlagsTheRfcForbidsAreInval) {
    FakeClock clock;
    ClientTable t(clock, 7);
    EXPECT_EQ(t.exchange_id(exid("h", 1, "sys:0", x4::EXCHGID4_FLAG_CONFIRMED_R)).status,
              x4::NFS4ERR_INVAL);
    EXPECT_EQ(t.exchange_id(exid("h", 1, "sys:0", 0x00000400)).status, x4::NFS4ERR_INVAL);
    ExchangeIdResult ok = t.exchange_id(
        exid("h", 1, "sys:0", x4::EXCHGID4_FLAG_SUPP_MOVED_REFER | x4::EXCHGID4_FLAG_USE_PNFS_MDS));
    ASSERT_EQ(ok.status, x4::NFS4_OK);
    // Not a pNFS server: USE_NON_PNFS only (§13.1); UPD_CONFIRMED_REC_A never in eir_flags.
    EXPECT_EQ(ok.flags, x4::EXCHGID4_FLAG_USE_NON_PNFS);
    EXPECT_EQ(ok.sequenceid, 1u);
    EXPECT_EQ(ok.how, x4::SP4_NONE);
}

TEST(ClientRecord, MachCredNeedsIntegrityAndEnforcesItsOpList) {
    FakeClock clock;
    ClientTable t(clock, 7);
    ExchangeIdArgs a = mach_exid(
        "h", "krb5:host/h", {x4::OP_DESTROY_CLIENTID, x4::OP_DESTROY_SESSION, x4::OP_SEQUENCE});
    a.integrity_protected = false;
    op_add(a.must_allow, x4::OP_CLOSE);
    op_add(a.must_allow, x4::OP_SEQUENCE);
    EXPECT_EQ(t.exchange_id(a).status, x4::NFS4ERR_INVAL);  // not RPCSEC_GSS integrity/privacy
    a.integrity_protected = true;
    ExchangeIdResult r = t.exchange_id(a);
    ASSERT_EQ(r.status, x4::NFS4_OK);
    EXPECT_EQ(r.how, x4::SP4_MACH_CRED);
    // The mandatory ones asked for are enforced, SEQUENCE is not offered; CLOSE is allowed.
    EXPECT_TRUE(op_in(r.must_enforce, x4::OP_DESTROY_CLIENTID));
    EXPECT_TRUE(op_in(r.must_enforce, x4::OP_DESTROY_SESSION));
    EXPECT_FALSE(op_in(r.must_enforce, x4::OP_SEQUENCE));
    EXPECT_TRUE(op_in(r.must_allow, x4::OP_CLOSE));
    EXPECT_FALSE(op_in(r.must_allow, x4::OP_SEQUENCE));
    EXPECT_EQ(t.check_mach_cred(r.clientid, x4::OP_DESTROY_CLIENTID, "sys:0"),
              x4::NFS4ERR_WRONG_CRED);
    EXPECT_EQ(t.check_mach_cred(r.clientid, x4::OP_DESTROY_CLIENTID, "krb5:host/h"), x4::NFS4_OK);
    EXPECT_EQ(t.check_mach_cred(r.clientid, x4::OP_CLOSE, "sys:0"), x4::NFS4_OK);
    // spo_must_allow: the machine credential may CLOSE (request.cpp lets it past the
    // export's flavor list); another principal, or an operation not allowed, may not.
    const std::vector<uint32_t> closing{x4::OP_GETATTR, x4::OP_CLOSE}, reading{x4::OP_GETATTR};
    EXPECT_TRUE(t.mach_allowed(r.clientid, closing, "krb5:host/h"));
    EXPECT_FALSE(t.mach_allowed(r.clientid, closing, "krb5:alice@R"));
    EXPECT_FALSE(t.mach_allowed(r.clientid, reading, "krb5:host/h"));
    EXPECT_FALSE(t.mach_allowed(r.clientid + 1, closing, "krb5:host/h"));
    EXPECT_EQ(t.destroy_clientid(r.clientid, "sys:0"), x4::NFS4ERR_WRONG_CRED);
    EXPECT_EQ(t.destroy_clientid(r.clientid, "krb5:host/h"), x4::NFS4_OK);
}

TEST(ClientRecord, SsvIsNotSupported) {
    FakeClock clock;
    ClientTable t(clock, 7);
    ExchangeIdArgs a = mach_exid("h", "krb5:host/h", {});
    a.how = x4::SP4_SSV;
    EXPECT_EQ(t.exchange_id(a).status, x4::NFS4ERR_HASH_ALG_UNSUPP);
    EXPECT_EQ(t.client_count(), 0u);
}

TEST(ClientRecord, AClientIdOfAnotherBootIsStale) {
    FakeClock clock;
    ClientTable before(clock, 7);
    ClientTable after(clock, 8);
    ClientId id = before.exchange_id(exid("h", 1, "sys:0")).clientid;
    EXPECT_EQ(epoch_of(id), 7u);
    EXPECT_EQ(after.create_session(csa(id, 1, "sys:0")).status, x4::NFS4ERR_STALE_CLIENTID);
    EXPECT_EQ(after.destroy_clientid(id, "sys:0"), x4::NFS4ERR_STALE_CLIENTID);
    // Same counter value in the new boot: still a different client ID.
    EXPECT_NE(after.exchange_id(exid("h", 1, "sys:0")).clientid, id);
}

TEST(ClientRecord, TooManyClientsIsServerfaultUntilStaleOnesGo) {
    FakeClock clock;
    Limits l;
    l.max_clients = 2;
    ClientTable t(clock, 7, l);
    EXPECT_EQ(t.exchange_id(exid("a", 1, "sys:0")).status, x4::NFS4_OK);
    Confirmed b = confirm(t, "b", "sys:0");
    EXPECT_EQ(t.exchange_id(exid("c", 1, "sys:0")).status, x4::NFS4ERR_SERVERFAULT);
    EXPECT_EQ(t.client_count(), 2u);
    // "a" is unconfirmed: after a lease it is dropped and "c" fits. "b", confirmed, is never
    // dropped to make room, even expired (a courtesy client).
    clock.advance(std::chrono::seconds(91));
    EXPECT_EQ(t.exchange_id(exid("c", 1, "sys:0")).status, x4::NFS4_OK);
    EXPECT_EQ(t.client_count(), 2u);
    EXPECT_TRUE(t.confirmed(b.clientid));
    EXPECT_EQ(t.exchange_id(exid("d", 1, "sys:0")).status, x4::NFS4ERR_SERVERFAULT);
}

TEST(ClientRecord, UnconfirmedRecordExpiresAfterALease) {
    FakeClock clock;
    ClientTable t(clock, 7);
    ExchangeIdResult e = t.exchange_id(exid("h", 1, "sys:0"));
    clock.advance(std::chrono::seconds(90));
    EXPECT_TRUE(t.expired_clients().empty());  // unconfirmed: dropped, never "expired clients"
    EXPECT_EQ(t.client_count(), 0u);
    EXPECT_EQ(t.create_session(csa(e.clientid, e.sequenceid, "sys:0")).status,
              x4::NFS4ERR_STALE_CLIENTID);
}

TEST(ClientRecord, UnconfirmedRecordTooOldForCreateSession) {
    FakeClock clock;
    ClientTable t(clock, 7);
    ExchangeIdResult e = t.exchange_id(exid("h", 1, "sys:0"));
    clock.advance(std::chrono::seconds(89));
    CreateSessionResult ok = t.create_session(csa(e.clientid, e.sequenceid, "sys:0"));
    EXPECT_EQ(ok.status, x4::NFS4_OK);
    ExchangeIdResult e2 = t.exchange_id(exid("h2", 1, "sys:0"));
    clock.advance(std::chrono::seconds(90));
    EXPECT_EQ(t.create_session(csa(e2.clientid, e2.sequenceid, "sys:0")).status,
              x4::NFS4ERR_STALE_CLIENTID);
}

TEST(ClientRecord, DestroyClientIdIsBusyWhileSessionsOrStateExist) {
    FakeClock clock;
    ClientTable t(clock, 7);
    Confirmed c = confirm(t, "h", "sys:0");
    EXPECT_EQ(t.destroy_clientid(c.clientid, "sys:0"), x4::NFS4ERR_CLIENTID_BUSY);
    StateidTable::Result st = t.new_stateid(c.clientid, StateKind::Open);
    ASSERT_EQ(st.status, x4::NFS4_OK);
    ASSERT_EQ(t.destroy_session(c.sessionid, 1, "sys:0", std::nullopt), x4::NFS4_OK);
    EXPECT_EQ(t.destroy_clientid(c.clientid, "sys:0"), x4::NFS4ERR_CLIENTID_BUSY);
    ASSERT_EQ(t.release_stateid(c.clientid, st.stateid), x4::NFS4_OK);
    EXPECT_EQ(t.destroy_clientid(c.clientid, "sys:0"), x4::NFS4_OK);
    EXPECT_EQ(t.destroy_clientid(c.clientid, "sys:0"), x4::NFS4ERR_STALE_CLIENTID);
    EXPECT_EQ(t.client_count(), 0u);
}

TEST(ClientRecord, DestroyClientIdOfAnUnconfirmedRecord) {
    FakeClock clock;
    ClientTable t(clock, 7);
    ExchangeIdResult e = t.exchange_id(exid("h", 1, "sys:0"));
    EXPECT_EQ(t.destroy_clientid(e.clientid, "sys:0"), x4::NFS4_OK);
    EXPECT_EQ(t.client_count(), 0u);
    // The owner is free again: a new EXCHANGE_ID is case 1.
    EXPECT_EQ(t.exchange_id(exid("h", 1, "sys:0")).status, x4::NFS4_OK);
}

// Leases (§8.3) on the fake clock: SEQUENCE renews; an expired client is a courtesy client
// until reaped; its SEQUENCE revives it; after reaping its session is BADSESSION.
TEST(Lease, ExpiryRenewalCourtesyAndReaping) {
    FakeClock clock;
    ClientTable t(clock, 7);
    Confirmed c = confirm(t, "h", "sys:0");
    StateidTable::Result st = t.new_stateid(c.clientid, StateKind::Open);
    ASSERT_EQ(st.status, x4::NFS4_OK);

    clock.advance(std::chrono::seconds(89));
    EXPECT_TRUE(t.expired_clients().empty());
    EXPECT_FALSE(t.may_reap(c.clientid));
    EXPECT_FALSE(t.reap(c.clientid));
    // A SEQUENCE that fails does not renew (§8.3: a successful one does).
    EXPECT_EQ(t.sequence(seq(c.sessionid, 0, 5)).status, x4::NFS4ERR_SEQ_MISORDERED);
    clock.advance(std::chrono::seconds(1));
    EXPECT_TRUE(t.may_reap(c.clientid));
    SequenceResult s = t.sequence(seq(c.sessionid, 0, 1));  // renews to now + 90
    ASSERT_EQ(s.status, x4::NFS4_OK);
    ASSERT_EQ(s.session->finish(0, 1, std::nullopt), x4::NFS4_OK);
    EXPECT_FALSE(t.may_reap(c.clientid));
    clock.advance(std::chrono::seconds(89));
    EXPECT_TRUE(t.expired_clients().empty());
    clock.advance(std::chrono::seconds(1));
    EXPECT_EQ(t.expired_clients(), std::vector<ClientId>{c.clientid});

    // Courtesy: the state is kept, but it is expired.
    EXPECT_TRUE(t.courtesy(c.clientid));
    EXPECT_TRUE(t.may_reap(c.clientid));
    EXPECT_EQ(t.check_stateid(c.clientid, st.stateid, kAnyKind).status, x4::NFS4ERR_EXPIRED);
    EXPECT_EQ(t.test_stateids(c.clientid, std::vector<Stateid>{st.stateid}),
              std::vector<x4::nfsstat4>{x4::NFS4ERR_EXPIRED});

    // The client comes back before anyone conflicted: renewed, state usable.
    s = t.sequence(seq(c.sessionid, 0, 2));
    ASSERT_EQ(s.status, x4::NFS4_OK);
    ASSERT_EQ(s.session->finish(0, 2, std::nullopt), x4::NFS4_OK);
    EXPECT_FALSE(t.may_reap(c.clientid));
    EXPECT_FALSE(t.courtesy(c.clientid));
    EXPECT_EQ(t.check_stateid(c.clientid, st.stateid, kAnyKind).status, x4::NFS4_OK);

    // Expires again; a conflicting request reaps it.
    clock.advance(std::chrono::seconds(90));
    EXPECT_EQ(t.expired_clients().size(), 1u);
    EXPECT_TRUE(t.reap(c.clientid));
    EXPECT_EQ(t.client_count(), 0u);
    EXPECT_EQ(t.sequence(seq(c.sessionid, 0, 3)).status, x4::NFS4ERR_BADSESSION);
    EXPECT_EQ(t.create_session(csa(c.clientid, c.next_cs_sequence, "sys:0")).status,
              x4::NFS4ERR_STALE_CLIENTID);
    EXPECT_EQ(t.check_stateid(c.clientid, st.stateid, kAnyKind).status, x4::NFS4ERR_BAD_STATEID);
    EXPECT_FALSE(t.reap(c.clientid));
}

// §8.3: the lease does not expire while a COMPOUND of the client is running.
TEST(Lease, NoExpiryWhileARequestIsInProgress) {
    FakeClock clock;
    ClientTable t(clock, 7);
    Confirmed c = confirm(t, "h", "sys:0");
    SequenceResult s = t.sequence(seq(c.sessionid, 0, 1));
    ASSERT_EQ(s.status, x4::NFS4_OK);
    clock.advance(std::chrono::seconds(200));
    EXPECT_TRUE(t.expired_clients().empty());
    EXPECT_FALSE(t.may_reap(c.clientid));
    EXPECT_FALSE(t.reap(c.clientid));
    ASSERT_EQ(s.session->finish(0, 1, std::nullopt), x4::NFS4_OK);
    EXPECT_EQ(t.expired_clients(), std::vector<ClientId>{c.clientid});
    EXPECT_TRUE(t.reap(c.clientid));
}

TEST(Lease, LeaseTimeIsAParameter) {
    FakeClock clock;
    Limits l;
    l.lease = std::chrono::seconds(10);
    ClientTable t(clock, 7, l);
    Confirmed c = confirm(t, "h", "sys:0");
    clock.advance(std::chrono::seconds(9));
    EXPECT_FALSE(t.may_reap(c.clientid));
    clock.advance(std::chrono::seconds(1));
    EXPECT_TRUE(t.may_reap(c.clientid));
}

}  // namespace
