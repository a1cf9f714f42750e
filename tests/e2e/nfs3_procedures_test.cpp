// Every NFSv3 procedure of RFC 1813 against the real daemon, each effect checked both through
// the protocol and directly on the server's disk (the export directory is local).
#include <fcntl.h>
#include <sys/stat.h>
#include <sys/statvfs.h>
#include <unistd.h>

#include <algorithm>
#include <chrono>
#include <cstring>
#include <ctime>
#include <map>
#include <set>
#include <string>

#include <gtest/gtest.h>

#include "tests/e2e/daemon_fixture.h"
#include "tests/e2e/e2e_util.h"
#include "tests/e2e/raw_nfs.h"
#include "tests/e2e/rpc_wire.h"

namespace nfsrdmad::e2e {
namespace {

class Nfs3ProceduresTest : public DaemonTest {
  protected:
    // LOOKUP of a path below the export root; fatal failure unless NFS3_OK.
    void Fhandle(const std::string& path, Fh* out) {
        LookupRes r = LookupPath(rpc(), root_, path);
        ASSERT_TRUE(NfsIs(r, NFS3_OK)) << "LOOKUP " << path;
        ASSERT_FALSE(r.fh.empty()) << "LOOKUP " << path << " returned an empty handle";
        *out = r.fh;
    }
    void Attr(const Fh& fh, fattr3* out) {
        GetattrRes r = Getattr(rpc(), fh);
        ASSERT_TRUE(NfsIs(r, NFS3_OK)) << "GETATTR " << fh.hex();
        *out = r.attr;
    }
    void DiskStat(const std::string& rel, struct stat* st) {
        std::string why;
        ASSERT_TRUE(Lstat(disk(rel), st, &why)) << why;
    }
    void PutFile(const std::string& rel, const std::string& content, mode_t mode = 0644) {
        std::string why;
        ASSERT_TRUE(WriteFile(disk(rel), content, &why)) << why;
        ASSERT_EQ(::chmod(disk(rel).c_str(), mode), 0);
    }
    std::string DiskContent(const std::string& rel) {
        std::string s, why;
        EXPECT_TRUE(ReadFile(disk(rel), &s, &why)) << why;
        return s;
    }
    // Handle of a created object: the one in the reply, else a LOOKUP.
    void CreatedFh(const NewObjRes& r, const std::string& path, Fh* out) {
        if (r.has_fh) {
            ASSERT_FALSE(r.fh.empty());
            *out = r.fh;
            return;
        }
        Fhandle(path, out);
    }
};

// ---- NULL ---------------------------------------------------------------------------------------

TEST_F(Nfs3ProceduresTest, NullOnMountedSessionAndFreshConnection) {
    EXPECT_EQ(Null3(rpc()), "");
    std::string why;
    auto c = RpcConn::Connect(daemon_->nfs_port(), kNfsProgram, 3, &why);
    ASSERT_TRUE(c != nullptr) << why;
    EXPECT_EQ(Null3(c->get()), "");
    EXPECT_EQ(Null3(c->get()), "") << "second NULL on the same connection";
}

// ---- GETATTR ------------------------------------------------------------------------------------

// The duplicate request cache under a real retransmission: the same REMOVE record sent
// twice on one connection (same xid, same client port, what a client resends after a lost
// reply) is answered from the cache with the first reply, NFS3_OK, instead of running
// again and failing with NFS3ERR_NOENT. A new xid does run again, which proves the
// second answer came from the cache.
TEST_F(Nfs3ProceduresTest, RetransmittedRemoveIsAnsweredFromTheReplyCache) {
    ASSERT_TRUE(WriteFile(disk("victim"), "x"));
    std::string why;
    auto conn = wire::Conn::Open(daemon_->nfs_port(), &why);
    ASSERT_TRUE(conn) << why;
    auto remove = [&](uint32_t xid) {
        wire::XdrOut args;
        args.opaque(root_.data.data(), root_.data.size()).str("victim");
        EXPECT_TRUE(conn->SendRecord(
            wire::EncodeCall(wire::RootCall(xid, kNfsProgram, 3, 12, args.take())), &why))
            << why;
        wire::Bytes rec;
        EXPECT_EQ(conn->RecvRecord(&rec, 10000, &why), wire::Conn::Recv::kOk) << why;
        wire::Reply r = wire::ParseReply(rec);
        uint32_t status = 0xffffffff;
        if (r.parse_error.empty() && r.results.size() >= 4) wire::XdrIn(r.results).u32(&status);
        return std::pair{rec, status};
    };
    auto [first, st1] = remove(0x7001);
    EXPECT_EQ(st1, uint32_t(NFS3_OK));
    EXPECT_TRUE(Absent(disk("victim")));
    auto [again, st2] = remove(0x7001);
    EXPECT_EQ(st2, uint32_t(NFS3_OK)) << "a retransmitted REMOVE ran again";
    EXPECT_EQ(again, first) << "the retransmission gets the cached reply, byte for byte";
    auto [fresh, st3] = remove(0x7002);
    EXPECT_EQ(st3, uint32_t(NFS3ERR_NOENT)) << "a new call is not answered from the cache";
}

TEST_F(Nfs3ProceduresTest, GetattrRegularFileMatchesDisk) {
    NFSRDMAD_E2E_REQUIRE_ROOT();
    ASSERT_NO_FATAL_FAILURE(PutFile("ga.txt", Pattern(1234, 1), 0640));
    ASSERT_EQ(::chown(disk("ga.txt").c_str(), 1234, 5678), 0);
    timespec ts[2] = {{1111111111, 222222222}, {1222222222, 333333333}};
    ASSERT_EQ(::utimensat(AT_FDCWD, disk("ga.txt").c_str(), ts, 0), 0);

    Fh fh;
    ASSERT_NO_FATAL_FAILURE(Fhandle("ga.txt", &fh));
    fattr3 a;
    ASSERT_NO_FATAL_FAILURE(Attr(fh, &a));
    struct stat st;
    ASSERT_NO_FATAL_FAILURE(DiskStat("ga.txt", &st));

    EXPECT_EQ(a.type, NF3REG);
    EXPECT_EQ(a.mode & 07777, 0640u);
    EXPECT_EQ(a.nlink, 1u);
    EXPECT_EQ(a.uid, 1234u);
    EXPECT_EQ(a.gid, 5678u);
    EXPECT_EQ(a.size, 1234u);
    EXPECT_EQ(a.atime.seconds, 1111111111u);
    EXPECT_EQ(a.atime.nseconds, 222222222u);
    EXPECT_EQ(a.mtime.seconds, 1222222222u);
    EXPECT_EQ(a.mtime.nseconds, 333333333u);
    EXPECT_TRUE(AttrMatchesDisk(a, st, true));
    EXPECT_EQ(a.fileid, static_cast<uint64_t>(st.st_ino)) << "fileid should be the inode number";

    fattr3 r;
    ASSERT_NO_FATAL_FAILURE(Attr(root_, &r));
    EXPECT_EQ(r.fsid, a.fsid) << "objects of one export must share the fsid";
}

TEST_F(Nfs3ProceduresTest, GetattrRootAndDirectoryNlink) {
    fattr3 root;
    ASSERT_NO_FATAL_FAILURE(Attr(root_, &root));
    struct stat rst;
    ASSERT_NO_FATAL_FAILURE(DiskStat("", &rst));
    EXPECT_EQ(root.type, NF3DIR);
    EXPECT_EQ(root.mode & 07777, 0755u);
    EXPECT_EQ(root.fileid, static_cast<uint64_t>(rst.st_ino));
    EXPECT_EQ(root.nlink, static_cast<uint32_t>(rst.st_nlink));
    EXPECT_TRUE(AttrMatchesDisk(root, rst, false));

    ASSERT_EQ(::mkdir(disk("d1").c_str(), 0755), 0);
    ASSERT_EQ(::mkdir(disk("d1/s1").c_str(), 0755), 0);
    ASSERT_EQ(::mkdir(disk("d1/s2").c_str(), 0755), 0);
    Fh d1;
    ASSERT_NO_FATAL_FAILURE(Fhandle("d1", &d1));
    fattr3 a;
    ASSERT_NO_FATAL_FAILURE(Attr(d1, &a));
    EXPECT_EQ(a.type, NF3DIR);
    EXPECT_EQ(a.nlink, 4u) << "d1 has two subdirectories: nlink = 2 + 2";
}

// ---- SETATTR ------------------------------------------------------------------------------------

TEST_F(Nfs3ProceduresTest, SetattrMode) {
    ASSERT_NO_FATAL_FAILURE(PutFile("m.txt", "mode", 0644));
    Fh fh;
    ASSERT_NO_FATAL_FAILURE(Fhandle("m.txt", &fh));

    StatusRes r = Setattr(rpc(), fh, SetAttrs::Mode(0600));
    ASSERT_TRUE(NfsIs(r, NFS3_OK));
    if (r.has_attr) {
        EXPECT_EQ(r.attr.mode & 07777, 0600u) << "wcc after-attributes";
    }
    struct stat st;
    ASSERT_NO_FATAL_FAILURE(DiskStat("m.txt", &st));
    EXPECT_EQ(st.st_mode & 07777, 0600u);

    r = Setattr(rpc(), fh, SetAttrs::Mode(02751));
    ASSERT_TRUE(NfsIs(r, NFS3_OK));
    ASSERT_NO_FATAL_FAILURE(DiskStat("m.txt", &st));
    EXPECT_EQ(st.st_mode & 07777, 02751u);
    fattr3 a;
    ASSERT_NO_FATAL_FAILURE(Attr(fh, &a));
    EXPECT_EQ(a.mode & 07777, 02751u);
}

TEST_F(Nfs3ProceduresTest, SetattrOwnerUidGid) {
    NFSRDMAD_E2E_REQUIRE_ROOT();
    ASSERT_NO_FATAL_FAILURE(PutFile("own.txt", "owner"));
    Fh fh;
    ASSERT_NO_FATAL_FAILURE(Fhandle("own.txt", &fh));

    SetAttrs s;
    s.uid = 4242;
    s.gid = 4343;
    ASSERT_TRUE(NfsIs(Setattr(rpc(), fh, s), NFS3_OK));
    struct stat st;
    ASSERT_NO_FATAL_FAILURE(DiskStat("own.txt", &st));
    EXPECT_EQ(st.st_uid, 4242u);
    EXPECT_EQ(st.st_gid, 4343u);

    SetAttrs g;
    g.gid = 1000;
    ASSERT_TRUE(NfsIs(Setattr(rpc(), fh, g), NFS3_OK));
    ASSERT_NO_FATAL_FAILURE(DiskStat("own.txt", &st));
    EXPECT_EQ(st.st_uid, 4242u) << "uid must not change when only gid is set";
    EXPECT_EQ(st.st_gid, 1000u);
    fattr3 a;
    ASSERT_NO_FATAL_FAILURE(Attr(fh, &a));
    EXPECT_EQ(a.uid, 4242u);
    EXPECT_EQ(a.gid, 1000u);
}

TEST_F(Nfs3ProceduresTest, SetattrSizeTruncateAndExtend) {
    const std::string orig = Pattern(10000, 7);
    ASSERT_NO_FATAL_FAILURE(PutFile("sz.bin", orig));
    Fh fh;
    ASSERT_NO_FATAL_FAILURE(Fhandle("sz.bin", &fh));

    SetAttrs t;
    t.size = 100;
    StatusRes r = Setattr(rpc(), fh, t);
    ASSERT_TRUE(NfsIs(r, NFS3_OK));
    if (r.has_attr) {
        EXPECT_EQ(r.attr.size, 100u);
    }
    EXPECT_EQ(DiskContent("sz.bin"), orig.substr(0, 100));
    ReadRes rd = Read(rpc(), fh, 0, 4096);
    ASSERT_TRUE(NfsIs(rd, NFS3_OK));
    EXPECT_EQ(rd.count, 100u);
    EXPECT_TRUE(rd.eof);
    EXPECT_EQ(rd.data, orig.substr(0, 100));

    SetAttrs e;
    e.size = 50000;
    ASSERT_TRUE(NfsIs(Setattr(rpc(), fh, e), NFS3_OK));
    std::string now = DiskContent("sz.bin");
    ASSERT_EQ(now.size(), 50000u);
    EXPECT_EQ(now.substr(0, 100), orig.substr(0, 100));
    EXPECT_EQ(now.substr(100), std::string(49900, '\0')) << "extension must read as zeros";
    fattr3 a;
    ASSERT_NO_FATAL_FAILURE(Attr(fh, &a));
    EXPECT_EQ(a.size, 50000u);

    SetAttrs z;
    z.size = 0;
    ASSERT_TRUE(NfsIs(Setattr(rpc(), fh, z), NFS3_OK));
    EXPECT_EQ(DiskContent("sz.bin"), "");
}

TEST_F(Nfs3ProceduresTest, SetattrAtimeMtimeClientAndServerTime) {
    ASSERT_NO_FATAL_FAILURE(PutFile("t.txt", "times"));
    Fh fh;
    ASSERT_NO_FATAL_FAILURE(Fhandle("t.txt", &fh));

    SetAttrs s;
    s.atime_how = SetAttrs::Time::Client;
    s.atime = {1000000000, 123456789};
    s.mtime_how = SetAttrs::Time::Client;
    s.mtime = {1200000000, 987654321};
    ASSERT_TRUE(NfsIs(Setattr(rpc(), fh, s), NFS3_OK));
    struct stat st;
    ASSERT_NO_FATAL_FAILURE(DiskStat("t.txt", &st));
    EXPECT_EQ(st.st_atim.tv_sec, 1000000000);
    EXPECT_EQ(st.st_atim.tv_nsec, 123456789);
    EXPECT_EQ(st.st_mtim.tv_sec, 1200000000);
    EXPECT_EQ(st.st_mtim.tv_nsec, 987654321);
    fattr3 a;
    ASSERT_NO_FATAL_FAILURE(Attr(fh, &a));
    EXPECT_EQ(a.atime.seconds, 1000000000u);
    EXPECT_EQ(a.atime.nseconds, 123456789u);
    EXPECT_EQ(a.mtime.seconds, 1200000000u);
    EXPECT_EQ(a.mtime.nseconds, 987654321u);

    const time_t before = ::time(nullptr);
    SetAttrs srv;
    srv.atime_how = SetAttrs::Time::Server;
    srv.mtime_how = SetAttrs::Time::Server;
    ASSERT_TRUE(NfsIs(Setattr(rpc(), fh, srv), NFS3_OK));
    const time_t after = ::time(nullptr);
    ASSERT_NO_FATAL_FAILURE(DiskStat("t.txt", &st));
    EXPECT_GE(st.st_mtim.tv_sec, before - 1);
    EXPECT_LE(st.st_mtim.tv_sec, after + 1);
    EXPECT_GE(st.st_atim.tv_sec, before - 1);
    EXPECT_LE(st.st_atim.tv_sec, after + 1);
}

TEST_F(Nfs3ProceduresTest, SetattrGuardMismatchIsNotSync) {
    ASSERT_NO_FATAL_FAILURE(PutFile("g.txt", "guard", 0644));
    Fh fh;
    ASSERT_NO_FATAL_FAILURE(Fhandle("g.txt", &fh));
    fattr3 a;
    ASSERT_NO_FATAL_FAILURE(Attr(fh, &a));

    nfstime3 wrong = a.ctime;
    wrong.seconds -= 100;
    EXPECT_TRUE(NfsIs(Setattr(rpc(), fh, SetAttrs::Mode(0600), wrong), NFS3ERR_NOT_SYNC));
    struct stat st;
    ASSERT_NO_FATAL_FAILURE(DiskStat("g.txt", &st));
    EXPECT_EQ(st.st_mode & 07777, 0644u) << "a failed guard must not change anything";

    EXPECT_TRUE(NfsIs(Setattr(rpc(), fh, SetAttrs::Mode(0600), a.ctime), NFS3_OK));
    ASSERT_NO_FATAL_FAILURE(DiskStat("g.txt", &st));
    EXPECT_EQ(st.st_mode & 07777, 0600u);
}

// ---- LOOKUP -------------------------------------------------------------------------------------

TEST_F(Nfs3ProceduresTest, LookupExistingMissingDotsAndNotDir) {
    ASSERT_EQ(::mkdir(disk("ld").c_str(), 0755), 0);
    ASSERT_NO_FATAL_FAILURE(PutFile("ld/f.txt", "lookup"));

    LookupRes d = Lookup(rpc(), root_, "ld");
    ASSERT_TRUE(NfsIs(d, NFS3_OK));
    struct stat dst;
    ASSERT_NO_FATAL_FAILURE(DiskStat("ld", &dst));
    if (d.has_obj_attr) {
        EXPECT_EQ(d.obj_attr.type, NF3DIR);
        EXPECT_EQ(d.obj_attr.fileid, static_cast<uint64_t>(dst.st_ino));
    }

    LookupRes f = Lookup(rpc(), d.fh, "f.txt");
    ASSERT_TRUE(NfsIs(f, NFS3_OK));
    fattr3 fa;
    ASSERT_NO_FATAL_FAILURE(Attr(f.fh, &fa));
    struct stat fst;
    ASSERT_NO_FATAL_FAILURE(DiskStat("ld/f.txt", &fst));
    EXPECT_EQ(fa.fileid, static_cast<uint64_t>(fst.st_ino));
    EXPECT_EQ(fa.size, 6u);
    if (f.has_obj_attr) {
        EXPECT_EQ(f.obj_attr.fileid, fa.fileid);
    }

    EXPECT_TRUE(NfsIs(Lookup(rpc(), d.fh, "missing"), NFS3ERR_NOENT));
    EXPECT_TRUE(NfsIs(Lookup(rpc(), f.fh, "x"), NFS3ERR_NOTDIR));

    LookupRes dot = Lookup(rpc(), d.fh, ".");
    ASSERT_TRUE(NfsIs(dot, NFS3_OK));
    fattr3 dota;
    ASSERT_NO_FATAL_FAILURE(Attr(dot.fh, &dota));
    EXPECT_EQ(dota.fileid, static_cast<uint64_t>(dst.st_ino)) << "LOOKUP . is the directory itself";

    LookupRes up = Lookup(rpc(), d.fh, "..");
    ASSERT_TRUE(NfsIs(up, NFS3_OK));
    fattr3 upa, roota;
    ASSERT_NO_FATAL_FAILURE(Attr(up.fh, &upa));
    ASSERT_NO_FATAL_FAILURE(Attr(root_, &roota));
    EXPECT_EQ(upa.fileid, roota.fileid) << "LOOKUP .. of ld is the export root";
}

// ---- ACCESS -------------------------------------------------------------------------------------

TEST_F(Nfs3ProceduresTest, AccessForOwnerAndForAnotherUser) {
    ASSERT_NO_FATAL_FAILURE(PutFile("a644", "x", 0644));
    ASSERT_NO_FATAL_FAILURE(PutFile("a600", "x", 0600));
    ASSERT_NO_FATAL_FAILURE(PutFile("a755", "x", 0755));
    ASSERT_EQ(::mkdir(disk("adir").c_str(), 0755), 0);
    ASSERT_EQ(::chmod(disk("adir").c_str(), 0755), 0);
    Fh f644, f600, f755, dir;
    ASSERT_NO_FATAL_FAILURE(Fhandle("a644", &f644));
    ASSERT_NO_FATAL_FAILURE(Fhandle("a600", &f600));
    ASSERT_NO_FATAL_FAILURE(Fhandle("a755", &f755));
    ASSERT_NO_FATAL_FAILURE(Fhandle("adir", &dir));

    const uint32_t file_bits = ACCESS3_READ | ACCESS3_MODIFY | ACCESS3_EXTEND | ACCESS3_EXECUTE;
    // The owner (the test's own uid; files were created by it).
    AccessRes r = Access(rpc(), f644, file_bits);
    ASSERT_TRUE(NfsIs(r, NFS3_OK));
    EXPECT_EQ(r.access & ~file_bits, 0u) << "server granted bits that were not asked for";
    EXPECT_EQ(r.access & (ACCESS3_READ | ACCESS3_MODIFY | ACCESS3_EXTEND),
              uint32_t{ACCESS3_READ | ACCESS3_MODIFY | ACCESS3_EXTEND});
    EXPECT_EQ(r.access & ACCESS3_EXECUTE, 0u) << "0644 file is not executable, even for root";
    r = Access(rpc(), f755, ACCESS3_EXECUTE);
    ASSERT_TRUE(NfsIs(r, NFS3_OK));
    EXPECT_EQ(r.access, uint32_t{ACCESS3_EXECUTE});

    // Another user: uid/gid 12345, not the owner, not in the group.
    std::string why;
    auto other = RpcConn::Connect(daemon_->nfs_port(), kNfsProgram, 3, &why, 12345, 12345);
    ASSERT_TRUE(other != nullptr) << why;
    r = Access(other->get(), f644, ACCESS3_READ | ACCESS3_MODIFY | ACCESS3_EXTEND);
    ASSERT_TRUE(NfsIs(r, NFS3_OK));
    EXPECT_EQ(r.access, uint32_t{ACCESS3_READ}) << "other may read a 0644 file, not write it";
    r = Access(other->get(), f600, ACCESS3_READ | ACCESS3_MODIFY);
    ASSERT_TRUE(NfsIs(r, NFS3_OK));
    EXPECT_EQ(r.access, 0u) << "other has no access to a 0600 file";
    const uint32_t dir_bits = ACCESS3_LOOKUP | ACCESS3_MODIFY | ACCESS3_EXTEND | ACCESS3_DELETE;
    r = Access(other->get(), dir, dir_bits);
    ASSERT_TRUE(NfsIs(r, NFS3_OK));
    EXPECT_EQ(r.access, uint32_t{ACCESS3_LOOKUP}) << "other may search a 0755 dir, not modify it";
}

// ---- READLINK -----------------------------------------------------------------------------------

TEST_F(Nfs3ProceduresTest, ReadlinkReturnsExactTarget) {
    const std::string target = "some/where/../target name with spaces";
    ASSERT_EQ(::symlink(target.c_str(), disk("rl").c_str()), 0);
    LookupRes l = Lookup(rpc(), root_, "rl");
    ASSERT_TRUE(NfsIs(l, NFS3_OK));
    fattr3 a;
    ASSERT_NO_FATAL_FAILURE(Attr(l.fh, &a));
    EXPECT_EQ(a.type, NF3LNK);
    EXPECT_EQ(a.size, target.size());

    ReadlinkRes r = Readlink(rpc(), l.fh);
    ASSERT_TRUE(NfsIs(r, NFS3_OK));
    EXPECT_EQ(r.target, target);

    char* buf = nullptr;
    ASSERT_EQ(nfs_readlink2(client_->nfs(), "/rl", &buf), 0) << client_->error();
    EXPECT_EQ(std::string(buf), target);
    std::free(buf);

    ASSERT_NO_FATAL_FAILURE(PutFile("plain", "p"));
    Fh plain;
    ASSERT_NO_FATAL_FAILURE(Fhandle("plain", &plain));
    EXPECT_TRUE(NfsIs(Readlink(rpc(), plain), NFS3ERR_INVAL)) << "READLINK of a regular file";
}

// ---- READ ---------------------------------------------------------------------------------------

TEST_F(Nfs3ProceduresTest, ReadRangesShortReadsAndEof) {
    const std::string content = Pattern(100000, 3);
    ASSERT_NO_FATAL_FAILURE(PutFile("r.bin", content));
    Fh fh;
    ASSERT_NO_FATAL_FAILURE(Fhandle("r.bin", &fh));

    ReadRes r = Read(rpc(), fh, 1000, 5000);
    ASSERT_TRUE(NfsIs(r, NFS3_OK));
    EXPECT_EQ(r.count, 5000u);
    EXPECT_EQ(r.data.size(), 5000u);
    EXPECT_FALSE(r.eof);
    EXPECT_EQ(r.data, content.substr(1000, 5000));
    if (r.has_attr) {
        EXPECT_EQ(r.attr.size, 100000u);
    }

    r = Read(rpc(), fh, 99000, 5000);
    ASSERT_TRUE(NfsIs(r, NFS3_OK));
    EXPECT_EQ(r.count, 1000u);
    EXPECT_TRUE(r.eof) << "the read reached the end of the file";
    EXPECT_EQ(r.data, content.substr(99000));

    r = Read(rpc(), fh, 100000, 10);
    ASSERT_TRUE(NfsIs(r, NFS3_OK));
    EXPECT_EQ(r.count, 0u);
    EXPECT_TRUE(r.eof);

    r = Read(rpc(), fh, 5000000, 10);
    ASSERT_TRUE(NfsIs(r, NFS3_OK));
    EXPECT_EQ(r.count, 0u);
    EXPECT_TRUE(r.eof);

    // Past the largest offset a file may have (2^63 - 1 and beyond): nothing, at EOF, and
    // the post-op attributes are still the file's (RFC 1813 §3.3.6), not zeros.
    struct stat st;
    ASSERT_NO_FATAL_FAILURE(DiskStat("r.bin", &st));
    for (uint64_t far : {uint64_t{INT64_MAX}, UINT64_MAX - 5}) {
        SCOPED_TRACE(far);
        r = Read(rpc(), fh, far, 10);
        ASSERT_TRUE(NfsIs(r, NFS3_OK));
        EXPECT_EQ(r.count, 0u);
        EXPECT_TRUE(r.eof);
        ASSERT_TRUE(r.has_attr);
        EXPECT_EQ(r.attr.fileid, static_cast<uint64_t>(st.st_ino));
        EXPECT_EQ(r.attr.size, 100000u);
        EXPECT_EQ(r.attr.type, NF3REG);
    }

    EXPECT_TRUE(NfsFailed(Read(rpc(), root_, 0, 100))) << "READ of a directory must fail";
}

TEST_F(Nfs3ProceduresTest, ReadOneMebibyteInOneCall) {
    const std::string content = Pattern(2 << 20, 4);
    ASSERT_NO_FATAL_FAILURE(PutFile("big.bin", content));
    Fh fh;
    ASSERT_NO_FATAL_FAILURE(Fhandle("big.bin", &fh));
    ReadRes r = Read(rpc(), fh, 12345, 1 << 20);
    ASSERT_TRUE(NfsIs(r, NFS3_OK));
    EXPECT_EQ(r.count, 1u << 20) << "rtmax is 1 MiB: a 1 MiB READ inside the file should be full";
    ASSERT_GT(r.count, 0u);
    EXPECT_EQ(r.data, content.substr(12345, r.count));
    EXPECT_FALSE(r.eof);
}

// ---- WRITE / COMMIT -----------------------------------------------------------------------------

TEST_F(Nfs3ProceduresTest, WriteStableHowCommittedAndVerifier) {
    ASSERT_NO_FATAL_FAILURE(PutFile("w.bin", ""));
    Fh fh;
    ASSERT_NO_FATAL_FAILURE(Fhandle("w.bin", &fh));
    const std::string a = Pattern(4096, 10), b = Pattern(4096, 11), c = Pattern(4096, 12);

    WriteRes u = Write(rpc(), fh, 0, a, UNSTABLE);
    ASSERT_TRUE(NfsIs(u, NFS3_OK));
    EXPECT_EQ(u.count, 4096u);
    EXPECT_GE(u.committed, UNSTABLE);
    EXPECT_LE(u.committed, FILE_SYNC);

    WriteRes d = Write(rpc(), fh, 4096, b, DATA_SYNC);
    ASSERT_TRUE(NfsIs(d, NFS3_OK));
    EXPECT_EQ(d.count, 4096u);
    EXPECT_GE(d.committed, DATA_SYNC) << "committed must be at least what was asked";
    EXPECT_LE(d.committed, FILE_SYNC);

    WriteRes f = Write(rpc(), fh, 8192, c, FILE_SYNC);
    ASSERT_TRUE(NfsIs(f, NFS3_OK));
    EXPECT_EQ(f.count, 4096u);
    EXPECT_EQ(f.committed, FILE_SYNC);
    if (f.has_after) {
        EXPECT_EQ(f.after.size, 12288u);
    }

    EXPECT_EQ(HexVerf(u.verf), HexVerf(d.verf)) << "one daemon run has one write verifier";
    EXPECT_EQ(HexVerf(u.verf), HexVerf(f.verf));

    CommitRes cm = Commit(rpc(), fh, 0, 0);
    ASSERT_TRUE(NfsIs(cm, NFS3_OK));
    EXPECT_EQ(HexVerf(cm.verf), HexVerf(u.verf)) << "COMMIT verifier must equal WRITE verifier";

    EXPECT_EQ(DiskContent("w.bin"), a + b + c);
}

TEST_F(Nfs3ProceduresTest, CommitVerifierEqualsWriteVerifierAndDataIsOnDisk) {
    ASSERT_NO_FATAL_FAILURE(PutFile("c.bin", ""));
    Fh fh;
    ASSERT_NO_FATAL_FAILURE(Fhandle("c.bin", &fh));
    const std::string data = Pattern(65536, 20);
    WriteRes w = Write(rpc(), fh, 0, data, UNSTABLE);
    ASSERT_TRUE(NfsIs(w, NFS3_OK));
    ASSERT_EQ(w.count, 65536u);

    CommitRes c1 = Commit(rpc(), fh, 0, 4096);
    ASSERT_TRUE(NfsIs(c1, NFS3_OK));
    EXPECT_EQ(HexVerf(c1.verf), HexVerf(w.verf));
    CommitRes c2 = Commit(rpc(), fh, 0, 0);
    ASSERT_TRUE(NfsIs(c2, NFS3_OK));
    EXPECT_EQ(HexVerf(c2.verf), HexVerf(w.verf));
    EXPECT_EQ(DiskContent("c.bin"), data);
}

TEST_F(Nfs3ProceduresTest, WriteVerifierChangesAcrossDaemonRestart) {
    ASSERT_NO_FATAL_FAILURE(PutFile("v.bin", ""));
    Fh fh;
    ASSERT_NO_FATAL_FAILURE(Fhandle("v.bin", &fh));
    WriteRes w1 = Write(rpc(), fh, 0, "first run", UNSTABLE);
    ASSERT_TRUE(NfsIs(w1, NFS3_OK));
    WriteRes w1b = Write(rpc(), fh, 9, "!", UNSTABLE);
    ASSERT_TRUE(NfsIs(w1b, NFS3_OK));
    EXPECT_EQ(HexVerf(w1.verf), HexVerf(w1b.verf));
    CommitRes c1 = Commit(rpc(), fh, 0, 0);
    ASSERT_TRUE(NfsIs(c1, NFS3_OK));
    EXPECT_EQ(HexVerf(c1.verf), HexVerf(w1.verf));

    ASSERT_NO_FATAL_FAILURE(RestartDaemon());

    Fh fh2;
    ASSERT_NO_FATAL_FAILURE(Fhandle("v.bin", &fh2));
    WriteRes w2 = Write(rpc(), fh2, 10, " second run", UNSTABLE);
    ASSERT_TRUE(NfsIs(w2, NFS3_OK));
    EXPECT_NE(HexVerf(w2.verf), HexVerf(w1.verf))
        << "the write verifier must change when the daemon restarts, so clients resend "
           "uncommitted data";
    CommitRes c2 = Commit(rpc(), fh2, 0, 0);
    ASSERT_TRUE(NfsIs(c2, NFS3_OK));
    EXPECT_EQ(HexVerf(c2.verf), HexVerf(w2.verf));
    EXPECT_EQ(DiskContent("v.bin"), "first run! second run");
}

TEST_F(Nfs3ProceduresTest, FileHandlesSurviveDaemonRestart) {
    ASSERT_EQ(::mkdir(disk("keep").c_str(), 0755), 0);
    ASSERT_NO_FATAL_FAILURE(PutFile("keep/f.txt", "persistent"));
    Fh dir, file;
    ASSERT_NO_FATAL_FAILURE(Fhandle("keep", &dir));
    ASSERT_NO_FATAL_FAILURE(Fhandle("keep/f.txt", &file));
    fattr3 before;
    ASSERT_NO_FATAL_FAILURE(Attr(file, &before));
    const Fh old_root = root_;

    ASSERT_NO_FATAL_FAILURE(RestartDaemon());

    EXPECT_EQ(root_.hex(), old_root.hex()) << "MNT must return the same root handle after restart";
    GetattrRes g = Getattr(rpc(), file);
    ASSERT_TRUE(NfsIs(g, NFS3_OK)) << "a handle issued before the restart must still work";
    EXPECT_EQ(g.attr.fileid, before.fileid);
    ReadRes r = Read(rpc(), file, 0, 100);
    ASSERT_TRUE(NfsIs(r, NFS3_OK));
    EXPECT_EQ(r.data, "persistent");
    LookupRes l = Lookup(rpc(), dir, "f.txt");
    ASSERT_TRUE(NfsIs(l, NFS3_OK));
    EXPECT_TRUE(NfsIs(Getattr(rpc(), old_root), NFS3_OK));
}

TEST_F(Nfs3ProceduresTest, WriteBeyondEofLeavesZeroHoleAndWriteToDirectoryFails) {
    ASSERT_NO_FATAL_FAILURE(PutFile("hole.bin", ""));
    Fh fh;
    ASSERT_NO_FATAL_FAILURE(Fhandle("hole.bin", &fh));
    WriteRes w = Write(rpc(), fh, 1 << 20, "tail", FILE_SYNC);
    ASSERT_TRUE(NfsIs(w, NFS3_OK));
    EXPECT_EQ(w.count, 4u);
    std::string got = DiskContent("hole.bin");
    ASSERT_EQ(got.size(), (1u << 20) + 4);
    EXPECT_EQ(got.substr(0, 1 << 20), std::string(1 << 20, '\0'));
    EXPECT_EQ(got.substr(1 << 20), "tail");

    EXPECT_TRUE(NfsFailed(Write(rpc(), root_, 0, "x", FILE_SYNC))) << "WRITE to a directory";
}

// ---- CREATE -------------------------------------------------------------------------------------

TEST_F(Nfs3ProceduresTest, CreateUnchecked) {
    SetAttrs m = SetAttrs::Mode(0640);
    NewObjRes r = Create(rpc(), root_, "cu", UNCHECKED, m);
    ASSERT_TRUE(NfsIs(r, NFS3_OK));
    struct stat st;
    ASSERT_NO_FATAL_FAILURE(DiskStat("cu", &st));
    EXPECT_TRUE(S_ISREG(st.st_mode));
    EXPECT_EQ(st.st_mode & 07777, 0640u);
    EXPECT_EQ(st.st_size, 0);
    EXPECT_EQ(st.st_uid, ::getuid()) << "no_root_squash: owner is the caller";
    Fh fh;
    ASSERT_NO_FATAL_FAILURE(CreatedFh(r, "cu", &fh));
    fattr3 a;
    ASSERT_NO_FATAL_FAILURE(Attr(fh, &a));
    EXPECT_EQ(a.fileid, static_cast<uint64_t>(st.st_ino));
    if (r.has_attr) {
        EXPECT_EQ(r.attr.type, NF3REG);
    }

    // UNCHECKED on an existing file succeeds and does not replace it.
    ASSERT_NO_FATAL_FAILURE(PutFile("cu", "keep me", 0640));
    NewObjRes again = Create(rpc(), root_, "cu", UNCHECKED, SetAttrs::Mode(0640));
    ASSERT_TRUE(NfsIs(again, NFS3_OK));
    struct stat st2;
    ASSERT_NO_FATAL_FAILURE(DiskStat("cu", &st2));
    EXPECT_EQ(st2.st_ino, st.st_ino);
    EXPECT_EQ(DiskContent("cu"), "keep me") << "UNCHECKED without a size must not truncate";

    // With a size (an O_TRUNC open): the size alone applies to the file that is there; its
    // owner and times stay (the Linux server keeps ATTR_SIZE alone).
    SetAttrs trunc = SetAttrs::Mode(0600);
    trunc.size = 0;
    trunc.uid = 4321;
    trunc.mtime_how = SetAttrs::Time::Client;
    trunc.mtime = {12345, 0};
    ASSERT_TRUE(NfsIs(Create(rpc(), root_, "cu", UNCHECKED, trunc), NFS3_OK));
    struct stat st3;
    ASSERT_NO_FATAL_FAILURE(DiskStat("cu", &st3));
    EXPECT_EQ(st3.st_ino, st.st_ino);
    EXPECT_EQ(st3.st_size, 0);
    EXPECT_EQ(st3.st_uid, st2.st_uid) << "UNCHECKED over a file changed its owner";
    EXPECT_NE(st3.st_mtime, 12345) << "UNCHECKED over a file set its mtime";
    EXPECT_EQ(st3.st_mode & 07777, 0640u) << "the mode of a file that is there stays";

    // A caller who may not truncate the file that is there gets the error (RFC 1813 §3.3.8:
    // NFS3ERR_ACCES), not NFS3_OK over an untouched file.
    ASSERT_EQ(::mkdir(disk("shared").c_str(), 0777), 0);
    ASSERT_EQ(::chmod(disk("shared").c_str(), 0777), 0);
    ASSERT_NO_FATAL_FAILURE(PutFile("shared/theirs", "not yours", 0644));
    Fh shared;
    ASSERT_NO_FATAL_FAILURE(Fhandle("shared", &shared));
    std::string why;
    auto other = RpcConn::Connect(daemon_->nfs_port(), kNfsProgram, 3, &why, 12345, 12345);
    ASSERT_TRUE(other != nullptr) << why;
    SetAttrs zero;
    zero.size = 0;
    EXPECT_TRUE(NfsIs(Create(other->get(), shared, "theirs", UNCHECKED, zero), NFS3ERR_ACCES));
    EXPECT_EQ(DiskContent("shared/theirs"), "not yours");
}

TEST_F(Nfs3ProceduresTest, CreateGuarded) {
    ASSERT_NO_FATAL_FAILURE(PutFile("cg", "existing"));
    EXPECT_TRUE(NfsIs(Create(rpc(), root_, "cg", GUARDED, SetAttrs::Mode(0644)), NFS3ERR_EXIST));
    EXPECT_EQ(DiskContent("cg"), "existing");

    NewObjRes r = Create(rpc(), root_, "cg_new", GUARDED, SetAttrs::Mode(0604));
    ASSERT_TRUE(NfsIs(r, NFS3_OK));
    struct stat st;
    ASSERT_NO_FATAL_FAILURE(DiskStat("cg_new", &st));
    EXPECT_TRUE(S_ISREG(st.st_mode));
    EXPECT_EQ(st.st_mode & 07777, 0604u);
}

TEST_F(Nfs3ProceduresTest, CreateExclusiveVerifierSemantics) {
    const Verf8 v1 = {'v', 'e', 'r', 'i', 'f', 'y', '0', '1'};
    const Verf8 v2 = {'v', 'e', 'r', 'i', 'f', 'y', '0', '2'};
    NewObjRes r1 = Create(rpc(), root_, "cx", EXCLUSIVE, {}, v1);
    ASSERT_TRUE(NfsIs(r1, NFS3_OK));
    struct stat st;
    ASSERT_NO_FATAL_FAILURE(DiskStat("cx", &st));
    EXPECT_TRUE(S_ISREG(st.st_mode));
    Fh fh1;
    ASSERT_NO_FATAL_FAILURE(CreatedFh(r1, "cx", &fh1));

    // A retransmission (same verifier) succeeds and names the same file.
    NewObjRes r2 = Create(rpc(), root_, "cx", EXCLUSIVE, {}, v1);
    ASSERT_TRUE(NfsIs(r2, NFS3_OK)) << "EXCLUSIVE retransmit with the same verifier";
    Fh fh2;
    ASSERT_NO_FATAL_FAILURE(CreatedFh(r2, "cx", &fh2));
    EXPECT_EQ(fh2.hex(), fh1.hex()) << "retransmit must return the same file handle";
    struct stat st2;
    ASSERT_NO_FATAL_FAILURE(DiskStat("cx", &st2));
    EXPECT_EQ(st2.st_ino, st.st_ino);

    // A different verifier is a different create: the name exists.
    EXPECT_TRUE(NfsIs(Create(rpc(), root_, "cx", EXCLUSIVE, {}, v2), NFS3ERR_EXIST));

    // A file created without a verifier is never matched by EXCLUSIVE.
    ASSERT_NO_FATAL_FAILURE(PutFile("plain_x", "x"));
    EXPECT_TRUE(NfsIs(Create(rpc(), root_, "plain_x", EXCLUSIVE, {}, v1), NFS3ERR_EXIST));

    // The client then sets the real attributes (RFC 1813 3.3.8).
    EXPECT_TRUE(NfsIs(Setattr(rpc(), fh1, SetAttrs::Mode(0644)), NFS3_OK));
    ASSERT_NO_FATAL_FAILURE(DiskStat("cx", &st));
    EXPECT_EQ(st.st_mode & 07777, 0644u);
}

// ---- MKDIR / SYMLINK / MKNOD --------------------------------------------------------------------

TEST_F(Nfs3ProceduresTest, Mkdir) {
    NewObjRes r = Mkdir(rpc(), root_, "md", SetAttrs::Mode(0750));
    ASSERT_TRUE(NfsIs(r, NFS3_OK));
    struct stat st;
    ASSERT_NO_FATAL_FAILURE(DiskStat("md", &st));
    EXPECT_TRUE(S_ISDIR(st.st_mode));
    EXPECT_EQ(st.st_mode & 07777, 0750u);
    if (r.has_attr) {
        EXPECT_EQ(r.attr.type, NF3DIR);
    }
    Fh md;
    ASSERT_NO_FATAL_FAILURE(CreatedFh(r, "md", &md));

    NewObjRes inner = Mkdir(rpc(), md, "inner", SetAttrs::Mode(0700));
    ASSERT_TRUE(NfsIs(inner, NFS3_OK));
    ASSERT_NO_FATAL_FAILURE(DiskStat("md/inner", &st));
    EXPECT_TRUE(S_ISDIR(st.st_mode));

    EXPECT_TRUE(NfsIs(Mkdir(rpc(), root_, "md", SetAttrs::Mode(0750)), NFS3ERR_EXIST));
    ASSERT_NO_FATAL_FAILURE(PutFile("notadir", "f"));
    Fh f;
    ASSERT_NO_FATAL_FAILURE(Fhandle("notadir", &f));
    EXPECT_TRUE(NfsIs(Mkdir(rpc(), f, "sub"), NFS3ERR_NOTDIR));
}

TEST_F(Nfs3ProceduresTest, Symlink) {
    NewObjRes r = Symlink(rpc(), root_, "sl", "../x/y");
    ASSERT_TRUE(NfsIs(r, NFS3_OK));
    struct stat st;
    ASSERT_NO_FATAL_FAILURE(DiskStat("sl", &st));
    EXPECT_TRUE(S_ISLNK(st.st_mode));
    char buf[256] = {};
    ASSERT_EQ(::readlink(disk("sl").c_str(), buf, sizeof buf - 1), 6);
    EXPECT_STREQ(buf, "../x/y");
    Fh fh;
    ASSERT_NO_FATAL_FAILURE(CreatedFh(r, "sl", &fh));
    fattr3 a;
    ASSERT_NO_FATAL_FAILURE(Attr(fh, &a));
    EXPECT_EQ(a.type, NF3LNK);
    EXPECT_EQ(a.size, 6u);
    EXPECT_TRUE(NfsIs(Symlink(rpc(), root_, "sl", "other"), NFS3ERR_EXIST));
}

TEST_F(Nfs3ProceduresTest, MknodFifoViaLibnfs) {
    ASSERT_EQ(nfs_mknod(client_->nfs(), "/fifo", S_IFIFO | 0640, 0), 0) << client_->error();
    struct stat st;
    ASSERT_NO_FATAL_FAILURE(DiskStat("fifo", &st));
    EXPECT_TRUE(S_ISFIFO(st.st_mode));
    EXPECT_EQ(st.st_mode & 0777, 0640u);
    Fh fh;
    ASSERT_NO_FATAL_FAILURE(Fhandle("fifo", &fh));
    fattr3 a;
    ASSERT_NO_FATAL_FAILURE(Attr(fh, &a));
    EXPECT_EQ(a.type, NF3FIFO);
}

TEST_F(Nfs3ProceduresTest, MknodSocketRawAndIllegalTypes) {
    NewObjRes r = Mknod(rpc(), root_, "sock", NF3SOCK, SetAttrs::Mode(0600));
    ASSERT_TRUE(NfsIs(r, NFS3_OK));
    struct stat st;
    ASSERT_NO_FATAL_FAILURE(DiskStat("sock", &st));
    EXPECT_TRUE(S_ISSOCK(st.st_mode));
    EXPECT_EQ(st.st_mode & 0777, 0600u);

    // RFC 1813 3.3.11: NF3REG, NF3DIR and NF3LNK are illegal MKNOD types.
    EXPECT_TRUE(NfsIs(Mknod(rpc(), root_, "reg", NF3REG), NFS3ERR_BADTYPE));
    EXPECT_TRUE(NfsIs(Mknod(rpc(), root_, "dir", NF3DIR), NFS3ERR_BADTYPE));
    EXPECT_TRUE(Absent(disk("reg")));
    EXPECT_TRUE(Absent(disk("dir")));
}

// ---- REMOVE / RMDIR -----------------------------------------------------------------------------

TEST_F(Nfs3ProceduresTest, Remove) {
    ASSERT_NO_FATAL_FAILURE(PutFile("rm.txt", "bye"));
    ASSERT_EQ(::mkdir(disk("rmdir_not_file").c_str(), 0755), 0);
    EXPECT_TRUE(NfsIs(Remove(rpc(), root_, "rm.txt"), NFS3_OK));
    EXPECT_TRUE(Absent(disk("rm.txt")));
    EXPECT_TRUE(NfsIs(Remove(rpc(), root_, "rm.txt"), NFS3ERR_NOENT));
    EXPECT_TRUE(NfsFailed(Remove(rpc(), root_, "rmdir_not_file"))) << "REMOVE of a directory";
    struct stat st;
    ASSERT_NO_FATAL_FAILURE(DiskStat("rmdir_not_file", &st));
    EXPECT_TRUE(S_ISDIR(st.st_mode));
}

TEST_F(Nfs3ProceduresTest, RmdirEmptyNonEmptyAndFile) {
    ASSERT_EQ(::mkdir(disk("empty").c_str(), 0755), 0);
    ASSERT_EQ(::mkdir(disk("full").c_str(), 0755), 0);
    ASSERT_NO_FATAL_FAILURE(PutFile("full/child", "c"));
    ASSERT_NO_FATAL_FAILURE(PutFile("file", "f"));

    EXPECT_TRUE(NfsIs(Rmdir(rpc(), root_, "empty"), NFS3_OK));
    EXPECT_TRUE(Absent(disk("empty")));
    EXPECT_TRUE(NfsIs(Rmdir(rpc(), root_, "full"), NFS3ERR_NOTEMPTY));
    EXPECT_EQ(DiskContent("full/child"), "c");
    EXPECT_TRUE(NfsIs(Rmdir(rpc(), root_, "file"), NFS3ERR_NOTDIR));
    EXPECT_EQ(DiskContent("file"), "f");
    EXPECT_TRUE(NfsIs(Rmdir(rpc(), root_, "missing"), NFS3ERR_NOENT));
}

// ---- RENAME -------------------------------------------------------------------------------------

TEST_F(Nfs3ProceduresTest, RenameSimpleAcrossDirsAndOverExisting) {
    ASSERT_EQ(::mkdir(disk("d1").c_str(), 0755), 0);
    ASSERT_EQ(::mkdir(disk("d2").c_str(), 0755), 0);
    ASSERT_NO_FATAL_FAILURE(PutFile("src", "source"));
    struct stat src_st;
    ASSERT_NO_FATAL_FAILURE(DiskStat("src", &src_st));

    EXPECT_TRUE(NfsIs(Rename(rpc(), root_, "src", root_, "dst"), NFS3_OK));
    EXPECT_TRUE(Absent(disk("src")));
    struct stat st;
    ASSERT_NO_FATAL_FAILURE(DiskStat("dst", &st));
    EXPECT_EQ(st.st_ino, src_st.st_ino);
    EXPECT_EQ(DiskContent("dst"), "source");

    Fh d1, d2;
    ASSERT_NO_FATAL_FAILURE(Fhandle("d1", &d1));
    ASSERT_NO_FATAL_FAILURE(Fhandle("d2", &d2));
    ASSERT_NO_FATAL_FAILURE(PutFile("d1/moving", "m"));
    EXPECT_TRUE(NfsIs(Rename(rpc(), d1, "moving", d2, "moved"), NFS3_OK));
    EXPECT_TRUE(Absent(disk("d1/moving")));
    EXPECT_EQ(DiskContent("d2/moved"), "m");

    // Over an existing file: target replaced atomically, source gone.
    ASSERT_NO_FATAL_FAILURE(PutFile("new", "new content"));
    ASSERT_NO_FATAL_FAILURE(PutFile("old", "old content"));
    struct stat new_st;
    ASSERT_NO_FATAL_FAILURE(DiskStat("new", &new_st));
    EXPECT_TRUE(NfsIs(Rename(rpc(), root_, "new", root_, "old"), NFS3_OK));
    EXPECT_TRUE(Absent(disk("new")));
    EXPECT_EQ(DiskContent("old"), "new content");
    ASSERT_NO_FATAL_FAILURE(DiskStat("old", &st));
    EXPECT_EQ(st.st_ino, new_st.st_ino);
    EXPECT_TRUE(NfsIs(Lookup(rpc(), root_, "new"), NFS3ERR_NOENT));

    // Rename onto itself is a successful no-op.
    EXPECT_TRUE(NfsIs(Rename(rpc(), root_, "old", root_, "old"), NFS3_OK));
    EXPECT_EQ(DiskContent("old"), "new content");

    EXPECT_TRUE(NfsIs(Rename(rpc(), root_, "missing", root_, "x"), NFS3ERR_NOENT));

    // A directory over a non-empty directory.
    ASSERT_EQ(::mkdir(disk("da").c_str(), 0755), 0);
    ASSERT_EQ(::mkdir(disk("db").c_str(), 0755), 0);
    ASSERT_NO_FATAL_FAILURE(PutFile("db/x", "x"));
    EXPECT_TRUE(
        NfsIsOneOf(Rename(rpc(), root_, "da", root_, "db"), {NFS3ERR_EXIST, NFS3ERR_NOTEMPTY}));
    EXPECT_EQ(DiskContent("db/x"), "x");
}

// ---- LINK ---------------------------------------------------------------------------------------

TEST_F(Nfs3ProceduresTest, LinkMakesSecondNameForSameInode) {
    ASSERT_NO_FATAL_FAILURE(PutFile("orig", "linked"));
    Fh f;
    ASSERT_NO_FATAL_FAILURE(Fhandle("orig", &f));
    StatusRes r = Link(rpc(), f, root_, "hard");
    ASSERT_TRUE(NfsIs(r, NFS3_OK));
    if (r.has_attr) {
        EXPECT_EQ(r.attr.nlink, 2u);
    }
    struct stat a, b;
    ASSERT_NO_FATAL_FAILURE(DiskStat("orig", &a));
    ASSERT_NO_FATAL_FAILURE(DiskStat("hard", &b));
    EXPECT_EQ(a.st_ino, b.st_ino);
    EXPECT_EQ(a.st_nlink, 2u);
    Fh h;
    ASSERT_NO_FATAL_FAILURE(Fhandle("hard", &h));
    fattr3 ha;
    ASSERT_NO_FATAL_FAILURE(Attr(h, &ha));
    EXPECT_EQ(ha.nlink, 2u);
    EXPECT_EQ(ha.fileid, static_cast<uint64_t>(a.st_ino));

    EXPECT_TRUE(NfsIs(Link(rpc(), f, root_, "hard"), NFS3ERR_EXIST));
    ASSERT_EQ(::mkdir(disk("ldir").c_str(), 0755), 0);
    Fh d;
    ASSERT_NO_FATAL_FAILURE(Fhandle("ldir", &d));
    EXPECT_TRUE(NfsFailed(Link(rpc(), d, root_, "dirlink"))) << "hard link to a directory";
    EXPECT_TRUE(Absent(disk("dirlink")));
}

// ---- READDIR / READDIRPLUS ----------------------------------------------------------------------

TEST_F(Nfs3ProceduresTest, ReaddirPagesWithCookieAndVerifier) {
    ASSERT_EQ(::mkdir(disk("rd").c_str(), 0755), 0);
    std::set<std::string> expected;
    for (int i = 0; i < 200; ++i) {
        char n[32];
        std::snprintf(n, sizeof n, "entry_%03d", i);
        ASSERT_NO_FATAL_FAILURE(PutFile(std::string("rd/") + n, ""));
        expected.insert(n);
    }
    ASSERT_EQ(::mkdir(disk("rd/subdir").c_str(), 0755), 0);
    expected.insert("subdir");
    Fh rd;
    ASSERT_NO_FATAL_FAILURE(Fhandle("rd", &rd));

    size_t pages = 0;
    ReaddirRes all = ReaddirAll(rpc(), rd, 1024, &pages);
    ASSERT_TRUE(NfsIs(all, NFS3_OK));
    EXPECT_TRUE(all.eof);
    EXPECT_GT(pages, 3u) << "count=1024 cannot hold 201 entries in few pages";
    std::map<std::string, int> seen;
    for (const auto& e : all.entries) {
        ++seen[e.name];
        EXPECT_NE(e.cookie, 0u) << "cookie 0 is reserved for the start of the directory";
    }
    for (const auto& name : expected)
        EXPECT_EQ(seen[name], 1) << name << " listed " << seen[name] << " times";
    for (const auto& [name, n] : seen) {
        if (name == "." || name == "..") {
            EXPECT_EQ(n, 1) << name;
            continue;
        }
        EXPECT_TRUE(expected.count(name)) << "unexpected entry " << name;
    }

    // READDIR fileids agree with GETATTR of the same names.
    int checked = 0;
    for (const auto& e : all.entries) {
        if (e.name == "." || e.name == ".." || checked >= 10) continue;
        ++checked;
        LookupRes l = Lookup(rpc(), rd, e.name);
        ASSERT_TRUE(NfsIs(l, NFS3_OK)) << e.name;
        fattr3 a;
        ASSERT_NO_FATAL_FAILURE(Attr(l.fh, &a));
        EXPECT_EQ(a.fileid, e.fileid) << e.name;
    }

    // A single page resumed from the middle continues where it left off.
    ReaddirRes first = Readdir(rpc(), rd, 0, Verf8{}, 1024);
    ASSERT_TRUE(NfsIs(first, NFS3_OK));
    ASSERT_FALSE(first.entries.empty());
    ReaddirRes next = Readdir(rpc(), rd, first.entries.back().cookie, first.cookieverf, 1024);
    ASSERT_TRUE(NfsIs(next, NFS3_OK));
    ASSERT_FALSE(next.entries.empty());
    for (const auto& e : next.entries)
        for (const auto& f : first.entries) EXPECT_NE(e.name, f.name) << "page overlap";
}

TEST_F(Nfs3ProceduresTest, ReaddirplusViaLibnfsMatchesDisk) {
    ASSERT_EQ(::mkdir(disk("rp").c_str(), 0755), 0);
    ASSERT_NO_FATAL_FAILURE(PutFile("rp/small", "12345", 0600));
    ASSERT_NO_FATAL_FAILURE(PutFile("rp/bigger", Pattern(70000, 5), 0644));
    ASSERT_EQ(::mkdir(disk("rp/sub").c_str(), 0711), 0);
    ASSERT_EQ(::chmod(disk("rp/sub").c_str(), 0711), 0);
    ASSERT_EQ(::symlink("small", disk("rp/link").c_str()), 0);
    std::set<std::string> expected = {"small", "bigger", "sub", "link"};
    for (int i = 0; i < 20; ++i) {
        char n[16];
        std::snprintf(n, sizeof n, "f%02d", i);
        ASSERT_NO_FATAL_FAILURE(
            PutFile(std::string("rp/").append(n), std::string(static_cast<size_t>(i), 'z')));
        expected.insert(n);
    }

    nfsdir* dir = nullptr;
    ASSERT_EQ(nfs_opendir(client_->nfs(), "/rp", &dir), 0) << client_->error();
    std::map<std::string, int> seen;
    for (nfsdirent* e = nfs_readdir(client_->nfs(), dir); e != nullptr;
         e = nfs_readdir(client_->nfs(), dir)) {
        std::string name = e->name;
        ++seen[name];
        if (name == "." || name == "..") continue;
        struct stat st;
        std::string why;
        ASSERT_TRUE(Lstat(disk("rp/" + name), &st, &why)) << why;
        EXPECT_EQ(e->type, static_cast<uint32_t>(FtypeOf(st.st_mode))) << name;
        EXPECT_EQ(e->mode & 07777, st.st_mode & 07777) << name;
        EXPECT_EQ(e->size, static_cast<uint64_t>(st.st_size)) << name;
        EXPECT_EQ(e->nlink, st.st_nlink) << name;
        EXPECT_EQ(e->uid, st.st_uid) << name;
        EXPECT_EQ(e->inode, static_cast<uint64_t>(st.st_ino)) << name;
    }
    nfs_closedir(client_->nfs(), dir);
    for (const auto& n : expected) EXPECT_EQ(seen[n], 1) << n;
    for (const auto& [n, c] : seen)
        EXPECT_TRUE(expected.count(n) || n == "." || n == "..") << "unexpected " << n;

    // Raw READDIRPLUS with small limits: several pages, every entry with attributes and a
    // working handle.
    Fh rp;
    ASSERT_NO_FATAL_FAILURE(Fhandle("rp", &rp));
    size_t pages = 0;
    ReaddirRes all = ReaddirplusAll(rpc(), rp, 256, 1024, &pages);
    ASSERT_TRUE(NfsIs(all, NFS3_OK));
    EXPECT_GE(pages, 3u) << "24 entries with attributes and handles cannot fit 2 pages of 1 KiB";
    std::map<std::string, int> raw_seen;
    for (const auto& e : all.entries) {
        ++raw_seen[e.name];
        if (e.name == "." || e.name == "..") continue;
        EXPECT_TRUE(e.has_attr) << e.name << ": READDIRPLUS should return attributes";
        EXPECT_TRUE(e.has_fh) << e.name << ": READDIRPLUS should return a handle";
        if (e.has_attr) {
            EXPECT_EQ(e.attr.fileid, e.fileid) << e.name;
        }
        if (e.has_fh) {
            GetattrRes g = Getattr(rpc(), e.fh);
            ASSERT_TRUE(NfsIs(g, NFS3_OK)) << e.name;
            EXPECT_EQ(g.attr.fileid, e.fileid) << e.name;
        }
    }
    for (const auto& n : expected) EXPECT_EQ(raw_seen[n], 1) << n;
}

// ---- FSSTAT / FSINFO / PATHCONF -----------------------------------------------------------------

TEST_F(Nfs3ProceduresTest, FsstatMatchesStatvfsOfExport) {
    struct statvfs disk_vfs;
    ASSERT_EQ(::statvfs(daemon_->export_dir().c_str(), &disk_vfs), 0);
    const uint64_t tbytes = uint64_t{disk_vfs.f_blocks} * disk_vfs.f_frsize;
    const uint64_t fbytes = uint64_t{disk_vfs.f_bfree} * disk_vfs.f_frsize;

    FsstatRes r = Fsstat(rpc(), root_);
    ASSERT_TRUE(NfsIs(r, NFS3_OK));
    EXPECT_EQ(r.ok.tbytes, tbytes);
    EXPECT_EQ(r.ok.tfiles, uint64_t{disk_vfs.f_files});
    EXPECT_LE(r.ok.abytes, r.ok.fbytes);
    EXPECT_LE(r.ok.fbytes, r.ok.tbytes);
    EXPECT_LE(r.ok.afiles, r.ok.ffiles);
    EXPECT_LE(r.ok.ffiles, r.ok.tfiles);
    // Other processes share the disk: allow free space to move a little between the calls.
    const uint64_t slack = std::max<uint64_t>(tbytes / 50, 512ull << 20);
    const uint64_t diff = r.ok.fbytes > fbytes ? r.ok.fbytes - fbytes : fbytes - r.ok.fbytes;
    EXPECT_LE(diff, slack) << "fbytes " << r.ok.fbytes << " vs disk " << fbytes;

    struct statvfs nfs_vfs;
    ASSERT_EQ(nfs_statvfs(client_->nfs(), "/", &nfs_vfs), 0) << client_->error();
    EXPECT_EQ(uint64_t{nfs_vfs.f_blocks} * nfs_vfs.f_frsize,
              tbytes / nfs_vfs.f_frsize * nfs_vfs.f_frsize);
    EXPECT_EQ(uint64_t{nfs_vfs.f_files}, uint64_t{disk_vfs.f_files});
}

TEST_F(Nfs3ProceduresTest, FsinfoLimitsAndProperties) {
    FsinfoRes r = Fsinfo(rpc(), root_);
    ASSERT_TRUE(NfsIs(r, NFS3_OK));
    EXPECT_EQ(r.ok.rtmax, 1048576u);
    EXPECT_EQ(r.ok.wtmax, 1048576u);
    EXPECT_GT(r.ok.rtpref, 0u);
    EXPECT_LE(r.ok.rtpref, r.ok.rtmax);
    EXPECT_GT(r.ok.wtpref, 0u);
    EXPECT_LE(r.ok.wtpref, r.ok.wtmax);
    EXPECT_GT(r.ok.dtpref, 0u);
    EXPECT_GE(r.ok.maxfilesize, uint64_t{1} << 32);
    EXPECT_EQ(r.ok.properties & (FSF3_LINK | FSF3_SYMLINK | FSF3_CANSETTIME),
              uint32_t{FSF3_LINK | FSF3_SYMLINK | FSF3_CANSETTIME});
    EXPECT_LT(r.ok.time_delta.nseconds, 1000000000u);
    EXPECT_LE(r.ok.time_delta.seconds, 1u);
}

TEST_F(Nfs3ProceduresTest, PathconfMatchesFilesystem) {
    ASSERT_NO_FATAL_FAILURE(PutFile("pc", "x"));
    Fh fh;
    ASSERT_NO_FATAL_FAILURE(Fhandle("pc", &fh));
    for (const Fh* h : {&root_, &fh}) {
        PathconfRes r = Pathconf(rpc(), *h);
        ASSERT_TRUE(NfsIs(r, NFS3_OK));
        EXPECT_GE(r.ok.linkmax, 2u);
        EXPECT_EQ(r.ok.name_max,
                  static_cast<u_int>(::pathconf(daemon_->export_dir().c_str(), _PC_NAME_MAX)));
        EXPECT_TRUE(r.ok.no_trunc);
        EXPECT_TRUE(r.ok.chown_restricted);
        EXPECT_FALSE(r.ok.case_insensitive);
        EXPECT_TRUE(r.ok.case_preserving);
    }
}

}  // namespace
}  // namespace nfsrdmad::e2e
