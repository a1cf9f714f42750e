// NLM v4 (XNFS) against the running daemon from a raw client over TCP: every call is
// encoded with the generated codecs (xdr/nlm_prot.h) and sent on a plain socket. The
// file handles come from the raw NFSv4.1 client (tests/e2e/nfs4_fixture.h): the same
// handles NFSv3 uses, which NLM names files by.
//
//   NULL, version 3, undefined procedures  -> SUCCESS, PROG_MISMATCH 4..4, PROC_UNAVAIL
//   NLM over UDP                           -> served, one lock table with TCP; NFS is not
//   two hosts, one range                   -> GRANTED, DENIED naming the holder, BLOCKED,
//                                             CANCEL, UNLOCK, then GRANTED
//   a blocked LOCK, then the holder unlocks -> the waiter holds it and its host is called
//                                             back (NLM4_GRANTED via its rpcbind); refused
//                                             or undeliverable: the lock is released
//   a restart after a LOCK (not NM_LOCK)   -> SM_NOTIFY to the host's statd, reclaims only
//   LOCK_MSG, TEST_MSG                     -> an empty reply; LOCK_RES, TEST_RES to the host
//   an NLM lock and an NFSv4.1 lock        -> each denies the other (one lock table)
//   a local process on the server          -> sees the NLM lock (OFD mirror)
//   FREE_ALL                               -> the host's locks and shares are gone
//   SHARE / UNSHARE                        -> deny modes between hosts
//   a restart                              -> DENIED_GRACE_PERIOD but for reclaims, until
//                                             the NFSv4.1 client's RECLAIM_COMPLETE
//   bad input                              -> GARBAGE_ARGS, STALE_FH, FAILED; nothing held
// First (libnfs's AUTH_* macros): see nfs4_fixture.h.
#include "tests/e2e/nfs4_fixture.h"
#include "tests/shared/ofd_lock.h"
#include "xdr/nlm_prot.h"

#include <arpa/inet.h>
#include <fcntl.h>
#include <gtest/gtest.h>
#include <netinet/in.h>
#include <sys/socket.h>
#include <unistd.h>

#include <atomic>
#include <chrono>
#include <cstdlib>
#include <mutex>
#include <string>
#include <thread>
#include <vector>

namespace nfsrdmad::e2e {
namespace {

namespace xn = xdr::nlm;

// A decoded NLM result and the bytes its views point into.
template <class T>
struct NlmRes {
    std::string error;
    std::shared_ptr<wire::Bytes> bytes;
    T res{};
};

class Nlm : public Nfs4DaemonTest {
  protected:
    void SetUp() override {
        Nfs4DaemonTest::SetUp();
        if (HasFatalFailure()) return;
        Establish();
        if (HasFatalFailure()) return;
        root_ = ExportHandle();
        ASSERT_FALSE(root_.empty());
        fh_ = Create("locked");
        ASSERT_FALSE(fh_.empty());
    }

    // A file made through NFSv4.1 (OPEN with create, then CLOSE); its handle.
    wire::Bytes Create(const std::string& name) {
        names_.push_back(name);
        const std::string owner = "creator";
        Res o =
            Compound({Sequence(), op_putfh(root_),
                      op_open(view(owner), view(names_.back()), true, x4::OPEN4_SHARE_ACCESS_BOTH),
                      op_getfh()});
        EXPECT_EQ(o.error, "");
        EXPECT_EQ(o.status(), x4::NFS4_OK);
        if (o.status() != x4::NFS4_OK) return {};
        const x4::stateid4 sid = o.op(2).opopen().resok4().stateid;
        auto v = o.op(3).opgetfh().resok4().object;
        wire::Bytes fh(v.begin(), v.end());
        Res c = Compound({Sequence(), op_putfh(fh), op_close(sid)});
        EXPECT_EQ(c.status(), x4::NFS4_OK);
        return fh;
    }

    wire::Reply NlmCall(uint32_t proc, wire::Bytes args, uint32_t vers = 4) {
        return RpcCall(*conn_, 100021, vers, proc, std::move(args));
    }

    template <class Res, class Args>
    NlmRes<Res> Call(uint32_t proc, const Args& a) {
        wire::Bytes args;
        xdr::Encoder e(args);
        xn::xdr_encode(e, a);
        NlmRes<Res> out;
        wire::Reply r = NlmCall(proc, std::move(args));
        if (!r.parse_error.empty() || r.reply_stat != wire::kMsgAccepted ||
            r.accept_stat != wire::kSuccess) {
            out.error = r.parse_error.empty() ? r.Describe() : r.parse_error;
            return out;
        }
        out.bytes = std::make_shared<wire::Bytes>(std::move(r.results));
        xdr::Decoder d(*out.bytes);
        if (!xn::xdr_decode(d, out.res) || d.remaining() != 0) out.error = "undecodable result";
        return out;
    }

    // An nlm4_lock of `host`'s process `svid` on [off, off + len) of `fh`.
    xn::nlm4_lock Lock(const std::string& host, int32_t svid, uint64_t off, uint64_t len,
                       const wire::Bytes* fh = nullptr) {
        strings_.push_back(host);
        strings_.push_back(std::to_string(svid) + "@" + host);
        xn::nlm4_lock l;
        l.caller_name = strings_[strings_.size() - 2];
        l.fh = fh ? *fh : fh_;
        l.oh = view(strings_.back());
        l.svid = svid;
        l.l_offset = off;
        l.l_len = len;
        return l;
    }
    xn::nlm4_stats LockCall(const xn::nlm4_lock& l, bool exclusive, bool block = false) {
        xn::nlm4_lockargs a;
        a.cookie = view(cookie_);
        a.block = block;
        a.exclusive = exclusive;
        a.alock = l;
        a.reclaim = false;
        a.state = nsm_state_;
        auto r = Call<xn::nlm4_res>(xn::NLMPROC4_LOCK, a);
        EXPECT_EQ(r.error, "");
        EXPECT_EQ(std::string(r.res.cookie.begin(), r.res.cookie.end()), cookie_);
        return r.error.empty() ? r.res.stat.stat : xn::NLM4_FAILED;
    }
    NlmRes<xn::nlm4_testres> TestCall(const xn::nlm4_lock& l, bool exclusive) {
        xn::nlm4_testargs a;
        a.cookie = view(cookie_);
        a.exclusive = exclusive;
        a.alock = l;
        return Call<xn::nlm4_testres>(xn::NLMPROC4_TEST, a);
    }
    xn::nlm4_stats UnlockCall(const xn::nlm4_lock& l) {
        xn::nlm4_unlockargs a;
        a.cookie = view(cookie_);
        a.alock = l;
        auto r = Call<xn::nlm4_res>(xn::NLMPROC4_UNLOCK, a);
        EXPECT_EQ(r.error, "");
        return r.error.empty() ? r.res.stat.stat : xn::NLM4_FAILED;
    }
    // SHARE or UNSHARE of the file by `host` (its name is the oh too).
    xn::nlm4_stats ShareCall(uint32_t proc, const std::string& host, xn::fsh4_access access,
                             xn::fsh4_mode mode) {
        strings_.push_back(host);
        xn::nlm4_shareargs a;
        a.cookie = view(cookie_);
        a.share.caller_name = strings_.back();
        a.share.fh = fh_;
        a.share.oh = view(strings_.back());
        a.share.access = access;
        a.share.mode = mode;
        a.reclaim = false;
        auto r = Call<xn::nlm4_shareres>(proc, a);
        EXPECT_EQ(r.error, "");
        return r.error.empty() ? r.res.stat : xn::NLM4_FAILED;
    }
    xn::nlm4_stats CancelCall(const xn::nlm4_lock& l, bool exclusive) {
        xn::nlm4_cancargs a;
        a.cookie = view(cookie_);
        a.block = true;
        a.exclusive = exclusive;
        a.alock = l;
        auto r = Call<xn::nlm4_res>(xn::NLMPROC4_CANCEL, a);
        EXPECT_EQ(r.error, "");
        return r.error.empty() ? r.res.stat.stat : xn::NLM4_FAILED;
    }

    wire::Bytes root_, fh_;
    std::string cookie_ = "cookie-1";
    int32_t nsm_state_ = 1;  // the NSM state LockCall sends (nlm4_lockargs.state)
    std::deque<std::string> strings_;
};

// A client host's side of a callback, on loopback: a TCP server that answers each RPC
// call of a connection with `answer(proc, args)` (the results of a successful reply), and
// keeps the calls it saw.
class FakeRpcServer {
  public:
    using Answer = std::function<wire::Bytes(uint32_t proc, const wire::Bytes& args)>;
    explicit FakeRpcServer(Answer a) : answer_(std::move(a)) {
        fd_ = ::socket(AF_INET, SOCK_STREAM, 0);
        sockaddr_in in{};
        in.sin_family = AF_INET;
        in.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
        EXPECT_EQ(::bind(fd_, reinterpret_cast<sockaddr*>(&in), sizeof in), 0);
        socklen_t len = sizeof in;
        ::getsockname(fd_, reinterpret_cast<sockaddr*>(&in), &len);
        port_ = ntohs(in.sin_port);
        ::listen(fd_, 8);
        thread_ = std::thread([this] { Serve(); });
    }
    ~FakeRpcServer() {
        ::shutdown(fd_, SHUT_RDWR);
        ::close(fd_);
        thread_.join();
    }
    uint16_t port() const { return port_; }
    std::vector<std::pair<uint32_t, wire::Bytes>> Calls() {
        std::lock_guard l(mu_);
        return calls_;
    }
    // Waits (up to 10 s) for `n` calls.
    bool WaitCalls(size_t n) {
        for (int i = 0; i < 1000; ++i) {
            if (Calls().size() >= n) return true;
            std::this_thread::sleep_for(std::chrono::milliseconds(10));
        }
        return false;
    }

  private:
    void Serve() {
        for (;;) {
            int c = ::accept(fd_, nullptr, nullptr);
            if (c < 0) return;
            uint8_t mark[4];
            if (::recv(c, mark, 4, MSG_WAITALL) == 4) {
                const uint32_t n = (uint32_t(mark[0]) << 24 | uint32_t(mark[1]) << 16 |
                                    uint32_t(mark[2]) << 8 | mark[3]) &
                                   0x7fffffffu;
                wire::Bytes msg(n);
                if (::recv(c, msg.data(), n, MSG_WAITALL) == ssize_t(n) && n >= 40) {
                    wire::XdrIn in(msg);
                    uint32_t xid = 0, w = 0, proc = 0;
                    in.u32(&xid);
                    for (int i = 0; i < 4; ++i) in.u32(&w);  // type, rpcvers, prog, vers
                    in.u32(&proc);
                    wire::Bytes body;
                    in.u32(&w);
                    in.opaque(&body, 400);  // credential
                    in.u32(&w);
                    in.opaque(&body, 400);  // verifier
                    wire::Bytes args(msg.begin() + in.offset(), msg.end());
                    {
                        std::lock_guard l(mu_);
                        calls_.emplace_back(proc, args);
                    }
                    wire::XdrOut r;
                    r.u32(xid).u32(1).u32(0).u32(0).u32(0).u32(0).raw(answer_(proc, args));
                    wire::Bytes rec = wire::RecordMark(uint32_t(r.bytes().size()), true);
                    rec.insert(rec.end(), r.bytes().begin(), r.bytes().end());
                    (void)::send(c, rec.data(), rec.size(), MSG_NOSIGNAL);
                }
            }
            ::close(c);
        }
    }
    Answer answer_;
    int fd_ = -1;
    uint16_t port_ = 0;
    std::thread thread_;
    std::mutex mu_;
    std::vector<std::pair<uint32_t, wire::Bytes>> calls_;
};

TEST_F(Nlm, NullVersionsAndProcedureNumbers) {
    wire::Reply n = NlmCall(xn::NLMPROC4_NULL, {});
    ASSERT_EQ(n.parse_error, "");
    EXPECT_EQ(n.accept_stat, wire::kSuccess);
    wire::Reply v3 = NlmCall(0, {}, 3);
    EXPECT_EQ(v3.accept_stat, wire::kProgMismatch);
    EXPECT_EQ(v3.mismatch_low, 4u);
    EXPECT_EQ(v3.mismatch_high, 4u);
    wire::Reply msg = NlmCall(xn::NLMPROC4_LOCK_MSG, {});  // no arguments
    EXPECT_EQ(msg.accept_stat, wire::kGarbageArgs);
    EXPECT_EQ(NlmCall(17, {}).accept_stat, wire::kProcUnavail);  // 17-19 are not defined
    EXPECT_EQ(NlmCall(24, {}).accept_stat, wire::kProcUnavail);
}

// XNFS: NLM is reachable over UDP as well, on the NFS port; NFS itself is not.
TEST_F(Nlm, OverUdpTooButNotNfs) {
    const int fd = ::socket(AF_INET, SOCK_DGRAM | SOCK_CLOEXEC, 0);
    ASSERT_GE(fd, 0);
    timeval tv{1, 0};
    ::setsockopt(fd, SOL_SOCKET, SO_RCVTIMEO, &tv, sizeof tv);
    sockaddr_in to{};
    to.sin_family = AF_INET;
    to.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
    to.sin_port = htons(daemon_->nfs_port());
    auto udp_call = [&](uint32_t prog, uint32_t vers, uint32_t proc, wire::Bytes args) {
        wire::Reply r;
        wire::Bytes call =
            wire::EncodeCall(wire::RootCall(++xid_, prog, vers, proc, std::move(args)));
        if (::sendto(fd, call.data(), call.size(), 0, reinterpret_cast<sockaddr*>(&to), sizeof to) <
            0) {
            r.parse_error = "sendto failed";
            return r;
        }
        wire::Bytes buf(65536);
        ssize_t n = ::recv(fd, buf.data(), buf.size(), 0);
        if (n <= 0) {
            r.parse_error = "no reply";
            return r;
        }
        buf.resize(size_t(n));
        return wire::ParseReply(buf);
    };
    wire::Reply null = udp_call(100021, 4, 0, {});
    ASSERT_EQ(null.parse_error, "");
    EXPECT_EQ(null.accept_stat, wire::kSuccess);
    // A lock taken over UDP denies one asked for over TCP.
    xn::nlm4_lockargs a;
    a.cookie = view(cookie_);
    a.exclusive = true;
    a.alock = Lock("udp-host", 5, 0, 10);
    a.reclaim = false;
    a.state = 1;
    wire::Bytes args;
    {
        xdr::Encoder e(args);
        xn::xdr_encode(e, a);
    }
    wire::Reply lr = udp_call(100021, 4, xn::NLMPROC4_LOCK, args);
    ASSERT_EQ(lr.parse_error, "");
    ASSERT_EQ(lr.accept_stat, wire::kSuccess);
    xn::nlm4_res res;
    xdr::Decoder d(lr.results);
    ASSERT_TRUE(xn::xdr_decode(d, res));
    EXPECT_EQ(res.stat.stat, xn::NLM4_GRANTED);
    EXPECT_EQ(LockCall(Lock("tcp-host", 6, 5, 1), false), xn::NLM4_DENIED);
    // NFSv3 over UDP: not served (dropped, no reply).
    EXPECT_EQ(udp_call(100003, 3, 0, {}).parse_error, "no reply");
    ::close(fd);
}

TEST_F(Nlm, TwoHostsOneRange) {
    const auto a = Lock("host-a", 100, 0, 100);
    const auto b = Lock("host-b", 200, 50, 10);
    ASSERT_EQ(LockCall(a, true), xn::NLM4_GRANTED);
    // TEST names the holder: host-a's svid and oh, its whole range.
    auto t = TestCall(b, false);
    ASSERT_EQ(t.error, "");
    ASSERT_EQ(t.res.stat.stat(), xn::NLM4_DENIED);
    const auto& h = t.res.stat.holder();
    EXPECT_TRUE(h.exclusive);
    EXPECT_EQ(h.svid, 100);
    EXPECT_EQ(std::string(h.oh.begin(), h.oh.end()), "100@host-a");
    EXPECT_EQ(h.l_offset, 0u);
    EXPECT_EQ(h.l_len, 100u);
    // Another process of the same host is another owner.
    EXPECT_EQ(LockCall(Lock("host-a", 101, 99, 1), false), xn::NLM4_DENIED);
    EXPECT_EQ(LockCall(b, false), xn::NLM4_DENIED);
    EXPECT_EQ(LockCall(b, false, /*block=*/true), xn::NLM4_BLOCKED);
    EXPECT_EQ(CancelCall(b, false), xn::NLM4_GRANTED);
    // The holder relocks its own range (a downgrade to shared): no conflict with itself.
    EXPECT_EQ(LockCall(a, false), xn::NLM4_GRANTED);
    EXPECT_EQ(LockCall(b, false), xn::NLM4_GRANTED);  // shared with shared
    EXPECT_EQ(LockCall(Lock("host-b", 200, 0, 10), true), xn::NLM4_DENIED);
    EXPECT_EQ(UnlockCall(a), xn::NLM4_GRANTED);
    EXPECT_EQ(LockCall(Lock("host-b", 200, 0, 0), true), xn::NLM4_GRANTED);  // to EOF
    auto t2 = TestCall(Lock("host-a", 100, 1u << 30, 1), false);
    ASSERT_EQ(t2.res.stat.stat(), xn::NLM4_DENIED);
    EXPECT_EQ(t2.res.stat.holder().l_len, 0u);  // to EOF
    EXPECT_EQ(UnlockCall(Lock("host-b", 200, 0, 0)), xn::NLM4_GRANTED);
    EXPECT_EQ(TestCall(a, true).res.stat.stat(), xn::NLM4_GRANTED);
    EXPECT_EQ(UnlockCall(a), xn::NLM4_GRANTED);  // nothing held: not an error
}

// XNFS NLM4_GRANTED: a blocked LOCK is granted when the holder unlocks, and the client is
// called back at the address its LOCK came from, through its rpcbind (here a fake one the
// daemon is pointed at: NFSRDMAD_CALLBACK_RPCBIND_PORT). A client that refuses the GRANTED
// (it no longer waits) or cannot be reached does not keep the lock.
class NlmGranted : public Nlm {
  protected:
    NlmGranted()
        : lockd_([this](uint32_t, const wire::Bytes& args) {
              std::this_thread::sleep_for(std::chrono::milliseconds(delay_ms_.load()));
              // nlm4_res: the cookie back, then the status the test chose.
              xn::nlm4_testargs a;
              xdr::Decoder d(args);
              wire::XdrOut r;
              if (xn::xdr_decode(d, a))
                  r.opaque(a.cookie.data(), a.cookie.size());
              else
                  r.u32(0);
              r.u32(reply_.load());
              return r.take();
          }),
          statd_([](uint32_t proc, const wire::Bytes&) {
              wire::XdrOut r;
              if (proc == 2) r.u32(0).u32(1);  // SM_MON: sm_stat_res {STAT_SUCC, state 1}
              return r.take();
          }),
          rpcbind_([this](uint32_t, const wire::Bytes& args) {
              // PMAPPROC_GETPORT (prog, vers, prot, port): statd's port for NSM, else NLM's.
              wire::XdrIn in(args);
              uint32_t prog = 0;
              in.u32(&prog);
              wire::XdrOut r;
              r.u32(prog == 100024 ? statd_.port() : lockd_port_.load());
              return r.take();
          }) {
        lockd_port_ = lockd_.port();
        ::setenv("NFSRDMAD_CALLBACK_RPCBIND_PORT", std::to_string(rpcbind_.port()).c_str(), 1);
    }
    ~NlmGranted() override { ::unsetenv("NFSRDMAD_CALLBACK_RPCBIND_PORT"); }

    // host-a holds [0, 100); host-b asks for [10, 20), blocking: BLOCKED.
    void BlockB() {
        ASSERT_EQ(LockCall(Lock("host-a", 1, 0, 100), true), xn::NLM4_GRANTED);
        cookie_ = "b-waits";
        ASSERT_EQ(LockCall(Lock("host-b", 2, 10, 10), true, /*block=*/true), xn::NLM4_BLOCKED);
        cookie_ = "cookie-1";
    }
    xn::nlm4_stats TestByC() {
        auto t = TestCall(Lock("host-c", 3, 15, 1), false);
        EXPECT_EQ(t.error, "");
        return t.res.stat.stat();
    }
    // Whether host-c finds the range free within 5 s.
    bool WaitFree() {
        for (int i = 0; i < 250; ++i) {
            if (TestByC() == xn::NLM4_GRANTED) return true;
            std::this_thread::sleep_for(std::chrono::milliseconds(20));
        }
        return false;
    }

    // Calls of `proc` the fake statd saw.
    std::vector<wire::Bytes> StatdCalls(uint32_t proc) {
        std::vector<wire::Bytes> out;
        for (auto& [p, args] : statd_.Calls())
            if (p == proc) out.push_back(args);
        return out;
    }

    std::atomic<uint32_t> reply_{xn::NLM4_GRANTED};
    std::atomic<int> delay_ms_{0};  // before the fake lockd answers
    std::atomic<uint32_t> lockd_port_{0};
    FakeRpcServer lockd_;
    FakeRpcServer statd_;
    FakeRpcServer rpcbind_;
};

TEST_F(NlmGranted, TheWaiterGetsTheLockAndIsCalledBack) {
    BlockB();
    if (HasFatalFailure()) return;
    EXPECT_TRUE(lockd_.Calls().empty());
    ASSERT_EQ(UnlockCall(Lock("host-a", 1, 0, 100)), xn::NLM4_GRANTED);
    ASSERT_TRUE(lockd_.WaitCalls(1)) << "no GRANTED callback";
    // rpcbind was asked for NLM v4 over TCP; the callback is NLMPROC4_GRANTED with the
    // blocked request's cookie and lock.
    uint32_t prog = 0, vers = 0, prot = 0;
    for (auto& [proc, args] : rpcbind_.Calls()) {  // (statd was asked for too: SM_MON)
        wire::XdrIn q(args);
        q.u32(&prog), q.u32(&vers), q.u32(&prot);
        EXPECT_EQ(proc, 3u);  // PMAPPROC_GETPORT
        if (prog == 100021) break;
    }
    EXPECT_EQ(prog, 100021u);
    EXPECT_EQ(vers, 4u);
    EXPECT_EQ(prot, 6u);
    auto calls = lockd_.Calls();
    EXPECT_EQ(calls[0].first, uint32_t(xn::NLMPROC4_GRANTED));
    xn::nlm4_testargs g;
    xdr::Decoder d(calls[0].second);
    ASSERT_TRUE(xn::xdr_decode(d, g));
    EXPECT_EQ(std::string(g.cookie.begin(), g.cookie.end()), "b-waits");
    EXPECT_EQ(std::string(g.alock.caller_name), "host-b");
    EXPECT_EQ(g.alock.svid, 2);
    EXPECT_EQ(g.alock.l_offset, 10u);
    EXPECT_EQ(g.alock.l_len, 10u);
    EXPECT_EQ(wire::Bytes(g.alock.fh.begin(), g.alock.fh.end()), fh_);
    // host-b holds it now: host-c is told so.
    auto t = TestCall(Lock("host-c", 3, 15, 1), false);
    ASSERT_EQ(t.res.stat.stat(), xn::NLM4_DENIED);
    EXPECT_EQ(t.res.stat.holder().svid, 2);
    // host-b's own re-send (its lockd's poll) is simply granted.
    EXPECT_EQ(LockCall(Lock("host-b", 2, 10, 10), true, true), xn::NLM4_GRANTED);
}

// NSM after a restart: the hosts that held monitored locks (LOCK, not NM_LOCK) are
// recorded in the state directory and sent SM_NOTIFY (statd, program 100024 procedure 6)
// with this boot's state number, an odd one, through their rpcbind.
TEST_F(NlmGranted, ARestartNotifiesTheHostsThatHeldLocks) {
    ASSERT_EQ(LockCall(Lock("host-a", 1, 0, 10), true), xn::NLM4_GRANTED);  // from 127.0.0.1
    ASSERT_TRUE(daemon_->Restart());
    conn_ = Connect();
    ASSERT_NE(conn_, nullptr);
    std::vector<wire::Bytes> notes;
    for (int i = 0; i < 500 && notes.empty(); ++i) {
        notes = StatdCalls(6);  // SM_NOTIFY
        if (notes.empty()) std::this_thread::sleep_for(std::chrono::milliseconds(20));
    }
    ASSERT_FALSE(notes.empty()) << "no SM_NOTIFY after the restart";
    wire::XdrIn in(notes[0]);
    wire::Bytes name;
    uint32_t state = 0;
    ASSERT_TRUE(in.opaque(&name, 1024));
    ASSERT_TRUE(in.u32(&state));
    EXPECT_FALSE(name.empty());
    EXPECT_EQ(state % 2, 1u) << "an NSM state number is odd while the host is up";
    auto asked = rpcbind_.Calls();
    ASSERT_FALSE(asked.empty());
    wire::XdrIn q(asked.back().second);
    uint32_t prog = 0, vers = 0;
    q.u32(&prog), q.u32(&vers);
    EXPECT_EQ(prog, 100024u);
    EXPECT_EQ(vers, 1u);
    // The host reclaims in the grace period; a new lock waits for its end.
    auto reclaim = [&](bool r) {
        xn::nlm4_lockargs a;
        a.cookie = view(cookie_);
        a.exclusive = true;
        a.alock = Lock("host-a", 1, 0, 10);
        a.reclaim = r;
        a.state = 3;
        return Call<xn::nlm4_res>(xn::NLMPROC4_LOCK, a).res.stat.stat;
    };
    EXPECT_EQ(reclaim(false), xn::NLM4_DENIED_GRACE_PERIOD);
    EXPECT_EQ(reclaim(true), xn::NLM4_GRANTED);
}

// XNFS asynchronous procedures: the _MSG call gets an empty reply, the result goes to the
// caller's NLM as a call of the _RES procedure.
TEST_F(NlmGranted, MsgProceduresAnswerWithResCalls) {
    xn::nlm4_lockargs a;
    cookie_ = "async-1";
    a.cookie = view(cookie_);
    a.exclusive = true;
    a.alock = Lock("host-a", 1, 0, 10);
    a.reclaim = false;
    a.state = 1;
    wire::Bytes args;
    {
        xdr::Encoder e(args);
        xn::xdr_encode(e, a);
    }
    wire::Reply r = NlmCall(xn::NLMPROC4_LOCK_MSG, args);
    ASSERT_EQ(r.accept_stat, wire::kSuccess) << r.Describe();
    EXPECT_TRUE(r.results.empty());
    ASSERT_TRUE(lockd_.WaitCalls(1)) << "no LOCK_RES";
    auto calls = lockd_.Calls();
    EXPECT_EQ(calls[0].first, uint32_t(xn::NLMPROC4_LOCK_RES));
    xn::nlm4_res res;
    xdr::Decoder d(calls[0].second);
    ASSERT_TRUE(xn::xdr_decode(d, res));
    EXPECT_EQ(std::string(res.cookie.begin(), res.cookie.end()), "async-1");
    EXPECT_EQ(res.stat.stat, xn::NLM4_GRANTED);
    // TEST_MSG from another host: TEST_RES says DENIED and names host-a's lock.
    xn::nlm4_testargs t;
    t.cookie = view(cookie_);
    t.exclusive = false;
    t.alock = Lock("host-b", 2, 5, 1);
    args.clear();
    {
        xdr::Encoder e(args);
        xn::xdr_encode(e, t);
    }
    ASSERT_EQ(NlmCall(xn::NLMPROC4_TEST_MSG, args).accept_stat, wire::kSuccess);
    ASSERT_TRUE(lockd_.WaitCalls(2)) << "no TEST_RES";
    calls = lockd_.Calls();
    EXPECT_EQ(calls[1].first, uint32_t(xn::NLMPROC4_TEST_RES));
    xn::nlm4_testres tr;
    xdr::Decoder d2(calls[1].second);
    ASSERT_TRUE(xn::xdr_decode(d2, tr));
    ASSERT_EQ(tr.stat.stat(), xn::NLM4_DENIED);
    EXPECT_EQ(tr.stat.holder().svid, 1);
}

// A host's first monitored LOCK asks this host's statd to watch it (SM_MON, with NLM's
// callback: program 100021, version 4, procedure 16); statd's callback when the host
// reboots frees its locks; the same callback from elsewhere than this host is ignored.
TEST_F(NlmGranted, WatchedHostsRebootFreesTheirLocks) {
    ASSERT_EQ(LockCall(Lock("host-a", 1, 0, 10), true), xn::NLM4_GRANTED);
    ASSERT_EQ(LockCall(Lock("host-a", 1, 20, 10), true), xn::NLM4_GRANTED);
    ASSERT_TRUE(statd_.WaitCalls(1)) << "no SM_MON";
    std::this_thread::sleep_for(std::chrono::milliseconds(200));
    auto mons = StatdCalls(2);
    ASSERT_EQ(mons.size(), 1u) << "one SM_MON per host";
    wire::XdrIn in(mons[0]);
    wire::Bytes mon_name, my_name;
    uint32_t prog = 0, vers = 0, proc = 0;
    ASSERT_TRUE(in.opaque(&mon_name, 1024) && in.opaque(&my_name, 1024));
    ASSERT_TRUE(in.u32(&prog) && in.u32(&vers) && in.u32(&proc));
    // The address statd watches (hosts.h), as lockd asks by default.
    EXPECT_EQ(std::string(mon_name.begin(), mon_name.end()), "127.0.0.1");
    EXPECT_EQ(prog, 100021u);
    EXPECT_EQ(vers, 4u);
    EXPECT_EQ(proc, 16u);
    EXPECT_EQ(TestByC(), xn::NLM4_GRANTED);  // host-c asks about [15, 16): free
    ASSERT_EQ(LockCall(Lock("host-a", 1, 15, 1), true), xn::NLM4_GRANTED);
    ASSERT_EQ(TestByC(), xn::NLM4_DENIED);
    // statd: 127.0.0.1, host-a's address, rebooted.
    wire::XdrOut note;
    note.str("127.0.0.1").u32(5);
    const uint8_t priv[16] = {};
    note.raw(priv, sizeof priv);
    wire::Reply r = NlmCall(16, note.take());
    ASSERT_EQ(r.accept_stat, wire::kSuccess) << r.Describe();
    EXPECT_TRUE(WaitFree()) << "host-a's locks outlived its reboot";
    // host-a comes back and locks at its new state (LockCall sends state 1); statd's word
    // of that reboot, late, names state 1: the new lock stays.
    ASSERT_EQ(LockCall(Lock("host-a", 1, 15, 1), true), xn::NLM4_GRANTED);
    wire::XdrOut late;
    late.str("127.0.0.1").u32(1);
    late.raw(priv, sizeof priv);
    ASSERT_EQ(NlmCall(16, late.take()).accept_stat, wire::kSuccess);
    std::this_thread::sleep_for(std::chrono::milliseconds(200));
    EXPECT_EQ(TestByC(), xn::NLM4_DENIED) << "a lock taken after the reboot was freed";
}

TEST_F(NlmGranted, NmLockIsNotMonitored) {
    xn::nlm4_lockargs a;
    a.cookie = view(cookie_);
    a.exclusive = true;
    a.alock = Lock("host-a", 1, 0, 10);
    a.reclaim = false;
    a.state = 1;
    auto r = Call<xn::nlm4_res>(xn::NLMPROC4_NM_LOCK, a);
    ASSERT_EQ(r.error, "");
    ASSERT_EQ(r.res.stat.stat, xn::NLM4_GRANTED);
    ASSERT_TRUE(daemon_->Restart());
    std::this_thread::sleep_for(std::chrono::milliseconds(500));
    EXPECT_TRUE(statd_.Calls().empty()) << "an NM_LOCK host was monitored or notified";
}

// An NFSv4.1 LOCKU frees what an NLM waiter waits for: the waiter is granted the same way.
TEST_F(NlmGranted, AnNfs4UnlockGrantsAnNlmWaiter) {
    const std::string owner = "v4-owner", lock_owner = "v4-lock-owner", name = "locked";
    Res o = Compound({Sequence(), op_putfh(root_),
                      op_open(view(owner), view(name), false, x4::OPEN4_SHARE_ACCESS_BOTH)});
    ASSERT_EQ(o.status(), x4::NFS4_OK);
    const x4::stateid4 open = o.op(2).opopen().resok4().stateid;
    Res l = Compound({Sequence(), op_putfh(fh_),
                      op_lock_new(x4::WRITE_LT, 0, 100, open, clientid_, view(lock_owner))});
    ASSERT_EQ(l.status(), x4::NFS4_OK);
    ASSERT_EQ(LockCall(Lock("host-b", 2, 10, 10), true, /*block=*/true), xn::NLM4_BLOCKED);
    Res u = Compound({Sequence(), op_putfh(fh_), op_locku(l.op(2).oplock().resok4().lock_stateid)});
    ASSERT_EQ(u.status(), x4::NFS4_OK);
    ASSERT_TRUE(lockd_.WaitCalls(1)) << "no GRANTED callback after the NFSv4.1 unlock";
    auto t = TestCall(Lock("host-c", 3, 15, 1), false);
    ASSERT_EQ(t.res.stat.stat(), xn::NLM4_DENIED);
    EXPECT_EQ(t.res.stat.holder().svid, 2);
}

TEST_F(NlmGranted, ARefusedGrantedReleasesTheLock) {
    reply_ = xn::NLM4_DENIED;  // the client no longer waits
    BlockB();
    if (HasFatalFailure()) return;
    ASSERT_EQ(UnlockCall(Lock("host-a", 1, 0, 100)), xn::NLM4_GRANTED);
    ASSERT_TRUE(lockd_.WaitCalls(1));
    EXPECT_TRUE(WaitFree()) << "host-b kept a lock it refused";
}

// A refused GRANTED of an upgrade (read to write) gives back what the owner held before:
// its read lock stays, only the write is undone.
TEST_F(NlmGranted, ARefusedUpgradeKeepsTheReadLock) {
    reply_ = xn::NLM4_DENIED;
    ASSERT_EQ(LockCall(Lock("host-b", 2, 10, 10), false), xn::NLM4_GRANTED);       // read
    ASSERT_EQ(LockCall(Lock("host-a", 1, 0, 100), false), xn::NLM4_GRANTED);       // read
    ASSERT_EQ(LockCall(Lock("host-b", 2, 10, 10), true, true), xn::NLM4_BLOCKED);  // upgrade
    ASSERT_EQ(UnlockCall(Lock("host-a", 1, 0, 100)), xn::NLM4_GRANTED);
    ASSERT_TRUE(lockd_.WaitCalls(1)) << "no GRANTED callback";
    // Once the refusal is handled, host-c may read-lock the bytes again (no write lock)...
    bool readable = false;
    for (int i = 0; i < 250 && !readable; ++i) {
        auto t = TestCall(Lock("host-c", 3, 15, 1), false);
        readable = t.res.stat.stat() == xn::NLM4_GRANTED;
        if (!readable) std::this_thread::sleep_for(std::chrono::milliseconds(20));
    }
    ASSERT_TRUE(readable) << "the refused write lock stayed";
    // ... but not write-lock them: host-b still holds its read lock there.
    auto t = TestCall(Lock("host-c", 3, 15, 1), true);
    ASSERT_EQ(t.res.stat.stat(), xn::NLM4_DENIED) << "the read lock went with the refused upgrade";
    EXPECT_EQ(t.res.stat.holder().svid, 2);
    EXPECT_FALSE(t.res.stat.holder().exclusive);
    // Bytes host-b never held before the upgrade are free.
    EXPECT_EQ(TestCall(Lock("host-c", 3, 0, 10), true).res.stat.stat(), xn::NLM4_GRANTED);
}

// The client unlocks after the grant and only then refuses it (its GRANTED answer is
// slow): nothing is given back, neither the write lock nor the read lock held before.
TEST_F(NlmGranted, AnUnlockBeforeTheRefusalLeavesNothingToRestore) {
    reply_ = xn::NLM4_DENIED;
    delay_ms_ = 800;
    ASSERT_EQ(LockCall(Lock("host-b", 2, 10, 10), false), xn::NLM4_GRANTED);       // read
    ASSERT_EQ(LockCall(Lock("host-a", 1, 0, 100), false), xn::NLM4_GRANTED);       // read
    ASSERT_EQ(LockCall(Lock("host-b", 2, 10, 10), true, true), xn::NLM4_BLOCKED);  // upgrade
    ASSERT_EQ(UnlockCall(Lock("host-a", 1, 0, 100)), xn::NLM4_GRANTED);
    std::this_thread::sleep_for(std::chrono::milliseconds(200));  // granted; GRANTED in flight
    ASSERT_EQ(UnlockCall(Lock("host-b", 2, 10, 10)), xn::NLM4_GRANTED);
    ASSERT_TRUE(lockd_.WaitCalls(1));
    std::this_thread::sleep_for(std::chrono::milliseconds(1200));  // the refusal has come
    auto t = TestCall(Lock("host-c", 3, 15, 1), true);
    EXPECT_EQ(t.res.stat.stat(), xn::NLM4_GRANTED) << "a lock the client had unlocked came back";
}

// A host that locks at another NSM state than its earlier locks rebooted in between (its
// statd's word may come later, or never): its earlier locks go; the new one is granted.
TEST_F(Nlm, ALockAtANewNsmStateFreesTheHostsEarlierLocks) {
    ASSERT_EQ(LockCall(Lock("host-a", 1, 0, 10), true), xn::NLM4_GRANTED);
    ASSERT_EQ(LockCall(Lock("host-a", 2, 100, 10), true), xn::NLM4_GRANTED);
    ASSERT_EQ(LockCall(Lock("host-c", 4, 0, 10), true), xn::NLM4_DENIED);
    nsm_state_ = 3;  // host-a rebooted
    ASSERT_EQ(LockCall(Lock("host-a", 1, 200, 10), true), xn::NLM4_GRANTED);
    nsm_state_ = 1;  // host-c never rebooted
    EXPECT_EQ(LockCall(Lock("host-c", 4, 0, 10), true), xn::NLM4_GRANTED)
        << "a lock from before host-a's reboot stayed";
    EXPECT_EQ(LockCall(Lock("host-c", 4, 100, 10), true), xn::NLM4_GRANTED);
    EXPECT_EQ(LockCall(Lock("host-c", 4, 205, 1), true), xn::NLM4_DENIED)
        << "the lock taken after the reboot went too";
}

// A GRANTED that cannot be delivered leaves the lock to the owner's re-send (its lockd
// asks again): the lock stays; a CANCEL from the owner instead releases it.
TEST_F(NlmGranted, AnUndeliveredGrantWaitsForTheReSendOrCancel) {
    lockd_port_ = 1;  // nothing listens there
    BlockB();
    if (HasFatalFailure()) return;
    ASSERT_EQ(UnlockCall(Lock("host-a", 1, 0, 100)), xn::NLM4_GRANTED);
    ASSERT_TRUE(rpcbind_.WaitCalls(2));  // GETPORT for NLM (the GRANTED), after SM_MON's
    std::this_thread::sleep_for(std::chrono::milliseconds(300));
    EXPECT_EQ(TestByC(), xn::NLM4_DENIED) << "host-b's lock went with the undelivered GRANTED";
    EXPECT_EQ(LockCall(Lock("host-b", 2, 10, 10), true, true), xn::NLM4_GRANTED);  // re-send
    // Another waiter, granted the same way, then cancelled: released.
    ASSERT_EQ(UnlockCall(Lock("host-b", 2, 10, 10)), xn::NLM4_GRANTED);
    ASSERT_EQ(LockCall(Lock("host-a", 1, 0, 100), true), xn::NLM4_GRANTED);
    ASSERT_EQ(LockCall(Lock("host-b", 2, 10, 10), true, true), xn::NLM4_BLOCKED);
    ASSERT_EQ(UnlockCall(Lock("host-a", 1, 0, 100)), xn::NLM4_GRANTED);
    std::this_thread::sleep_for(std::chrono::milliseconds(300));
    ASSERT_EQ(TestByC(), xn::NLM4_DENIED);  // granted to host-b
    ASSERT_EQ(CancelCall(Lock("host-b", 2, 10, 10), true), xn::NLM4_GRANTED);
    EXPECT_TRUE(WaitFree()) << "a cancelled, undelivered grant kept the lock";
}

// The client refuses a GRANTED (no block pending on its side) after its own re-send got
// the lock meanwhile: it holds the lock and knows it, so the lock stays.
TEST_F(NlmGranted, ARefusalAfterTheReSendKeepsTheLock) {
    reply_ = xn::NLM4_DENIED;
    delay_ms_ = 800;
    BlockB();
    if (HasFatalFailure()) return;
    ASSERT_EQ(UnlockCall(Lock("host-a", 1, 0, 100)), xn::NLM4_GRANTED);
    std::this_thread::sleep_for(std::chrono::milliseconds(200));  // the GRANTED is in flight
    EXPECT_EQ(LockCall(Lock("host-b", 2, 10, 10), true, true), xn::NLM4_GRANTED);
    ASSERT_TRUE(lockd_.WaitCalls(1));
    std::this_thread::sleep_for(std::chrono::milliseconds(1200));  // the refusal has come
    EXPECT_EQ(TestByC(), xn::NLM4_DENIED) << "a lock the client was told it holds was released";
}

// An UNLOCK implies a CANCEL of the owner's blocked LOCK of that range (the Linux server's
// nlmsvc_unlock): the waiter is not granted later, nor called back.
TEST_F(NlmGranted, AnUnlockOfTheWaitersRangeCancelsItsBlockedLock) {
    BlockB();
    if (HasFatalFailure()) return;
    ASSERT_EQ(UnlockCall(Lock("host-b", 2, 10, 10)), xn::NLM4_GRANTED);
    ASSERT_EQ(UnlockCall(Lock("host-a", 1, 0, 100)), xn::NLM4_GRANTED);
    std::this_thread::sleep_for(std::chrono::milliseconds(300));
    EXPECT_TRUE(lockd_.Calls().empty()) << "the unlocked waiter was called back";
    EXPECT_EQ(TestByC(), xn::NLM4_GRANTED) << "the unlocked waiter was granted the lock";
}

TEST_F(NlmGranted, ACancelledWaiterIsNotCalledBack) {
    BlockB();
    if (HasFatalFailure()) return;
    ASSERT_EQ(CancelCall(Lock("host-b", 2, 10, 10), true), xn::NLM4_GRANTED);
    ASSERT_EQ(UnlockCall(Lock("host-a", 1, 0, 100)), xn::NLM4_GRANTED);
    std::this_thread::sleep_for(std::chrono::milliseconds(300));
    EXPECT_TRUE(lockd_.Calls().empty());
    EXPECT_EQ(TestByC(), xn::NLM4_GRANTED);
}

TEST_F(Nlm, NlmAndNfs4LocksSeeEachOther) {
    ASSERT_EQ(LockCall(Lock("host-a", 7, 0, 10), true), xn::NLM4_GRANTED);
    // An NFSv4.1 open and LOCK of the same bytes: denied by the NLM lock.
    const std::string owner = "v4-owner", lock_owner = "v4-lock-owner", name = "locked";
    Res o = Compound({Sequence(), op_putfh(root_),
                      op_open(view(owner), view(name), false, x4::OPEN4_SHARE_ACCESS_BOTH)});
    ASSERT_EQ(o.status(), x4::NFS4_OK);
    const x4::stateid4 open = o.op(2).opopen().resok4().stateid;
    Res denied = Compound({Sequence(), op_putfh(fh_),
                           op_lock_new(x4::WRITE_LT, 5, 10, open, clientid_, view(lock_owner))});
    ASSERT_EQ(denied.error, "");
    EXPECT_EQ(denied.status(), x4::NFS4ERR_DENIED);
    // Other bytes: granted, and NLM's TEST sees that lock (svid 0: not an NLM owner).
    Res got = Compound({Sequence(), op_putfh(fh_),
                        op_lock_new(x4::WRITE_LT, 100, 10, open, clientid_, view(lock_owner))});
    ASSERT_EQ(got.status(), x4::NFS4_OK);
    auto t = TestCall(Lock("host-b", 8, 105, 1), false);
    ASSERT_EQ(t.res.stat.stat(), xn::NLM4_DENIED);
    EXPECT_EQ(t.res.stat.holder().svid, 0);
    EXPECT_EQ(t.res.stat.holder().l_offset, 100u);
    EXPECT_EQ(t.res.stat.holder().l_len, 10u);
    EXPECT_EQ(LockCall(Lock("host-b", 8, 105, 1), false), xn::NLM4_DENIED);
    // The NLM lock goes: the NFSv4.1 request is granted.
    ASSERT_EQ(UnlockCall(Lock("host-a", 7, 0, 10)), xn::NLM4_GRANTED);
    const x4::stateid4 lock_sid = got.op(2).oplock().resok4().lock_stateid;
    Res again = Compound({Sequence(), op_putfh(fh_), op_lock_old(x4::WRITE_LT, 5, 10, lock_sid)});
    EXPECT_EQ(again.status(), x4::NFS4_OK);
}

TEST_F(Nlm, ALocalProcessSeesTheLock) {
    ASSERT_EQ(LockCall(Lock("host-a", 9, 10, 20), true), xn::NLM4_GRANTED);
    const int fd = ::open(daemon_->on_disk("locked").c_str(), O_RDWR);
    ASSERT_GE(fd, 0);
    struct flock fl = test_os::write_lock_range(0, 100);
    ASSERT_EQ(::fcntl(fd, F_OFD_GETLK, &fl), 0);
    EXPECT_EQ(fl.l_type, F_WRLCK);
    EXPECT_EQ(fl.l_start, 10);
    EXPECT_EQ(fl.l_len, 20);
    // And the other way: a local process's lock denies the client.
    struct flock mine = test_os::write_lock_range(500, 10);
    ASSERT_EQ(::fcntl(fd, F_OFD_SETLK, &mine), 0);
    EXPECT_EQ(LockCall(Lock("host-b", 1, 505, 1), false), xn::NLM4_DENIED);
    ::close(fd);
    EXPECT_EQ(LockCall(Lock("host-b", 1, 505, 1), false), xn::NLM4_GRANTED);
}

TEST_F(Nlm, FreeAllDropsEverythingOfTheHost) {
    ASSERT_EQ(LockCall(Lock("gone", 1, 0, 10), true), xn::NLM4_GRANTED);
    ASSERT_EQ(LockCall(Lock("gone", 2, 20, 10), true), xn::NLM4_GRANTED);
    ASSERT_EQ(LockCall(Lock("stays", 3, 40, 10), true), xn::NLM4_GRANTED);
    xn::nlm4_notify n;
    const std::string host = "gone";
    n.name = host;
    n.state = 3;
    wire::Bytes args;
    xdr::Encoder e(args);
    xn::xdr_encode(e, n);
    wire::Reply r = NlmCall(xn::NLMPROC4_FREE_ALL, std::move(args));
    ASSERT_EQ(r.accept_stat, wire::kSuccess) << r.Describe();
    EXPECT_EQ(LockCall(Lock("other", 4, 0, 30), true), xn::NLM4_GRANTED);
    EXPECT_EQ(LockCall(Lock("other", 4, 40, 1), true), xn::NLM4_DENIED);
}

TEST_F(Nlm, ShareModesBetweenHosts) {
    EXPECT_EQ(ShareCall(xn::NLMPROC4_SHARE, "a", xn::fsa_RW, xn::fsm_DW), xn::NLM4_GRANTED);
    EXPECT_EQ(ShareCall(xn::NLMPROC4_SHARE, "b", xn::fsa_W, xn::fsm_DN), xn::NLM4_DENIED);
    EXPECT_EQ(ShareCall(xn::NLMPROC4_SHARE, "b", xn::fsa_R, xn::fsm_DN), xn::NLM4_GRANTED);
    EXPECT_EQ(ShareCall(xn::NLMPROC4_UNSHARE, "a", xn::fsa_RW, xn::fsm_DW), xn::NLM4_GRANTED);
    EXPECT_EQ(ShareCall(xn::NLMPROC4_SHARE, "c", xn::fsa_W, xn::fsm_DN), xn::NLM4_GRANTED);
}

// NLM SHARE and NFSv4.1 OPEN reserve shares in one model (RFC 8881 §9.7, XNFS fsh4_*):
// each is denied by the other's deny bits and denies the other's access.
TEST_F(Nlm, ShareModesAcrossNlmAndNfs4) {
    const std::string owner = "v4-owner", other = "v4-other", name = "locked";
    // An NFSv4.1 open reads and denies writers.
    Res o = Compound({Sequence(), op_putfh(root_),
                      op_open(view(owner), view(name), false, x4::OPEN4_SHARE_ACCESS_READ,
                              x4::OPEN4_SHARE_DENY_WRITE)});
    ASSERT_EQ(o.status(), x4::NFS4_OK);
    EXPECT_EQ(ShareCall(xn::NLMPROC4_SHARE, "a", xn::fsa_W, xn::fsm_DN), xn::NLM4_DENIED);
    EXPECT_EQ(ShareCall(xn::NLMPROC4_SHARE, "a", xn::fsa_R, xn::fsm_DR), xn::NLM4_DENIED);
    EXPECT_EQ(ShareCall(xn::NLMPROC4_SHARE, "a", xn::fsa_R, xn::fsm_DW), xn::NLM4_GRANTED);
    // Host a's deny-write share now stops an NFSv4.1 writer, after the open is closed too.
    Res c = Compound({Sequence(), op_putfh(fh_), op_close(o.op(2).opopen().resok4().stateid)});
    ASSERT_EQ(c.status(), x4::NFS4_OK);
    Res w = Compound({Sequence(), op_putfh(root_),
                      op_open(view(other), view(name), false, x4::OPEN4_SHARE_ACCESS_WRITE)});
    ASSERT_EQ(w.error, "");
    EXPECT_EQ(w.status(), x4::NFS4ERR_SHARE_DENIED);
    Res r = Compound({Sequence(), op_putfh(root_),
                      op_open(view(other), view(name), false, x4::OPEN4_SHARE_ACCESS_READ)});
    ASSERT_EQ(r.status(), x4::NFS4_OK);
    Res cr = Compound({Sequence(), op_putfh(fh_), op_close(r.op(2).opopen().resok4().stateid)});
    ASSERT_EQ(cr.status(), x4::NFS4_OK);
    // Once host a lets go, the writer gets in.
    EXPECT_EQ(ShareCall(xn::NLMPROC4_UNSHARE, "a", xn::fsa_R, xn::fsm_DW), xn::NLM4_GRANTED);
    Res w2 = Compound({Sequence(), op_putfh(root_),
                       op_open(view(other), view(name), false, x4::OPEN4_SHARE_ACCESS_WRITE)});
    EXPECT_EQ(w2.status(), x4::NFS4_OK);
}

// XNFS: during the grace period after a restart only reclaims are let in; the grace
// period is the one NFSv4.1 keeps (a client of the previous boot is known), and it ends
// when that client has sent RECLAIM_COMPLETE. Outside grace a reclaim is refused too.
TEST_F(Nlm, GracePeriodAfterARestartAdmitsReclaimsOnly) {
    ASSERT_TRUE(daemon_->Restart());
    conn_ = Connect();
    ASSERT_NE(conn_, nullptr);
    auto lock = [&](bool reclaim) {
        xn::nlm4_lockargs a;
        a.cookie = view(cookie_);
        a.exclusive = true;
        a.alock = Lock("back", 1, 0, 10);
        a.reclaim = reclaim;
        a.state = 2;
        auto r = Call<xn::nlm4_res>(xn::NLMPROC4_LOCK, a);
        EXPECT_EQ(r.error, "");
        return r.res.stat.stat;
    };
    EXPECT_EQ(lock(false), xn::NLM4_DENIED_GRACE_PERIOD);
    EXPECT_EQ(TestCall(Lock("other", 2, 0, 1), false).res.stat.stat(),
              xn::NLM4_DENIED_GRACE_PERIOD);
    // Arguments are judged before grace (as knfsd): a forged handle, a range too far.
    wire::Bytes forged(fh_);
    forged.back() ^= 0x5a;
    EXPECT_EQ(TestCall(Lock("other", 2, 0, 1, &forged), false).res.stat.stat(), xn::NLM4_STALE_FH);
    EXPECT_EQ(LockCall(Lock("other", 2, uint64_t{INT64_MAX} + 1, 1), false), xn::NLM4_FBIG);
    EXPECT_EQ(lock(true), xn::NLM4_GRANTED);  // the reclaim
    // The NFSv4.1 client of the previous boot comes back and is done reclaiming.
    reclaim_complete_ = false;  // sent here
    Establish();
    if (HasFatalFailure()) return;
    x4::nfs_argop4 rc(x4::OP_RECLAIM_COMPLETE);
    rc.opreclaim_complete().rca_one_fs = false;
    ASSERT_EQ(Compound({Sequence(), rc}).status(), x4::NFS4_OK);
    EXPECT_EQ(lock(true), xn::NLM4_DENIED_GRACE_PERIOD);  // nothing to reclaim any more
    EXPECT_EQ(LockCall(Lock("other", 2, 0, 1), false), xn::NLM4_DENIED);  // the reclaimed lock
    EXPECT_EQ(LockCall(Lock("other", 2, 10, 1), false), xn::NLM4_GRANTED);
}

TEST_F(Nlm, BadInputIsRefusedAndHoldsNothing) {
    // A caller_name past LM_MAXSTRLEN and an oh past MAXNETOBJ_SZ: GARBAGE_ARGS.
    const std::string long_name(1025, 'n');
    xn::nlm4_lock l = Lock("x", 1, 0, 1);
    l.caller_name = long_name;
    xn::nlm4_lockargs a;
    a.cookie = view(cookie_);
    a.exclusive = true;
    a.alock = l;
    wire::Bytes args;
    {
        xdr::Encoder e(args);
        xn::xdr_encode(e, a);
    }
    EXPECT_EQ(NlmCall(xn::NLMPROC4_LOCK, args).accept_stat, wire::kGarbageArgs);
    const std::string long_oh(2000, 'o');
    a.alock = Lock("x", 1, 0, 1);
    a.alock.oh = view(long_oh);
    args.clear();
    {
        xdr::Encoder e(args);
        xn::xdr_encode(e, a);
    }
    EXPECT_EQ(NlmCall(xn::NLMPROC4_LOCK, args).accept_stat, wire::kGarbageArgs);
    // Truncated arguments.
    args.resize(args.size() / 2);
    EXPECT_EQ(NlmCall(xn::NLMPROC4_LOCK, args).accept_stat, wire::kGarbageArgs);
    // A forged handle, and a directory's: STALE_FH and FAILED.
    wire::Bytes forged(fh_);
    forged.back() ^= 0x5a;
    EXPECT_EQ(LockCall(Lock("x", 1, 0, 1, &forged), true), xn::NLM4_STALE_FH);
    EXPECT_EQ(LockCall(Lock("x", 1, 0, 1, &root_), true), xn::NLM4_FAILED);
    // A range past the largest file offset (2^63 - 1): NLM4_FBIG, as the Linux server.
    const uint64_t past = uint64_t{INT64_MAX} + 1;
    EXPECT_EQ(LockCall(Lock("x", 1, past, 1), true), xn::NLM4_FBIG);
    EXPECT_EQ(LockCall(Lock("x", 1, 0, past + 1), true), xn::NLM4_FBIG);
    EXPECT_EQ(LockCall(Lock("x", 1, 5, UINT64_MAX), true), xn::NLM4_FBIG);
    EXPECT_EQ(TestCall(Lock("x", 1, past, 0), true).res.stat.stat(), xn::NLM4_FBIG);
    // Up to 2^63 - 1 it fits.
    EXPECT_EQ(TestCall(Lock("x", 1, 0, past), true).res.stat.stat(), xn::NLM4_GRANTED);
    EXPECT_EQ(TestCall(Lock("x", 1, INT64_MAX, 1), true).res.stat.stat(), xn::NLM4_GRANTED);
    // A 1024-byte cookie comes back as it was.
    cookie_.assign(1024, 'c');
    EXPECT_EQ(LockCall(Lock("x", 1, 0, 1), true), xn::NLM4_GRANTED);
    // Nothing of the refused calls is held: another host gets the rest of the file.
    EXPECT_EQ(LockCall(Lock("y", 2, 1, 0), true), xn::NLM4_GRANTED);
}

}  // namespace
}  // namespace nfsrdmad::e2e
