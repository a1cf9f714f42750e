// NLM v4 (XNFS) against the running daemon from a raw client over TCP: every call is
// encoded with the generated codecs (xdr/nlm_prot.h) and sent on a plain socket. The
// file handles come from the raw NFSv4.1 client (tests/e2e/nfs4_fixture.h): the same
// handles NFSv3 uses, which NLM names files by.
//
//   NULL, version 3, a _MSG procedure      -> SUCCESS, PROG_MISMATCH 4..4, PROC_UNAVAIL
//   two hosts, one range                   -> GRANTED, DENIED naming the holder, BLOCKED,
//                                             CANCEL, UNLOCK, then GRANTED
//   an NLM lock and an NFSv4.1 lock        -> each denies the other (one lock table)
//   a local process on the server          -> sees the NLM lock (OFD mirror)
//   FREE_ALL                               -> the host's locks and shares are gone
//   SHARE / UNSHARE                        -> deny modes between hosts
//   a restart                              -> DENIED_GRACE_PERIOD but for reclaims, until
//                                             the NFSv4.1 client's RECLAIM_COMPLETE
//   bad input                              -> GARBAGE_ARGS, STALE_FH, FAILED; nothing held
// First (libnfs's AUTH_* macros): see nfs4_fixture.h.
#include "tests/e2e/nfs4_fixture.h"
#include "xdr/nlm_prot.h"

#include <fcntl.h>
#include <gtest/gtest.h>
#include <unistd.h>

#include <string>
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
        return Nlm::RawCall(*conn_, 100021, vers, proc, std::move(args));
    }
    wire::Reply RawCall(wire::Conn& c, uint32_t prog, uint32_t vers, uint32_t proc,
                        wire::Bytes args) {
        wire::Reply r;
        std::string why;
        if (!c.SendRecord(
                wire::EncodeCall(wire::RootCall(++xid_, prog, vers, proc, std::move(args))),
                &why)) {
            r.parse_error = "send: " + why;
            return r;
        }
        wire::Bytes rec;
        if (c.RecvRecord(&rec, 10000, &why) != wire::Conn::Recv::kOk) {
            r.parse_error = "receive: " + why;
            return r;
        }
        return wire::ParseReply(rec);
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
        a.state = 1;
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
    std::deque<std::string> strings_;
};

TEST_F(Nlm, NullVersionsAndUnservedProcedures) {
    wire::Reply n = NlmCall(xn::NLMPROC4_NULL, {});
    ASSERT_EQ(n.parse_error, "");
    EXPECT_EQ(n.accept_stat, wire::kSuccess);
    wire::Reply v3 = NlmCall(0, {}, 3);
    EXPECT_EQ(v3.accept_stat, wire::kProgMismatch);
    EXPECT_EQ(v3.mismatch_low, 4u);
    EXPECT_EQ(v3.mismatch_high, 4u);
    wire::Reply msg = NlmCall(xn::NLMPROC4_LOCK_MSG, {});
    EXPECT_EQ(msg.accept_stat, wire::kProcUnavail);
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
    struct flock fl {};
    fl.l_type = F_WRLCK;
    fl.l_whence = SEEK_SET;
    fl.l_start = 0;
    fl.l_len = 100;
    ASSERT_EQ(::fcntl(fd, F_OFD_GETLK, &fl), 0);
    EXPECT_EQ(fl.l_type, F_WRLCK);
    EXPECT_EQ(fl.l_start, 10);
    EXPECT_EQ(fl.l_len, 20);
    // And the other way: a local process's lock denies the client.
    struct flock mine {};
    mine.l_type = F_WRLCK;
    mine.l_whence = SEEK_SET;
    mine.l_start = 500;
    mine.l_len = 10;
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
    auto share = [&](uint32_t proc, const std::string& host, xn::fsh4_access access,
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
    };
    EXPECT_EQ(share(xn::NLMPROC4_SHARE, "a", xn::fsa_RW, xn::fsm_DW), xn::NLM4_GRANTED);
    EXPECT_EQ(share(xn::NLMPROC4_SHARE, "b", xn::fsa_W, xn::fsm_DN), xn::NLM4_DENIED);
    EXPECT_EQ(share(xn::NLMPROC4_SHARE, "b", xn::fsa_R, xn::fsm_DN), xn::NLM4_GRANTED);
    EXPECT_EQ(share(xn::NLMPROC4_UNSHARE, "a", xn::fsa_RW, xn::fsm_DW), xn::NLM4_GRANTED);
    EXPECT_EQ(share(xn::NLMPROC4_SHARE, "c", xn::fsa_W, xn::fsm_DN), xn::NLM4_GRANTED);
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
    EXPECT_EQ(lock(true), xn::NLM4_GRANTED);  // the reclaim
    // The NFSv4.1 client of the previous boot comes back and is done reclaiming.
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
    // A 1024-byte cookie comes back as it was.
    cookie_.assign(1024, 'c');
    EXPECT_EQ(LockCall(Lock("x", 1, 0, 1), true), xn::NLM4_GRANTED);
    // Nothing of the refused calls is held: another host gets the rest of the file.
    EXPECT_EQ(LockCall(Lock("y", 2, 1, 0), true), xn::NLM4_GRANTED);
}

}  // namespace
}  // namespace nfsrdmad::e2e
