// Shared setup for the NFSv4.1 state machine tests: a clock the test advances by hand and a
// client confirmed through EXCHANGE_ID + CREATE_SESSION.
#pragma once

#include <gtest/gtest.h>

#include <initializer_list>
#include <string>

#include "nfs/v4/state/client_table.h"

namespace nfsrdmad::nfs::v4::state::testing {

class FakeClock final : public Clock {
  public:
    Time now() const override { return t_; }
    void advance(std::chrono::seconds d) { t_ += d; }

  private:
    Time t_{std::chrono::hours(1000)};
};

inline Verifier verifier(uint8_t b) {
    Verifier v{};
    v.fill(b);
    return v;
}

inline ExchangeIdArgs exid(const std::string& owner, uint8_t verf, const std::string& principal,
                           uint32_t flags = 0) {
    ExchangeIdArgs a;
    a.ownerid = owner;
    a.verifier = verifier(verf);
    a.principal = principal;
    a.flags = flags;
    return a;
}

// SP4_MACH_CRED over RPCSEC_GSS integrity, enforcing `enforce`.
inline ExchangeIdArgs mach_exid(const std::string& owner, const std::string& principal,
                                std::initializer_list<uint32_t> enforce) {
    ExchangeIdArgs a = exid(owner, 1, principal);
    a.how = x4::SP4_MACH_CRED;
    a.integrity_protected = true;
    for (uint32_t op : enforce) op_add(a.must_enforce, op);
    return a;
}

inline ChannelAttrs attrs(uint32_t slots = 8) {
    ChannelAttrs c;
    c.max_request_size = 65536;
    c.max_response_size = 65536;
    c.max_response_size_cached = 2048;
    c.max_operations = 8;
    c.max_requests = slots;
    return c;
}

inline CreateSessionArgs csa(ClientId id, uint32_t sequence, const std::string& principal,
                             ConnId conn = 1, uint32_t slots = 8) {
    CreateSessionArgs a;
    a.clientid = id;
    a.sequence = sequence;
    a.principal = principal;
    a.conn = conn;
    a.fore = attrs(slots);
    a.back = attrs(2);
    return a;
}

struct Confirmed {
    ClientId clientid = 0;
    SessionId sessionid{};
    uint32_t next_cs_sequence = 0;  // the csa_sequence of a next, new CREATE_SESSION
};

// EXCHANGE_ID + CREATE_SESSION: a confirmed client with one session bound to `conn`.
inline Confirmed confirm(ClientTable& t, const std::string& owner, const std::string& principal,
                         ConnId conn = 1, uint8_t verf = 1) {
    Confirmed c;
    ExchangeIdResult e = t.exchange_id(exid(owner, verf, principal));
    EXPECT_EQ(e.status, x4::NFS4_OK);
    CreateSessionResult s = t.create_session(csa(e.clientid, e.sequenceid, principal, conn));
    EXPECT_EQ(s.status, x4::NFS4_OK);
    c.clientid = e.clientid;
    c.sessionid = s.sessionid;
    c.next_cs_sequence = e.sequenceid + 1;
    return c;
}

inline SequenceArgs seq(const SessionId& id, uint32_t slot, uint32_t seqid, bool cachethis = true,
                        ConnId conn = 1, uint32_t highest = 0) {
    SequenceArgs a;
    a.sessionid = id;
    a.slotid = slot;
    a.seqid = seqid;
    a.cachethis = cachethis;
    a.conn = conn;
    a.highest_slotid = highest;
    return a;
}

}  // namespace nfsrdmad::nfs::v4::state::testing
