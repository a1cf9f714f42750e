// The daemon's NFSv4.1 lease sweep (RFC 8881 §8.3, §8.4.3), end to end: a client that
// stops renewing is kept as a courtesy client, then reaped by the timer the daemon runs
// (daemon.cpp arm_lease_sweep) once it has been expired for Limits::courtesy_leases (4)
// lease periods; its session is gone (BADSESSION) while a client that renews keeps its own.
// Lease 10 s (the configuration's minimum): the test takes about a minute.
#include <gtest/gtest.h>

#include <signal.h>

#include <chrono>
#include <string>
#include <thread>

#include "tests/e2e/daemon_fixture.h"
#include "tests/e2e/rpc_wire.h"

namespace nfsrdmad::e2e {
namespace {

using wire::Bytes;

constexpr uint32_t kNfs = 100003;
constexpr uint32_t kOpSequence = 53, kOpExchangeId = 42, kOpCreateSession = 43;
constexpr uint32_t kBadSession = 10052;

struct Session {
    uint64_t clientid = 0;
    Bytes sessionid;  // 16 bytes
    uint32_t seqid = 0;
};

class V4Client {
  public:
    explicit V4Client(uint16_t port) {
        std::string why;
        conn_ = wire::Conn::Open(port, &why);
        EXPECT_TRUE(conn_ != nullptr) << why;
    }

    // One COMPOUND (minor version 1) of `ops`; the results after the tag and count, and the
    // COMPOUND status.
    bool compound(const Bytes& ops, uint32_t count, uint32_t* status, Bytes* results) {
        wire::XdrOut a;
        a.str("").u32(1).u32(count).raw(ops);
        std::string why;
        if (!conn_ || !conn_->SendRecord(
                          wire::EncodeCall(wire::RootCall(++xid_, kNfs, 4, 1, a.take())), &why))
            return false;
        Bytes rec;
        if (conn_->RecvRecord(&rec, 10000, &why) != wire::Conn::Recv::kOk) return false;
        wire::Reply r = wire::ParseReply(rec);
        if (!r.parse_error.empty() || r.accept_stat != wire::kSuccess) return false;
        *results = r.results;
        wire::XdrIn in(*results);
        Bytes tag;
        uint32_t n = 0;
        if (!in.u32(status) || !in.opaque(&tag, 1024) || !in.u32(&n)) return false;
        results->erase(results->begin(), results->begin() + in.offset());
        return true;
    }

    bool establish(const std::string& owner, Session* s) {
        wire::XdrOut ex;
        ex.u32(kOpExchangeId).raw("12345678", 8).str(owner).u32(0).u32(0).u32(0);
        uint32_t st = 1;
        Bytes res;
        if (!compound(ex.bytes(), 1, &st, &res) || st != 0) return false;
        wire::XdrIn in(res);
        uint32_t op, opst, seq;
        if (!in.u32(&op) || !in.u32(&opst) || !in.u64(&s->clientid) || !in.u32(&seq)) return false;

        wire::XdrOut cs;
        cs.u32(kOpCreateSession).u64(s->clientid).u32(seq).u32(0);
        cs.u32(0).u32(1 << 20).u32(1 << 20).u32(8192).u32(16).u32(8).u32(0);  // fore
        cs.u32(0).u32(4096).u32(4096).u32(0).u32(2).u32(1).u32(0);            // back
        cs.u32(0x40000000).u32(1).u32(0);  // cb_program, one AUTH_NONE sec_parms
        if (!compound(cs.bytes(), 1, &st, &res) || st != 0) return false;
        wire::XdrIn cin(res);
        if (!cin.u32(&op) || !cin.u32(&opst)) return false;
        s->sessionid.assign(res.begin() + cin.offset(), res.begin() + cin.offset() + 16);
        s->seqid = 0;
        return true;
    }

    // SEQUENCE alone on slot 0; its status (or ~0u when there was no answer).
    uint32_t sequence(Session& s) {
        wire::XdrOut q;
        q.u32(kOpSequence).raw(s.sessionid).u32(++s.seqid).u32(0).u32(0).u32(0);
        uint32_t st = ~0u;
        Bytes res;
        if (!compound(q.bytes(), 1, &st, &res)) return ~0u;
        return st;
    }

  private:
    std::unique_ptr<wire::Conn> conn_;
    uint32_t xid_ = 0;
};

TEST(Nfs4LeaseE2e, SilentClientIsReapedByTheDaemonsSweep) {
    DaemonOptions o;
    o.config_yaml = "nfsv4:\n  enabled: true\n  lease_time: 10";
    Daemon d(o);
    ASSERT_TRUE(d.Start());
    V4Client c(d.nfs_port());
    Session silent, busy;
    ASSERT_TRUE(c.establish("silent-client", &silent));
    ASSERT_TRUE(c.establish("busy-client", &busy));
    EXPECT_EQ(c.sequence(silent), 0u);

    // The silent client's lease ends 10 s from now and it is reaped 40 s after that; the
    // busy one renews every 5 s. Still there (a courtesy client) at 30 s.
    const auto start = std::chrono::steady_clock::now();
    auto at = [&](int s) { std::this_thread::sleep_until(start + std::chrono::seconds(s)); };
    for (int t = 5; t <= 30; t += 5) {
        at(t);
        ASSERT_EQ(c.sequence(busy), 0u) << "at " << t << " s\n" << d.log_tail(40);
    }
    EXPECT_EQ(d.log_tail(200).find("reaped"), std::string::npos) << d.log_tail(40);
    for (int t = 35; t <= 55; t += 5) {
        at(t);
        ASSERT_EQ(c.sequence(busy), 0u) << "at " << t << " s\n" << d.log_tail(40);
    }
    EXPECT_EQ(c.sequence(silent), kBadSession) << d.log_tail(40);
    EXPECT_NE(d.log_tail(200).find("nfsv4.1: reaped 1 client(s)"), std::string::npos)
        << d.log_tail(40);

    // SIGUSR1's statistics count what is left: the busy client and its session, nothing of
    // the reaped one.
    ASSERT_EQ(::kill(d.pid(), SIGUSR1), 0);
    const std::string want = "stats: nfs4 clients=1 sessions=1 stateids=0 opens=0";
    for (int i = 0; i < 50 && d.log_tail(40).find(want) == std::string::npos; ++i)
        std::this_thread::sleep_for(std::chrono::milliseconds(100));
    EXPECT_NE(d.log_tail(40).find(want), std::string::npos) << d.log_tail(40);
}

}  // namespace
}  // namespace nfsrdmad::e2e
