// The current stateid across the operations of one COMPOUND (RFC 8881 §16.2.3.1.2):
// OPEN and LOCK set it, operations that set the current filehandle and no stateid
// (LOOKUP, LOOKUPP, PUTFH, CREATE ...) clear it, SAVEFH / RESTOREFH carry it with the
// filehandle; and the lock stateid it often is works for READ and WRITE (§8.2.1).
#include <gtest/gtest.h>

#include <fstream>
#include <iterator>

#include "tests/unit/nfs4_ops_util.h"

namespace nfsrdmad::nfs::v4::testing {
namespace {

const x4::stateid4 kCurrent{1, {}};

class Nfs4CurrentStateid : public Nfs4OpsFixture {
  protected:
    void SetUp() override {
        Nfs4OpsFixture::SetUp();
        establish();
        root_fh_ = exp_->root_handle();
        std::ofstream(path("f")) << "0123456789";
    }
    x4::nfs_argop4 put_root() { return op_putfh(root_fh_.data()); }
    std::span<const uint8_t> s(const std::string& v) { return keep(v); }

    x4::nfs_argop4 lock_new(const x4::stateid4& open_sid, const std::string& owner) {
        return op_lock_new(x4::WRITE_LT, 0, kToEof, open_sid, clientid_, s(owner));
    }
    static x4::nfs_argop4 locku(const x4::stateid4& sid) { return op_locku(sid); }
    x4::nfs_argop4 open_f(const std::string& owner = "oo") {
        return op_open(s(owner), s("f"), false, x4::OPEN4_SHARE_ACCESS_BOTH);
    }
    std::string on_disk(const std::string& name) {
        std::ifstream in(path(name));
        return {std::istreambuf_iterator<char>(in), std::istreambuf_iterator<char>()};
    }

    vfs::FileHandle root_fh_;
};

TEST_F(Nfs4CurrentStateid, OpenThenCloseWithTheCurrentStateid) {
    Reply r = seq({put_root(), open_f(), op_getfh(), op_close(kCurrent)});
    EXPECT_EQ(r.status(), x4::NFS4_OK);
}

TEST_F(Nfs4CurrentStateid, LookupAfterOpenClearsIt) {
    // pynfs CSID5: OPEN, then back to the same file by PUTROOTFH and LOOKUPs: those set
    // the current filehandle and no stateid, so there is no current stateid at CLOSE.
    std::vector<x4::nfs_argop4> ops{put_root(), open_f(), op_getfh(), op_putrootfh()};
    std::string p = export_dir_.substr(1);
    for (size_t at = 0; at != std::string::npos;) {
        size_t next = p.find('/', at);
        ops.push_back(op_lookup(s(p.substr(at, next == std::string::npos ? next : next - at))));
        at = next == std::string::npos ? next : next + 1;
    }
    ops.push_back(op_lookup(s("f")));
    ops.push_back(op_close(kCurrent));
    const size_t n = ops.size() + 1;
    Reply r = seq(ops);
    EXPECT_EQ(r.status(), x4::NFS4ERR_BAD_STATEID);
    ASSERT_EQ(r.count(), n);
    // The open is still there: CLOSE with its own stateid.
    x4::stateid4 sid = r.op(2).opopen().resok4().stateid;
    Reply c = seq({put_root(), op_lookup(s("f")), op_close(sid)});
    EXPECT_EQ(c.status(), x4::NFS4_OK);
}

TEST_F(Nfs4CurrentStateid, PutrootfhClearsIt) {
    Reply r = seq({put_root(), open_f(), op_putrootfh(), op_close(kCurrent)});
    EXPECT_EQ(r.status(), x4::NFS4ERR_BAD_STATEID);
}

TEST_F(Nfs4CurrentStateid, SavefhRestorefhCarryIt) {
    // pynfs CSID10: OPEN, SAVEFH, PUTFH (clears), RESTOREFH (brings it back), CLOSE.
    Reply r = seq({put_root(), open_f(), op_getfh(), op_savefh(), put_root(), op_restorefh(),
                   op_close(kCurrent)});
    EXPECT_EQ(r.status(), x4::NFS4_OK);
}

TEST_F(Nfs4CurrentStateid, CloseWithoutOneIsBadStateid) {
    // pynfs CSID6: nothing in this COMPOUND set a stateid.
    Reply o = seq({put_root(), open_f()});
    ASSERT_EQ(o.status(), x4::NFS4_OK);
    Reply r = seq({put_root(), op_lookup(s("f")), op_close(kCurrent)});
    EXPECT_EQ(r.status(), x4::NFS4ERR_BAD_STATEID);
}

TEST_F(Nfs4CurrentStateid, OpenWriteCloseInOneCompound) {
    // pynfs CSID3.
    Reply r = seq({put_root(), open_f(), op_write(kCurrent, 2, s("ab")), op_close(kCurrent)});
    EXPECT_EQ(r.status(), x4::NFS4_OK);
    EXPECT_EQ(on_disk("f"), "01ab456789");
}

TEST_F(Nfs4CurrentStateid, LockWriteLockuThroughTheLockStateid) {
    // pynfs CSID4: LOCK sets the current stateid to the lock stateid; WRITE and READ go
    // through it (§8.2.1), LOCKU releases with it, CLOSE with the open stateid.
    Reply o = seq({put_root(), open_f()});
    ASSERT_EQ(o.status(), x4::NFS4_OK);
    x4::stateid4 open_sid = o.op(2).opopen().resok4().stateid;
    Reply r = seq({put_root(), op_lookup(s("f")), lock_new(open_sid, "lo"),
                   op_write(kCurrent, 5, s("XY")), op_read(kCurrent, 0, 100), locku(kCurrent),
                   op_close(open_sid)});
    ASSERT_EQ(r.status(), x4::NFS4_OK);
    const auto& rd = r.op(5).opread().resok4();
    EXPECT_EQ(std::string(rd.data.begin(), rd.data.end()), "01234XY789");
    EXPECT_EQ(on_disk("f"), "01234XY789");
}

TEST_F(Nfs4CurrentStateid, LockStateidForAnotherFileIsBad) {
    std::ofstream(path("g")) << "other";
    Reply o = seq({put_root(), open_f()});
    ASSERT_EQ(o.status(), x4::NFS4_OK);
    x4::stateid4 open_sid = o.op(2).opopen().resok4().stateid;
    Reply l = seq({put_root(), op_lookup(s("f")), lock_new(open_sid, "lo")});
    ASSERT_EQ(l.status(), x4::NFS4_OK);
    x4::stateid4 lock_sid = l.op(3).oplock().resok4().lock_stateid;
    Reply w = seq({put_root(), op_lookup(s("g")), op_write(lock_sid, 0, s("zz"))});
    EXPECT_EQ(w.status(), x4::NFS4ERR_BAD_STATEID);
    // A lock stateid through a read-only open cannot write (OPENMODE).
    Reply o2 = seq({put_root(), op_open(s("ro"), s("g"), false, x4::OPEN4_SHARE_ACCESS_READ)});
    ASSERT_EQ(o2.status(), x4::NFS4_OK);
    x4::stateid4 ro_sid = o2.op(2).opopen().resok4().stateid;
    x4::nfs_argop4 rl = lock_new(ro_sid, "lo2");
    rl.oplock().locktype = x4::READ_LT;
    Reply l2 = seq({put_root(), op_lookup(s("g")), rl});
    ASSERT_EQ(l2.status(), x4::NFS4_OK);
    x4::stateid4 ro_lock = l2.op(3).oplock().resok4().lock_stateid;
    Reply w2 = seq({put_root(), op_lookup(s("g")), op_write(ro_lock, 0, s("zz"))});
    EXPECT_EQ(w2.status(), x4::NFS4ERR_OPENMODE);
    Reply r2 = seq({put_root(), op_lookup(s("g")), op_read(ro_lock, 0, 10)});
    EXPECT_EQ(r2.status(), x4::NFS4_OK);
}

}  // namespace
}  // namespace nfsrdmad::nfs::v4::testing
