// NFSv4.1 byte-range locks through Nfs4Program (RFC 8881 §18.10-§18.12): LOCK with
// open_to_lock_owner4 and exist_lock_owner4, LOCKT, LOCKU; conflicts between clients,
// one owner's upgrade, downgrade and split; LOCK4denied naming the holder; OPENMODE;
// INVAL lengths; LOCKS_HELD on CLOSE and FREE_STATEID; bad and old stateids.
#include <gtest/gtest.h>

#include <fcntl.h>
#include <unistd.h>

#include <cstring>

#include "tests/unit/nfs4_ops_util.h"

namespace nfsrdmad::nfs::v4::testing {
namespace {

constexpr uint64_t kAll = ~uint64_t{0};

class Nfs4Locks : public Nfs4OpsFixture {
  protected:
    struct Sess {
        std::string owner;
        uint64_t clientid = 0;
        x4::sessionid4 sessionid{};
        uint32_t seqid = 0;
    };

    void SetUp() override {
        Nfs4OpsFixture::SetUp();
        establish("client-a");
        a_ = save();
        establish("client-b");
        b_ = save();
        use(a_);
        root_fh_ = exp_->root_handle();
        write_file("f", "0123456789");
        write_file("g", "abcdef");
    }

    Sess save() const { return {owner_, clientid_, sessionid_, seqid_}; }
    // Switches the session seq() uses (keeping the one in use up to date).
    void use(Sess& s) {
        if (cur_) *cur_ = save();
        owner_ = s.owner;
        clientid_ = s.clientid;
        sessionid_ = s.sessionid;
        seqid_ = s.seqid;
        cur_ = &s;
    }

    x4::nfs_argop4 put_root() { return op_putfh(root_fh_.data()); }
    std::span<const uint8_t> s(const std::string& v) { return keep(v); }

    // OPEN of an existing file; the current filehandle is the file. The open stateid.
    x4::stateid4 open(const std::string& name, uint32_t access = x4::OPEN4_SHARE_ACCESS_BOTH,
                      const std::string& owner = "open-owner") {
        Reply r = seq({put_root(), op_open(s(owner), s(name), false, access)});
        EXPECT_EQ(r.status(), x4::NFS4_OK);
        if (r.status() != x4::NFS4_OK) return {};
        return r.op(2).opopen().resok4().stateid;
    }
    std::vector<x4::nfs_argop4> at(const std::string& name,
                                   std::initializer_list<x4::nfs_argop4> ops) {
        std::vector<x4::nfs_argop4> v{put_root(), op_lookup(s(name))};
        v.insert(v.end(), ops);
        return v;
    }

    x4::nfs_argop4 lock_new(x4::nfs_lock_type4 t, uint64_t off, uint64_t len,
                            const x4::stateid4& open_sid, const std::string& owner) {
        return op_lock_new(t, off, len, open_sid, clientid_, s(owner));
    }
    static x4::nfs_argop4 lock_old(x4::nfs_lock_type4 t, uint64_t off, uint64_t len,
                                   const x4::stateid4& lock_sid) {
        return op_lock_old(t, off, len, lock_sid);
    }
    x4::nfs_argop4 lockt(x4::nfs_lock_type4 t, uint64_t off, uint64_t len, const std::string& owner,
                         std::optional<uint64_t> clientid = {}) {
        return op_lockt(t, off, len, clientid.value_or(clientid_), s(owner));
    }
    static x4::nfs_argop4 locku(const x4::stateid4& sid, uint64_t off, uint64_t len) {
        return op_locku(sid, off, len);
    }
    x4::nfs_argop4 free_stateid(const x4::stateid4& sid) {
        x4::nfs_argop4 op(x4::OP_FREE_STATEID);
        op.opfree_stateid().fsa_stateid = sid;
        return op;
    }

    // The last operation's status.
    static x4::nfsstat4 last(const Reply& r) { return r.status(); }
    static const x4::LOCK4denied& denied(const Reply& r) {
        const auto& op = r.op(r.count() - 1);
        return op.resop() == x4::OP_LOCK ? op.oplock().denied() : op.oplockt().denied();
    }
    static x4::stateid4 lock_sid(const Reply& r) {
        return r.op(r.count() - 1).oplock().resok4().lock_stateid;
    }
    static std::string bytes(std::span<const uint8_t> b) { return {b.begin(), b.end()}; }

    Sess a_, b_;
    Sess* cur_ = nullptr;
    vfs::FileHandle root_fh_;
};

TEST_F(Nfs4Locks, ConflictBetweenClientsThenUnlockGrants) {
    x4::stateid4 oa = open("f");
    Reply la = seq(at("f", {lock_new(x4::WRITE_LT, 0, 100, oa, "lock-a")}));
    ASSERT_EQ(la.status(), x4::NFS4_OK);
    x4::stateid4 sa = lock_sid(la);
    EXPECT_EQ(sa.seqid, 1u);

    use(b_);
    x4::stateid4 ob = open("f");
    Reply lb = seq(at("f", {lock_new(x4::READ_LT, 50, 10, ob, "lock-b")}));
    ASSERT_EQ(lb.status(), x4::NFS4ERR_DENIED);
    EXPECT_EQ(denied(lb).offset, 0u);
    EXPECT_EQ(denied(lb).length, 100u);
    EXPECT_EQ(denied(lb).locktype, x4::WRITE_LT);
    EXPECT_EQ(denied(lb).owner.clientid, a_.clientid);
    EXPECT_EQ(bytes(denied(lb).owner.owner), "lock-a");
    // Blocking variant: denied the same way (the client polls).
    EXPECT_EQ(seq(at("f", {lock_new(x4::READW_LT, 50, 10, ob, "lock-b")})).status(),
              x4::NFS4ERR_DENIED);
    // Outside the held range: granted.
    Reply far = seq(at("f", {lock_new(x4::WRITE_LT, 100, kAll, ob, "lock-b")}));
    ASSERT_EQ(far.status(), x4::NFS4_OK);

    // LOCKT names the holder too.
    Reply t = seq(at("f", {lockt(x4::WRITE_LT, 99, 1, "lock-b")}));
    ASSERT_EQ(t.status(), x4::NFS4ERR_DENIED);
    EXPECT_EQ(denied(t).owner.clientid, a_.clientid);
    EXPECT_EQ(bytes(denied(t).owner.owner), "lock-a");
    EXPECT_EQ(denied(t).length, 100u);

    use(a_);
    // A's LOCKT sees B's lock past 100 (length to EOF = all ones).
    Reply ta = seq(at("f", {lockt(x4::READ_LT, 0, kAll, "lock-a")}));
    ASSERT_EQ(ta.status(), x4::NFS4ERR_DENIED);
    EXPECT_EQ(denied(ta).offset, 100u);
    EXPECT_EQ(denied(ta).length, kAll);
    EXPECT_EQ(denied(ta).owner.clientid, b_.clientid);

    Reply u = seq(at("f", {locku(sa, 0, 100)}));
    ASSERT_EQ(u.status(), x4::NFS4_OK);
    EXPECT_EQ(u.op(3).oplocku().lock_stateid().seqid, 2u);
    EXPECT_EQ(u.op(3).oplocku().lock_stateid().other, sa.other);

    use(b_);
    EXPECT_EQ(seq(at("f", {lockt(x4::WRITE_LT, 0, 100, "lock-b")})).status(), x4::NFS4_OK);
    EXPECT_EQ(seq(at("f", {lock_old(x4::WRITE_LT, 0, 100, lock_sid(far))})).status(), x4::NFS4_OK);
}

TEST_F(Nfs4Locks, SameOwnerUpgradeDowngradeSplit) {
    x4::stateid4 oa = open("f");
    Reply r1 = seq(at("f", {lock_new(x4::READ_LT, 0, 100, oa, "la")}));
    ASSERT_EQ(r1.status(), x4::NFS4_OK);
    x4::stateid4 sid = lock_sid(r1);
    // Upgrade in place (the owner never conflicts with itself).
    Reply r2 = seq(at("f", {lock_old(x4::WRITE_LT, 0, 100, sid)}));
    ASSERT_EQ(r2.status(), x4::NFS4_OK);
    sid = lock_sid(r2);
    EXPECT_EQ(sid.seqid, 2u);

    use(b_);
    EXPECT_EQ(seq(at("f", {lockt(x4::READ_LT, 10, 1, "lb")})).status(), x4::NFS4ERR_DENIED);

    use(a_);
    Reply r3 = seq(at("f", {lock_old(x4::READ_LT, 0, 100, sid)}));  // downgrade
    ASSERT_EQ(r3.status(), x4::NFS4_OK);
    sid = lock_sid(r3);

    use(b_);
    EXPECT_EQ(seq(at("f", {lockt(x4::READ_LT, 10, 1, "lb")})).status(), x4::NFS4_OK);
    Reply w = seq(at("f", {lockt(x4::WRITE_LT, 10, 1, "lb")}));
    ASSERT_EQ(w.status(), x4::NFS4ERR_DENIED);
    EXPECT_EQ(denied(w).locktype, x4::READ_LT);

    use(a_);
    Reply u = seq(at("f", {locku(sid, 40, 20)}));  // split: 0-39 and 60-99 remain
    ASSERT_EQ(u.status(), x4::NFS4_OK);
    EXPECT_EQ(u.op(3).oplocku().lock_stateid().seqid, sid.seqid + 1);

    use(b_);
    EXPECT_EQ(seq(at("f", {lockt(x4::WRITE_LT, 40, 20, "lb")})).status(), x4::NFS4_OK);
    Reply lo = seq(at("f", {lockt(x4::WRITE_LT, 30, 20, "lb")}));
    ASSERT_EQ(lo.status(), x4::NFS4ERR_DENIED);
    EXPECT_EQ(denied(lo).offset, 0u);
    EXPECT_EQ(denied(lo).length, 40u);
    Reply hi = seq(at("f", {lockt(x4::WRITE_LT, 59, 2, "lb")}));
    ASSERT_EQ(hi.status(), x4::NFS4ERR_DENIED);
    EXPECT_EQ(denied(hi).offset, 60u);
    EXPECT_EQ(denied(hi).length, 40u);
}

TEST_F(Nfs4Locks, CurrentStateidChainsOpenLockLocku) {
    // OPEN, LOCK with the current stateid, LOCKU with the current (lock) stateid.
    const x4::stateid4 current{1, {}};
    Reply r = seq({put_root(), op_open(s("oo"), s("f"), false, x4::OPEN4_SHARE_ACCESS_BOTH),
                   lock_new(x4::WRITE_LT, 0, 10, current, "chain"), locku(current, 0, 10)});
    ASSERT_EQ(r.status(), x4::NFS4_OK);
    x4::stateid4 ls = r.op(3).oplock().resok4().lock_stateid;
    EXPECT_EQ(r.op(4).oplocku().lock_stateid().other, ls.other);
    EXPECT_EQ(r.op(4).oplocku().lock_stateid().seqid, 2u);
}

TEST_F(Nfs4Locks, OpenModeAndLengths) {
    x4::stateid4 ro = open("f", x4::OPEN4_SHARE_ACCESS_READ);
    EXPECT_EQ(seq(at("f", {lock_new(x4::WRITE_LT, 0, 1, ro, "m")})).status(), x4::NFS4ERR_OPENMODE);
    EXPECT_EQ(seq(at("f", {lock_new(x4::WRITEW_LT, 0, 1, ro, "m")})).status(),
              x4::NFS4ERR_OPENMODE);
    Reply rd = seq(at("f", {lock_new(x4::READ_LT, 0, 1, ro, "m")}));
    ASSERT_EQ(rd.status(), x4::NFS4_OK);
    EXPECT_EQ(seq(at("f", {lock_old(x4::WRITE_LT, 0, 1, lock_sid(rd))})).status(),
              x4::NFS4ERR_OPENMODE);

    x4::stateid4 rw = open("g", x4::OPEN4_SHARE_ACCESS_BOTH, "other-open-owner");
    // length 0; offset + length past 2^64-1; all ones is "to EOF" from any offset.
    EXPECT_EQ(seq(at("g", {lock_new(x4::WRITE_LT, 5, 0, rw, "n")})).status(), x4::NFS4ERR_INVAL);
    EXPECT_EQ(seq(at("g", {lock_new(x4::WRITE_LT, kAll - 9, 11, rw, "n")})).status(),
              x4::NFS4ERR_INVAL);
    EXPECT_EQ(seq(at("g", {lockt(x4::WRITE_LT, 1, 0, "n")})).status(), x4::NFS4ERR_INVAL);
    EXPECT_EQ(seq(at("g", {lockt(x4::WRITE_LT, kAll, 2, "n")})).status(), x4::NFS4ERR_INVAL);
    // §18.10.3 to the letter: offset + length must not exceed 2^64-1.
    EXPECT_EQ(seq(at("g", {lock_new(x4::WRITE_LT, kAll - 9, 10, rw, "n")})).status(),
              x4::NFS4ERR_INVAL);
    Reply ok = seq(at("g", {lock_new(x4::WRITE_LT, kAll - 10, 10, rw, "n")}));
    ASSERT_EQ(ok.status(), x4::NFS4_OK);
    Reply eof = seq(at("g", {lock_old(x4::WRITE_LT, 1000, kAll, lock_sid(ok))}));
    ASSERT_EQ(eof.status(), x4::NFS4_OK);
    EXPECT_EQ(seq(at("g", {locku(lock_sid(eof), 3, 0)})).status(), x4::NFS4ERR_INVAL);
    EXPECT_EQ(seq(at("g", {locku(lock_sid(eof), 3, kAll - 1)})).status(), x4::NFS4ERR_INVAL);
}

TEST_F(Nfs4Locks, LocksHeldOnCloseAndFreeStateid) {
    x4::stateid4 oa = open("f");
    Reply l = seq(at("f", {lock_new(x4::WRITE_LT, 0, 10, oa, "h")}));
    ASSERT_EQ(l.status(), x4::NFS4_OK);
    x4::stateid4 ls = lock_sid(l);
    EXPECT_EQ(seq(at("f", {op_close(oa)})).status(), x4::NFS4ERR_LOCKS_HELD);
    EXPECT_EQ(seq({free_stateid(ls)}).status(), x4::NFS4ERR_LOCKS_HELD);

    Reply u = seq(at("f", {locku(ls, 0, 10)}));
    ASSERT_EQ(u.status(), x4::NFS4_OK);
    ls = u.op(3).oplocku().lock_stateid();
    EXPECT_EQ(seq({free_stateid(ls)}).status(), x4::NFS4_OK);
    // Gone: neither LOCK nor LOCKU takes it now.
    EXPECT_EQ(seq(at("f", {lock_old(x4::WRITE_LT, 0, 1, ls)})).status(), x4::NFS4ERR_BAD_STATEID);
    EXPECT_EQ(seq(at("f", {locku(ls, 0, 1)})).status(), x4::NFS4ERR_BAD_STATEID);

    // A lock stateid without locks goes with the CLOSE of its open.
    Reply l2 = seq(at("f", {lock_new(x4::READ_LT, 0, 1, oa, "h2")}));
    ASSERT_EQ(l2.status(), x4::NFS4_OK);
    Reply u2 = seq(at("f", {locku(lock_sid(l2), 0, 1)}));
    ASSERT_EQ(u2.status(), x4::NFS4_OK);
    EXPECT_EQ(seq(at("f", {op_close(oa)})).status(), x4::NFS4_OK);
    EXPECT_EQ(seq(at("f", {locku(u2.op(3).oplocku().lock_stateid(), 0, 1)})).status(),
              x4::NFS4ERR_BAD_STATEID);
}

TEST_F(Nfs4Locks, BadAndOldStateids) {
    x4::stateid4 of = open("f");
    x4::stateid4 og = open("g");
    // An open stateid of another file.
    EXPECT_EQ(seq(at("f", {lock_new(x4::WRITE_LT, 0, 1, og, "x")})).status(),
              x4::NFS4ERR_BAD_STATEID);
    Reply l = seq(at("f", {lock_new(x4::WRITE_LT, 0, 1, of, "x")}));
    ASSERT_EQ(l.status(), x4::NFS4_OK);
    x4::stateid4 ls1 = lock_sid(l);
    // A lock stateid is not an open stateid, and not for another file.
    EXPECT_EQ(seq(at("f", {lock_new(x4::WRITE_LT, 5, 1, ls1, "y")})).status(),
              x4::NFS4ERR_BAD_STATEID);
    EXPECT_EQ(seq(at("g", {lock_old(x4::WRITE_LT, 5, 1, ls1)})).status(), x4::NFS4ERR_BAD_STATEID);
    EXPECT_EQ(seq(at("g", {locku(ls1, 0, 1)})).status(), x4::NFS4ERR_BAD_STATEID);
    // An open stateid is not a lock stateid.
    EXPECT_EQ(seq(at("f", {lock_old(x4::WRITE_LT, 5, 1, of)})).status(), x4::NFS4ERR_BAD_STATEID);
    EXPECT_EQ(seq(at("f", {locku(of, 0, 1)})).status(), x4::NFS4ERR_BAD_STATEID);
    // A forged one.
    x4::stateid4 forged = ls1;
    forged.other[11] ^= 0x5a;
    EXPECT_EQ(seq(at("f", {lock_old(x4::WRITE_LT, 5, 1, forged)})).status(),
              x4::NFS4ERR_BAD_STATEID);
    // Old seqid after a bump; a future one.
    Reply l2 = seq(at("f", {lock_old(x4::WRITE_LT, 5, 1, ls1)}));
    ASSERT_EQ(l2.status(), x4::NFS4_OK);
    EXPECT_EQ(lock_sid(l2).seqid, 2u);
    EXPECT_EQ(seq(at("f", {locku(ls1, 0, 1)})).status(), x4::NFS4ERR_OLD_STATEID);
    x4::stateid4 future = lock_sid(l2);
    future.seqid = 7;
    EXPECT_EQ(seq(at("f", {locku(future, 0, 1)})).status(), x4::NFS4ERR_BAD_STATEID);
    // seqid 0: whatever is current.
    x4::stateid4 zero = ls1;
    zero.seqid = 0;
    EXPECT_EQ(seq(at("f", {locku(zero, 0, 1)})).status(), x4::NFS4_OK);
    // Special stateids.
    EXPECT_EQ(seq(at("f", {locku(x4::stateid4{0, {}}, 0, 1)})).status(), x4::NFS4ERR_BAD_STATEID);
    EXPECT_EQ(seq(at("f", {locku(x4::stateid4{1, {}}, 0, 1)})).status(), x4::NFS4ERR_BAD_STATEID);

    // Another client's lock stateid.
    use(b_);
    EXPECT_EQ(seq(at("f", {locku(lock_sid(l2), 0, 1)})).status(), x4::NFS4ERR_BAD_STATEID);
    // LOCKT's owner is this session's client whatever clientid it carries (§18.11.3: "MUST
    // be ignored by the server"): 0 as pynfs sends it, or another client's, answers as the
    // session's own.
    const x4::nfsstat4 own = seq(at("f", {lockt(x4::WRITE_LT, 0, 1, "x")})).status();
    EXPECT_EQ(seq(at("f", {lockt(x4::WRITE_LT, 0, 1, "x", 0)})).status(), own);
    EXPECT_EQ(seq(at("f", {lockt(x4::WRITE_LT, 0, 1, "x", a_.clientid)})).status(), own);
}

TEST_F(Nfs4Locks, NoFileHandleAndPseudoFs) {
    EXPECT_EQ(seq({lockt(x4::WRITE_LT, 0, 1, "x")}).status(), x4::NFS4ERR_NOFILEHANDLE);
    EXPECT_EQ(seq({op_putrootfh(), lockt(x4::WRITE_LT, 0, 1, "x")}).status(), x4::NFS4ERR_ISDIR);
}

TEST_F(Nfs4Locks, ExistingLockOwnerThroughOpenReusesItsStateid) {
    x4::stateid4 oa = open("f");
    Reply l1 = seq(at("f", {lock_new(x4::WRITE_LT, 0, 1, oa, "same")}));
    ASSERT_EQ(l1.status(), x4::NFS4_OK);
    Reply l2 = seq(at("f", {lock_new(x4::WRITE_LT, 5, 1, oa, "same")}));
    ASSERT_EQ(l2.status(), x4::NFS4_OK);
    EXPECT_EQ(lock_sid(l2).other, lock_sid(l1).other);
    EXPECT_EQ(lock_sid(l2).seqid, 2u);
}

// Options::lock_files set (the daemon's default, locks.local): granted locks are taken
// on the file as OFD locks, so a local process sees them, and a local process's lock
// denies a client's (LOCK4denied with no owner), as with the kernel nfsd.
class Nfs4LocksLocal : public Nfs4Locks {
  protected:
    Options options() const override {
        Options o;
        o.lock_files = budget_;
        return o;
    }
    // F_OFD_GETLK through a description of our own: the type in the way, F_UNLCK if none.
    short local_probe(const std::string& name, short type, off_t start, off_t len) {
        int fd = ::open(path(name).c_str(), O_RDWR | O_CLOEXEC);
        EXPECT_GE(fd, 0);
        struct flock fl {};
        fl.l_type = type;
        fl.l_whence = SEEK_SET;
        fl.l_start = start;
        fl.l_len = len;
        EXPECT_EQ(::fcntl(fd, F_OFD_GETLK, &fl), 0);
        ::close(fd);
        return fl.l_type;
    }
    std::shared_ptr<vfs::state::OfdBudget> budget_ =
        std::make_shared<vfs::state::OfdBudget>(8, 4);
};

TEST_F(Nfs4LocksLocal, ClientLocksAreSeenLocallyAndLocalLocksDenyClients) {
    x4::stateid4 oa = open("f");
    Reply la = seq(at("f", {lock_new(x4::WRITE_LT, 0, 100, oa, "lock-a")}));
    ASSERT_EQ(la.status(), x4::NFS4_OK);
    EXPECT_EQ(local_probe("f", F_WRLCK, 50, 1), F_WRLCK);
    EXPECT_EQ(local_probe("f", F_WRLCK, 100, 10), F_UNLCK);  // past the client's range
    EXPECT_EQ(budget_->in_use(), 1u);

    // A local process's lock on 200..299: the client's LOCK and LOCKT there are denied,
    // the holder is nobody the client knows (clientid 0, no owner bytes).
    int local = ::open(path("f").c_str(), O_RDWR | O_CLOEXEC);
    ASSERT_GE(local, 0);
    struct flock fl {};
    fl.l_type = F_WRLCK;
    fl.l_whence = SEEK_SET;
    fl.l_start = 200;
    fl.l_len = 100;
    ASSERT_EQ(::fcntl(local, F_OFD_SETLK, &fl), 0);
    Reply d = seq(at("f", {lock_old(x4::READ_LT, 250, 1, lock_sid(la))}));
    ASSERT_EQ(d.status(), x4::NFS4ERR_DENIED);
    EXPECT_EQ(denied(d).owner.clientid, 0u);
    EXPECT_TRUE(denied(d).owner.owner.empty());
    EXPECT_EQ(seq(at("f", {lockt(x4::WRITE_LT, 299, 1, "lock-a")})).status(), x4::NFS4ERR_DENIED);
    ::close(local);  // the local process goes: its lock with it
    Reply g = seq(at("f", {lock_old(x4::READ_LT, 250, 1, lock_sid(la))}));
    ASSERT_EQ(g.status(), x4::NFS4_OK);

    // LOCKU of everything: nothing left on the file, the description is closed.
    ASSERT_EQ(seq(at("f", {locku(lock_sid(g), 0, kAll)})).status(), x4::NFS4_OK);
    EXPECT_EQ(local_probe("f", F_WRLCK, 0, 0), F_UNLCK);
    EXPECT_EQ(budget_->in_use(), 0u);
}

TEST_F(Nfs4LocksLocal, ClientEndDropsItsLocalLocksAndBudgetBoundsThem) {
    x4::stateid4 oa = open("f");
    ASSERT_EQ(seq(at("f", {lock_new(x4::WRITE_LT, 0, 10, oa, "o1")})).status(), x4::NFS4_OK);
    ASSERT_EQ(seq(at("f", {lock_new(x4::WRITE_LT, 10, 10, oa, "o2")})).status(), x4::NFS4_OK);
    x4::stateid4 og = open("g");
    ASSERT_EQ(seq(at("g", {lock_new(x4::WRITE_LT, 0, 10, og, "o1")})).status(), x4::NFS4_OK);
    ASSERT_EQ(seq(at("g", {lock_new(x4::WRITE_LT, 10, 10, og, "o2")})).status(), x4::NFS4_OK);
    EXPECT_EQ(budget_->in_use(), 2u) << "one description per file, whatever its owners";
    for (const char* name : {"h", "i"}) {
        write_file(name, "z");
        x4::stateid4 o = open(name);
        ASSERT_EQ(seq(at(name, {lock_new(x4::WRITE_LT, 0, 1, o, "o1")})).status(), x4::NFS4_OK);
    }
    EXPECT_EQ(budget_->in_use(), 4u);
    // The client's fifth file is past its share (4): denied, nothing recorded.
    write_file("j", "z");
    x4::stateid4 oj = open("j");
    Reply over = seq(at("j", {lock_new(x4::WRITE_LT, 0, 1, oj, "o3")}));
    EXPECT_EQ(over.status(), x4::NFS4ERR_DENIED);
    EXPECT_EQ(local_probe("j", F_WRLCK, 0, 0), F_UNLCK);
    EXPECT_EQ(program_->services().lock_states.size(), 6u);
    EXPECT_EQ(budget_->in_use(), 4u);

    // The client goes (DESTROY_CLIENTID path: forget_client): every description closes.
    program_->services().forget_client(a_.clientid);
    EXPECT_EQ(budget_->in_use(), 0u);
    EXPECT_EQ(local_probe("f", F_WRLCK, 0, 0), F_UNLCK);
    EXPECT_EQ(local_probe("g", F_WRLCK, 0, 0), F_UNLCK);
}

// The table's indexes: one lock stateid per (owner, file) even when two first LOCKs race
// (insert() hands back the one that won), lookups by owner and by open, and nothing left
// in them once a stateid is erased or its client forgotten.
TEST(LockStateTableTest, OneStateidPerOwnerAndFileAndIndexesFollowErase) {
    namespace vs = vfs::state;
    auto owner = [](uint64_t client, const char* b) {
        std::string v(b);
        return *vs::StateOwner::make({vs::Protocol::Nfs4, client},
                                     {reinterpret_cast<const uint8_t*>(v.data()), v.size()});
    };
    auto other = [](uint8_t n) {
        LockStateTable::Other o{};
        o[11] = n;
        return o;
    };
    vs::FileKey f1, f2;
    f1.fsid = 1;
    f2.fsid = 2;
    LockStateTable t;
    LockState a{7, owner(7, "o"), f1, {}, other(100), {}};
    a.stateid.other = other(1);
    EXPECT_FALSE(t.insert(a));
    LockState racer = a;
    racer.stateid.other = other(2);
    auto won = t.insert(racer);
    ASSERT_TRUE(won);
    EXPECT_EQ(won->stateid.other, other(1));
    EXPECT_EQ(t.size(), 1u);

    LockState b{7, owner(7, "o"), f2, {}, other(100), {}};  // same owner, other file
    b.stateid.other = other(3);
    EXPECT_FALSE(t.insert(b));
    LockState c{8, owner(8, "o"), f1, {}, other(101), {}};  // other client, same bytes
    c.stateid.other = other(4);
    EXPECT_FALSE(t.insert(c));
    EXPECT_EQ(t.of_open(other(100)).size(), 2u);
    ASSERT_TRUE(t.find_owner(owner(8, "o"), f1));
    EXPECT_EQ(t.find_owner(owner(8, "o"), f1)->stateid.other, other(4));

    b.stateid.seqid = 5;
    EXPECT_TRUE(t.update(b));
    EXPECT_EQ(t.find(other(3))->stateid.seqid, 5u);
    t.erase(other(3));
    EXPECT_FALSE(t.update(b));  // gone: update does not bring it back
    EXPECT_FALSE(t.find_owner(owner(7, "o"), f2));
    EXPECT_EQ(t.of_open(other(100)).size(), 1u);

    EXPECT_EQ(t.forget_client(7).size(), 1u);
    EXPECT_FALSE(t.find_owner(owner(7, "o"), f1));
    EXPECT_TRUE(t.of_open(other(100)).empty());
    EXPECT_FALSE(t.insert(a));  // the pair is free again
    EXPECT_EQ(t.size(), 2u);
}

}  // namespace
}  // namespace nfsrdmad::nfs::v4::testing
