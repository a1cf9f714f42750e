// MOUNT protocol (v3 and v1) through libnfs's raw API, export options (ro, root_squash,
// all_squash with anonuid/anongid) and configuration reload on SIGHUP.
#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

#include <chrono>
#include <string>
#include <thread>

#include <fstream>
#include <iterator>

#include <gtest/gtest.h>

#include "tests/e2e/daemon_fixture.h"
#include "tests/e2e/e2e_util.h"
#include "tests/e2e/raw_nfs.h"
#include "tests/e2e/rpc_wire.h"

namespace nfsrdmad::e2e {
namespace {

::testing::AssertionResult MountRejected(const MntRes& r) {
    if (!r.rpc_error.empty())
        return ::testing::AssertionFailure() << "RPC failed (no MOUNT reply): " << r.rpc_error;
    if (r.status == MNT3ERR_NOENT || r.status == MNT3ERR_ACCES)
        return ::testing::AssertionSuccess();
    return ::testing::AssertionFailure() << "got " << MountStatName(r.status)
                                         << ", expected MNT3ERR_NOENT(2) or MNT3ERR_ACCES(13)";
}

int CountDir(const DumpRes& d, const std::string& dir) {
    int n = 0;
    for (const auto& e : d.entries)
        if (e.dir == dir) ++n;
    return n;
}

const ExportEntry* FindExport(const ExportRes& r, const std::string& dir) {
    for (const auto& e : r.exports)
        if (e.dir == dir) return &e;
    return nullptr;
}

class MountTest : public DaemonTest {
  protected:
    MountTest() { mount_client_ = false; }  // DUMP must only show what the test mounts
    DaemonOptions Options() override {
        DaemonOptions o;
        o.extra_exports.push_back({"second", "rw,no_root_squash,insecure"});
        return o;
    }
    void SetUp() override {
        ASSERT_NO_FATAL_FAILURE(DaemonTest::SetUp());
        std::string why;
        m3_ = RpcConn::Connect(daemon_->mount_port(), kMountProgram, 3, &why);
        ASSERT_TRUE(m3_ != nullptr) << why;
    }
    void TearDown() override {
        m3_.reset();
        DaemonTest::TearDown();
    }
    rpc_context* m3() { return m3_->get(); }
    std::string second() const { return daemon_->extra_export_dir("second"); }

    std::unique_ptr<RpcConn> m3_;
};

TEST_F(MountTest, NullOnMountPortV1V3AndOnNfsPort) {
    EXPECT_EQ(MountNull(m3(), 3), "");
    std::string why;
    auto m1 = RpcConn::Connect(daemon_->mount_port(), kMountProgram, 1, &why);
    ASSERT_TRUE(m1 != nullptr) << why;
    EXPECT_EQ(MountNull(m1->get(), 1), "");
    auto on_nfs = RpcConn::Connect(daemon_->nfs_port(), kMountProgram, 3, &why);
    ASSERT_TRUE(on_nfs != nullptr) << "MOUNT must also be served on the NFS port: " << why;
    EXPECT_EQ(MountNull(on_nfs->get(), 3), "");
}

TEST_F(MountTest, MntOfExportReturnsHandleAndAuthSys) {
    MntRes r = Mnt3(m3(), daemon_->export_dir());
    ASSERT_TRUE(MountIs(r, MNT3_OK));
    EXPECT_GE(r.fh.size(), 1u);
    EXPECT_LE(r.fh.size(), 64u);
    bool has_sys = false;
    for (int f : r.flavors) has_sys |= (f == static_cast<int>(kAuthSys));
    EXPECT_TRUE(has_sys) << "auth flavors must include AUTH_SYS (1); got " << r.flavors.size()
                         << " flavors";

    std::string why;
    auto nfs = RpcConn::Connect(daemon_->nfs_port(), kNfsProgram, 3, &why);
    ASSERT_TRUE(nfs != nullptr) << why;
    GetattrRes g = Getattr(nfs->get(), r.fh);
    ASSERT_TRUE(NfsIs(g, NFS3_OK)) << "the MNT handle must work on the NFS port";
    EXPECT_EQ(g.attr.type, NF3DIR);
    struct stat st;
    ASSERT_EQ(::stat(daemon_->export_dir().c_str(), &st), 0);
    EXPECT_EQ(g.attr.fileid, static_cast<uint64_t>(st.st_ino));

    // The same MNT over the NFS port (MOUNT is served there too) names the same directory.
    auto mount_on_nfs = RpcConn::Connect(daemon_->nfs_port(), kMountProgram, 3, &why);
    ASSERT_TRUE(mount_on_nfs != nullptr) << why;
    MntRes r2 = Mnt3(mount_on_nfs->get(), daemon_->export_dir());
    ASSERT_TRUE(MountIs(r2, MNT3_OK));
    EXPECT_EQ(r2.fh.hex(), r.fh.hex()) << "one directory, one handle";
}

TEST_F(MountTest, MntOfNonExportedPathsIsRefused) {
    ASSERT_EQ(::mkdir((daemon_->base_dir() + "/exportevil").c_str(), 0755), 0);
    const std::string paths[] = {
        "/etc",
        "/",
        daemon_->base_dir(),                  // parent of the export
        daemon_->export_dir() + "/..",        // traversal out of the export
        daemon_->export_dir() + "/../state",  // traversal into a sibling
        daemon_->base_dir() + "/exportevil",  // shares the export's name as a prefix
        "/nonexistent/nfsrdmad/e2e",
    };
    for (const auto& p : paths) EXPECT_TRUE(MountRejected(Mnt3(m3(), p))) << "MNT " << p;
}

TEST_F(MountTest, MntOfSubdirectoryOfExportIsAllowed) {
    ASSERT_EQ(::mkdir(disk("sub").c_str(), 0755), 0);
    ASSERT_EQ(::mkdir(disk("sub/deeper").c_str(), 0755), 0);
    std::string why;
    ASSERT_TRUE(WriteFile(disk("sub/deeper/f.txt"), "deep", &why)) << why;

    MntRes root = Mnt3(m3(), daemon_->export_dir());
    ASSERT_TRUE(MountIs(root, MNT3_OK));
    MntRes sub = Mnt3(m3(), disk("sub"));
    ASSERT_TRUE(MountIs(sub, MNT3_OK)) << "MNT of a subdirectory of an export (like Linux nfsd)";
    EXPECT_NE(sub.fh.hex(), root.fh.hex());

    auto nfs = RpcConn::Connect(daemon_->nfs_port(), kNfsProgram, 3, &why);
    ASSERT_TRUE(nfs != nullptr) << why;
    GetattrRes g = Getattr(nfs->get(), sub.fh);
    ASSERT_TRUE(NfsIs(g, NFS3_OK));
    EXPECT_EQ(g.attr.type, NF3DIR);
    LookupRes l = Lookup(nfs->get(), root.fh, "sub");
    ASSERT_TRUE(NfsIs(l, NFS3_OK));
    GetattrRes lg = Getattr(nfs->get(), l.fh);
    ASSERT_TRUE(NfsIs(lg, NFS3_OK));
    EXPECT_EQ(g.attr.fileid, lg.attr.fileid) << "MNT of sub and LOOKUP of sub name one directory";

    EXPECT_TRUE(MountIs(Mnt3(m3(), disk("sub/deeper")), MNT3_OK));
    EXPECT_TRUE(MountRejected(Mnt3(m3(), disk("nosuchdir"))));

    // libnfs can mount the subdirectory and sees its content.
    auto c = NfsClient::Mount(*daemon_, &why, disk("sub"));
    ASSERT_TRUE(c != nullptr) << why;
    nfs_stat_64 st{};
    ASSERT_EQ(nfs_stat64(c->nfs(), "/deeper/f.txt", &st), 0) << c->error();
    EXPECT_EQ(st.nfs_size, 4u);

    // A symlink inside the export pointing at /etc must not yield a handle for /etc.
    ASSERT_EQ(::symlink("/etc", disk("escape").c_str()), 0);
    MntRes esc = Mnt3(m3(), disk("escape"));
    ASSERT_TRUE(esc.rpc_error.empty()) << esc.rpc_error;
    if (esc.status == MNT3_OK) {
        struct stat etc;
        ASSERT_EQ(::stat("/etc", &etc), 0);
        GetattrRes eg = Getattr(nfs->get(), esc.fh);
        if (eg.rpc_error.empty() && eg.status == NFS3_OK) {
            EXPECT_NE(eg.attr.fileid, static_cast<uint64_t>(etc.st_ino))
                << "MNT through a symlink escaped the export to /etc";
        }
    }
}

TEST_F(MountTest, DumpListsMountAndUmntRemovesIt) {
    DumpRes before = MountDump(m3(), 3);
    ASSERT_TRUE(before.rpc_error.empty()) << before.rpc_error;
    EXPECT_EQ(CountDir(before, daemon_->export_dir()), 0) << "nothing mounted yet";

    ASSERT_TRUE(MountIs(Mnt3(m3(), daemon_->export_dir()), MNT3_OK));
    DumpRes after = MountDump(m3(), 3);
    ASSERT_TRUE(after.rpc_error.empty()) << after.rpc_error;
    EXPECT_EQ(CountDir(after, daemon_->export_dir()), 1);
    for (const auto& e : after.entries) EXPECT_FALSE(e.host.empty()) << "hostname of " << e.dir;

    ASSERT_TRUE(MountIs(Mnt3(m3(), daemon_->export_dir()), MNT3_OK));
    DumpRes twice = MountDump(m3(), 3);
    ASSERT_TRUE(twice.rpc_error.empty());
    EXPECT_EQ(CountDir(twice, daemon_->export_dir()), 1) << "same host + dir is listed once";

    EXPECT_EQ(MountUmnt(m3(), 3, daemon_->export_dir()), "");
    DumpRes gone = MountDump(m3(), 3);
    ASSERT_TRUE(gone.rpc_error.empty());
    EXPECT_EQ(CountDir(gone, daemon_->export_dir()), 0) << "UMNT must remove the entry";
    EXPECT_TRUE(gone.entries.empty());

    // UMNT of something never mounted is not an error (the procedure has no status).
    EXPECT_EQ(MountUmnt(m3(), 3, "/never/mounted"), "");
}

// Issue 8 finding 6: the list held every raw spelling a client sent (9 898 spellings of
// one path made a 5.4 MB DUMP reply). One directory is one entry, and one host holds at
// most MountList::kPerHost (16) entries.
TEST_F(MountTest, MountListHoldsOneSpellingPerDirectoryAndIsBoundedPerHost) {
    const std::string root = daemon_->export_dir();
    std::vector<std::string> spellings = {root + "/", root + "//", root + "/.", root + "/./",
                                          root + "/././/."};
    for (int i = 0; i < 200; ++i)
        spellings.push_back(root + std::string(size_t(i % 7) + 1, '/') + ".");
    for (const auto& p : spellings) ASSERT_TRUE(MountIs(Mnt3(m3(), p), MNT3_OK)) << p;
    DumpRes d = MountDump(m3(), 3);
    ASSERT_TRUE(d.rpc_error.empty()) << d.rpc_error;
    ASSERT_EQ(d.entries.size(), 1u) << "every spelling of one directory is one entry";
    EXPECT_EQ(d.entries[0].dir, root);
    EXPECT_EQ(MountUmnt(m3(), 3, root + "//."), "");
    EXPECT_TRUE(MountDump(m3(), 3).entries.empty()) << "UMNT by another spelling removes it";

    for (int i = 0; i < 40; ++i) {
        const std::string sub = "sub" + std::to_string(i);
        ASSERT_EQ(::mkdir(disk(sub).c_str(), 0755), 0);
        ASSERT_TRUE(MountIs(Mnt3(m3(), disk(sub)), MNT3_OK));
    }
    DumpRes many = MountDump(m3(), 3);
    ASSERT_TRUE(many.rpc_error.empty()) << many.rpc_error;
    EXPECT_EQ(many.entries.size(), 16u) << "one host's entries are bounded";
    EXPECT_EQ(CountDir(many, disk("sub39")), 1) << "the newest mount is kept";
    EXPECT_EQ(CountDir(many, disk("sub0")), 0) << "the oldest went";
}

// A path is client text: logged escaped, so a newline in it cannot forge a log line.
TEST_F(MountTest, MntPathIsLoggedEscaped) {
    const std::string forged = "nfsrdmad forged: attacker line";
    MntRes r = Mnt3(m3(), daemon_->export_dir() + "/no\n" + forged);
    ASSERT_TRUE(r.rpc_error.empty()) << r.rpc_error;
    EXPECT_NE(r.status, MNT3_OK);
    std::string log;
    ASSERT_TRUE(ReadFile(daemon_->log_path(), &log));
    EXPECT_NE(log.find("no\\x0a" + forged), std::string::npos) << "the escaped path is in the log";
    EXPECT_EQ(log.find("\n" + forged), std::string::npos) << "a client's newline reached the log";
}

TEST_F(MountTest, UmntallRemovesAllMountsOfThisHost) {
    ASSERT_TRUE(MountIs(Mnt3(m3(), daemon_->export_dir()), MNT3_OK));
    ASSERT_TRUE(MountIs(Mnt3(m3(), second()), MNT3_OK));
    DumpRes d = MountDump(m3(), 3);
    ASSERT_TRUE(d.rpc_error.empty());
    EXPECT_EQ(CountDir(d, daemon_->export_dir()), 1);
    EXPECT_EQ(CountDir(d, second()), 1);

    EXPECT_EQ(MountUmntall(m3(), 3), "");
    DumpRes e = MountDump(m3(), 3);
    ASSERT_TRUE(e.rpc_error.empty());
    EXPECT_TRUE(e.entries.empty()) << e.entries.size() << " entries left after UMNTALL";
}

TEST_F(MountTest, ExportListsEveryExportWithGroups) {
    for (int version : {3, 1}) {
        std::string why;
        auto c = RpcConn::Connect(daemon_->mount_port(), kMountProgram, version, &why);
        ASSERT_TRUE(c != nullptr) << why;
        ExportRes r = MountExport(c->get(), version);
        ASSERT_TRUE(r.rpc_error.empty()) << "EXPORT v" << version << ": " << r.rpc_error;
        EXPECT_EQ(r.exports.size(), 2u) << "v" << version;
        for (const std::string& dir : {daemon_->export_dir(), second()}) {
            const ExportEntry* e = FindExport(r, dir);
            ASSERT_TRUE(e != nullptr) << "v" << version << ": " << dir << " not listed";
            // Open to all clients: either the group "*" (what Linux mountd sends and showmount
            // prints) or the traditional empty list meaning "everyone".
            if (!e->groups.empty()) {
                ASSERT_EQ(e->groups.size(), 1u) << dir;
                EXPECT_EQ(e->groups[0], "*") << dir;
            }
        }
    }
    // Also over the NFS port.
    std::string why;
    auto on_nfs = RpcConn::Connect(daemon_->nfs_port(), kMountProgram, 3, &why);
    ASSERT_TRUE(on_nfs != nullptr) << why;
    ExportRes r = MountExport(on_nfs->get(), 3);
    ASSERT_TRUE(r.rpc_error.empty()) << r.rpc_error;
    EXPECT_TRUE(FindExport(r, daemon_->export_dir()) != nullptr);
}

TEST_F(MountTest, MountV1MntDumpUmnt) {
    std::string why;
    auto m1 = RpcConn::Connect(daemon_->mount_port(), kMountProgram, 1, &why);
    ASSERT_TRUE(m1 != nullptr) << why;
    MntRes r = Mnt1(m1->get(), daemon_->export_dir());
    ASSERT_TRUE(MountIs(r, MNT1_OK)) << "MOUNT v1 MNT";
    ASSERT_EQ(r.fh.size(), 32u);
    bool nonzero = false;
    for (char c : r.fh.data) nonzero |= (c != 0);
    EXPECT_TRUE(nonzero) << "v1 handle is all zeros";

    MntRes bad = Mnt1(m1->get(), "/etc");
    ASSERT_TRUE(bad.rpc_error.empty()) << bad.rpc_error;
    EXPECT_TRUE(bad.status == MNT1ERR_NOENT || bad.status == MNT1ERR_ACCES)
        << "MOUNT v1 MNT /etc: " << MountStatName(bad.status);

    DumpRes d = MountDump(m1->get(), 1);
    ASSERT_TRUE(d.rpc_error.empty()) << d.rpc_error;
    EXPECT_EQ(CountDir(d, daemon_->export_dir()), 1);
    EXPECT_EQ(MountUmnt(m1->get(), 1, daemon_->export_dir()), "");
    DumpRes d2 = MountDump(m1->get(), 1);
    ASSERT_TRUE(d2.rpc_error.empty());
    EXPECT_EQ(CountDir(d2, daemon_->export_dir()), 0);
}

// ---- export options -----------------------------------------------------------------------------

// exports(5) `mp`: an export whose path is not a mount point (its filesystem is not
// mounted) is left out, so the directory beneath is never served, while the others
// (here /dev/shm, a tmpfs mount, also with `mp`) are served.
class MountPointGuardTest : public DaemonTest {
  protected:
    MountPointGuardTest() { mount_client_ = false; }
    DaemonOptions Options() override {
        DaemonOptions o;
        o.extra_exports.push_back({"unmounted", "rw,insecure,mp"});
        o.extra_args = {"--export", "/dev/shm=ro,insecure,mp"};
        return o;
    }
};

TEST_F(MountPointGuardTest, AnExportThatIsNotAMountPointIsNotServed) {
    std::string why;
    auto m3 = RpcConn::Connect(daemon_->mount_port(), kMountProgram, 3, &why);
    ASSERT_TRUE(m3 != nullptr) << why;
    EXPECT_TRUE(MountRejected(Mnt3(m3->get(), daemon_->extra_export_dir("unmounted"))));
    MntRes shm = Mnt3(m3->get(), "/dev/shm");
    EXPECT_EQ(shm.rpc_error, "");
    EXPECT_EQ(shm.status, MNT3_OK) << "/dev/shm is a mount point (tmpfs) on this host?";
    MntRes plain = Mnt3(m3->get(), daemon_->export_dir());
    EXPECT_EQ(plain.status, MNT3_OK) << "an export without mp is served";
    std::ifstream log(daemon_->log_path());
    const std::string text((std::istreambuf_iterator<char>(log)), std::istreambuf_iterator<char>());
    EXPECT_NE(text.find("/unmounted: not a mount point (mp)"), std::string::npos)
        << "the log does not say why the export is left out";
}

class ExportOptionsTest : public DaemonTest {
  protected:
    ExportOptionsTest() { mount_client_ = false; }
    DaemonOptions Options() override {
        DaemonOptions o;
        o.export_options = "rw,no_root_squash,insecure";
        o.extra_exports.push_back({"ro_exp", "ro,no_root_squash,insecure"});
        o.extra_exports.push_back({"rsq", "rw,root_squash,anonuid=4321,anongid=4322,insecure"});
        o.extra_exports.push_back({"asq", "rw,all_squash,anonuid=5432,anongid=5433,insecure"});
        return o;
    }
    void RootOf(const std::string& dir, Fh* out) {
        ASSERT_NO_FATAL_FAILURE(FetchRootHandle(out, dir));
    }
    std::unique_ptr<RpcConn> NfsAs(int uid, int gid) {
        std::string why;
        auto c = RpcConn::Connect(daemon_->nfs_port(), kNfsProgram, 3, &why, uid, gid);
        EXPECT_TRUE(c != nullptr) << why;
        return c;
    }
    // CREATE `name` in `dir` as uid/gid and return the on-disk owner.
    void CreateAs(int uid, int gid, const Fh& dir, const std::string& disk_dir,
                  const std::string& name, uid_t* ou, gid_t* og) {
        auto c = NfsAs(uid, gid);
        ASSERT_TRUE(c != nullptr);
        NewObjRes r = Create(c->get(), dir, name, GUARDED, SetAttrs::Mode(0644));
        ASSERT_TRUE(NfsIs(r, NFS3_OK)) << "CREATE " << name << " as " << uid << ":" << gid;
        struct stat st;
        std::string why;
        ASSERT_TRUE(Lstat(disk_dir + "/" + name, &st, &why)) << why;
        *ou = st.st_uid;
        *og = st.st_gid;
    }
};

TEST_F(ExportOptionsTest, ReadOnlyExportRefusesEveryModification) {
    const std::string dir = daemon_->extra_export_dir("ro_exp");
    std::string why;
    ASSERT_TRUE(WriteFile(dir + "/existing.txt", "read only data", &why)) << why;
    ASSERT_EQ(::mkdir((dir + "/adir").c_str(), 0755), 0);
    Fh root;
    ASSERT_NO_FATAL_FAILURE(RootOf(dir, &root));
    auto c = NfsAs(0, 0);
    ASSERT_TRUE(c != nullptr);
    rpc_context* rpc = c->get();

    LookupRes f = Lookup(rpc, root, "existing.txt");
    ASSERT_TRUE(NfsIs(f, NFS3_OK));
    ReadRes rd = Read(rpc, f.fh, 0, 100);
    ASSERT_TRUE(NfsIs(rd, NFS3_OK)) << "reading a ro export is allowed";
    EXPECT_EQ(rd.data, "read only data");

    EXPECT_TRUE(NfsIs(Create(rpc, root, "new", UNCHECKED, SetAttrs::Mode(0644)), NFS3ERR_ROFS));
    EXPECT_TRUE(NfsIs(Write(rpc, f.fh, 0, "XX", FILE_SYNC), NFS3ERR_ROFS));
    EXPECT_TRUE(NfsIs(Setattr(rpc, f.fh, SetAttrs::Mode(0600)), NFS3ERR_ROFS));
    EXPECT_TRUE(NfsIs(Mkdir(rpc, root, "newdir"), NFS3ERR_ROFS));
    EXPECT_TRUE(NfsIs(Symlink(rpc, root, "newlink", "x"), NFS3ERR_ROFS));
    EXPECT_TRUE(NfsIs(Remove(rpc, root, "existing.txt"), NFS3ERR_ROFS));
    EXPECT_TRUE(NfsIs(Rmdir(rpc, root, "adir"), NFS3ERR_ROFS));
    EXPECT_TRUE(NfsIs(Rename(rpc, root, "existing.txt", root, "moved"), NFS3ERR_ROFS));
    EXPECT_TRUE(NfsIs(Link(rpc, f.fh, root, "hard"), NFS3ERR_ROFS));

    AccessRes a = Access(rpc, f.fh, ACCESS3_READ | ACCESS3_MODIFY | ACCESS3_EXTEND);
    ASSERT_TRUE(NfsIs(a, NFS3_OK));
    EXPECT_EQ(a.access, uint32_t{ACCESS3_READ}) << "ro export: only READ may be granted";

    std::string content;
    ASSERT_TRUE(ReadFile(dir + "/existing.txt", &content, &why)) << why;
    EXPECT_EQ(content, "read only data");
    struct stat st;
    ASSERT_EQ(::stat((dir + "/existing.txt").c_str(), &st), 0);
    EXPECT_EQ(st.st_mode & 07777, 0644u);
    EXPECT_TRUE(Absent(dir + "/new"));
    EXPECT_TRUE(Absent(dir + "/newdir"));
    EXPECT_TRUE(Absent(dir + "/moved"));
    EXPECT_TRUE(Absent(dir + "/hard"));

    // The rw export next to it is still writable.
    Fh rw;
    ASSERT_NO_FATAL_FAILURE(RootOf(daemon_->export_dir(), &rw));
    EXPECT_TRUE(NfsIs(Create(rpc, rw, "ok", UNCHECKED, SetAttrs::Mode(0644)), NFS3_OK));
}

TEST_F(ExportOptionsTest, RootSquashMapsOnlyRootToAnonuid) {
    NFSRDMAD_E2E_REQUIRE_ROOT();
    const std::string dir = daemon_->extra_export_dir("rsq");
    ASSERT_EQ(::chmod(dir.c_str(), 0777), 0);
    Fh root;
    ASSERT_NO_FATAL_FAILURE(RootOf(dir, &root));
    uid_t u;
    gid_t g;
    ASSERT_NO_FATAL_FAILURE(CreateAs(0, 0, root, dir, "by_root", &u, &g));
    EXPECT_EQ(u, 4321u) << "root_squash,anonuid=4321";
    EXPECT_EQ(g, 4322u) << "root_squash,anongid=4322";
    ASSERT_NO_FATAL_FAILURE(CreateAs(1000, 1000, root, dir, "by_user", &u, &g));
    EXPECT_EQ(u, 1000u) << "root_squash leaves other users alone";
    EXPECT_EQ(g, 1000u);
}

TEST_F(ExportOptionsTest, AllSquashMapsEveryoneToAnonuid) {
    NFSRDMAD_E2E_REQUIRE_ROOT();
    const std::string dir = daemon_->extra_export_dir("asq");
    ASSERT_EQ(::chmod(dir.c_str(), 0777), 0);
    Fh root;
    ASSERT_NO_FATAL_FAILURE(RootOf(dir, &root));
    uid_t u;
    gid_t g;
    ASSERT_NO_FATAL_FAILURE(CreateAs(0, 0, root, dir, "by_root", &u, &g));
    EXPECT_EQ(u, 5432u);
    EXPECT_EQ(g, 5433u);
    ASSERT_NO_FATAL_FAILURE(CreateAs(1000, 1000, root, dir, "by_user", &u, &g));
    EXPECT_EQ(u, 5432u);
    EXPECT_EQ(g, 5433u);
}

TEST_F(ExportOptionsTest, NoRootSquashKeepsCallerIdentity) {
    NFSRDMAD_E2E_REQUIRE_ROOT();
    const std::string dir = daemon_->export_dir();
    ASSERT_EQ(::chmod(dir.c_str(), 0777), 0);
    Fh root;
    ASSERT_NO_FATAL_FAILURE(RootOf(dir, &root));
    uid_t u;
    gid_t g;
    ASSERT_NO_FATAL_FAILURE(CreateAs(0, 0, root, dir, "by_root", &u, &g));
    EXPECT_EQ(u, 0u);
    EXPECT_EQ(g, 0u);
    ASSERT_NO_FATAL_FAILURE(CreateAs(1000, 1001, root, dir, "by_user", &u, &g));
    EXPECT_EQ(u, 1000u);
    EXPECT_EQ(g, 1001u);
}

// ---- configuration file + SIGHUP ----------------------------------------------------------------

class ConfigReloadTest : public DaemonTest {
  protected:
    ConfigReloadTest() { mount_client_ = false; }
    DaemonOptions Options() override {
        DaemonOptions o;
        o.use_config_file = true;
        return o;
    }
    // Polls EXPORT (v3) until `pred` holds or 5 s pass.
    template <class Pred>
    bool WaitForExports(Pred pred, ExportRes* last) {
        auto deadline = std::chrono::steady_clock::now() + std::chrono::seconds(5);
        for (;;) {
            std::string why;
            auto c = RpcConn::Connect(daemon_->mount_port(), kMountProgram, 3, &why);
            if (c) {
                *last = MountExport(c->get(), 3);
                if (last->rpc_error.empty() && pred(*last)) return true;
            }
            if (std::chrono::steady_clock::now() > deadline) return false;
            std::this_thread::sleep_for(std::chrono::milliseconds(100));
        }
    }
};

TEST_F(ConfigReloadTest, StartsFromYamlAndReloadsExportsOnSighup) {
    const std::string primary = daemon_->export_dir();
    const std::string added = daemon_->base_dir() + "/added";
    ASSERT_EQ(::mkdir(added.c_str(), 0755), 0);

    ExportRes ex;
    ASSERT_TRUE(
        WaitForExports([&](const ExportRes& r) { return FindExport(r, primary) != nullptr; }, &ex))
        << "the export from the YAML file is not listed";
    EXPECT_EQ(ex.exports.size(), 1u);

    std::string why;
    auto kept = RpcConn::Connect(daemon_->nfs_port(), kNfsProgram, 3, &why);
    ASSERT_TRUE(kept != nullptr) << why;

    // Add an export.
    ASSERT_TRUE(daemon_->WriteConfig({{primary, "rw", "none"}, {added, "ro", "root"}}));
    ASSERT_TRUE(daemon_->Reload());
    ASSERT_TRUE(
        WaitForExports([&](const ExportRes& r) { return FindExport(r, added) != nullptr; }, &ex))
        << "SIGHUP did not add " << added;
    EXPECT_TRUE(FindExport(ex, primary) != nullptr);
    {
        auto m = RpcConn::Connect(daemon_->mount_port(), kMountProgram, 3, &why);
        ASSERT_TRUE(m != nullptr) << why;
        EXPECT_TRUE(MountIs(Mnt3(m->get(), added), MNT3_OK));
    }
    EXPECT_EQ(Null3(kept->get()), "") << "a connection opened before the reload keeps working";

    // Remove the original export.
    ASSERT_TRUE(daemon_->WriteConfig({{added, "ro", "root"}}));
    ASSERT_TRUE(daemon_->Reload());
    ASSERT_TRUE(
        WaitForExports([&](const ExportRes& r) { return FindExport(r, primary) == nullptr; }, &ex))
        << "SIGHUP did not remove " << primary;
    {
        auto m = RpcConn::Connect(daemon_->mount_port(), kMountProgram, 3, &why);
        ASSERT_TRUE(m != nullptr) << why;
        EXPECT_TRUE(MountRejected(Mnt3(m->get(), primary))) << "MNT of a removed export";
        EXPECT_TRUE(MountIs(Mnt3(m->get(), added), MNT3_OK));
    }
    EXPECT_EQ(Null3(kept->get()), "");

    // A broken config file on SIGHUP keeps the running configuration.
    std::string bad = "listeners: [this is not: valid\n";
    ASSERT_TRUE(WriteFile(daemon_->config_path(), bad, &why)) << why;
    ASSERT_TRUE(daemon_->Reload()) << "an invalid config on SIGHUP must not kill the daemon";
    auto m = RpcConn::Connect(daemon_->mount_port(), kMountProgram, 3, &why);
    ASSERT_TRUE(m != nullptr) << why;
    EXPECT_TRUE(MountIs(Mnt3(m->get(), added), MNT3_OK)) << "previous exports stay in force";
}

// RPCSEC_GSS is turned on at start only: a reload that brings the first krb5 export says
// that Kerberos mounts wait for a restart, and keeps serving the new exports.
TEST_F(ConfigReloadTest, AReloadThatAddsTheFirstKerberosExportSaysARestartIsNeeded) {
    std::string yaml, why;
    ASSERT_TRUE(ReadFile(daemon_->config_path(), &yaml, &why)) << why;
    const std::string rule = "clients: [\"*\"]}";
    const size_t at = yaml.find(rule);
    ASSERT_NE(at, std::string::npos) << yaml;
    yaml.replace(at, rule.size(), "clients: [{match: \"*\", sec: [krb5, sys]}]}");
    ASSERT_TRUE(WriteFile(daemon_->config_path(), yaml, &why)) << why;
    ASSERT_TRUE(daemon_->Reload());
    bool said = false;
    for (int i = 0; i < 50 && !said; ++i) {
        std::string log;
        said = ReadFile(daemon_->log_path(), &log) &&
               log.find("RPCSEC_GSS is off") != std::string::npos &&
               log.find("restarted") != std::string::npos;
        if (!said) ::usleep(100000);
    }
    EXPECT_TRUE(said) << daemon_->log_tail(20);
    auto m = RpcConn::Connect(daemon_->mount_port(), kMountProgram, 3, &why);
    ASSERT_TRUE(m != nullptr) << why;
    EXPECT_TRUE(MountIs(Mnt3(m->get(), daemon_->export_dir()), MNT3_OK)) << "AUTH_SYS still mounts";
}

// ---- exports(5) secure / insecure
// ---------------------------------------------------------------- Raw RPC over sockets whose
// source port the test chooses: the primary export is `secure` (the default), "open" is `insecure`.

class SecurePortTest : public DaemonTest {
  protected:
    SecurePortTest() { mount_client_ = false; }
    DaemonOptions Options() override {
        DaemonOptions o;
        o.export_options = "rw,no_root_squash";  // secure by default
        o.extra_exports.push_back({"open", "rw,no_root_squash,insecure"});
        return o;
    }

    static constexpr uint32_t kMnt = 100005, kNfs = 100003, kGetattr = 1;

    // One call on a fresh connection from a reserved or an unprivileged port.
    wire::Reply Call(uint16_t port, bool reserved, const wire::Call& call) {
        std::string why;
        auto c =
            reserved ? wire::Conn::OpenFromReservedPort(port, &why) : wire::Conn::Open(port, &why);
        wire::Reply bad;
        bad.parse_error = why;
        if (!c || !c->SendRecord(wire::EncodeCall(call), &why)) return bad;
        wire::Bytes rec;
        if (c->RecvRecord(&rec, 5000, &why) != wire::Conn::Recv::kOk) return bad;
        return wire::ParseReply(rec);
    }
    // MOUNT v3 MNT: the status, and the handle when it is MNT3_OK.
    uint32_t Mnt(const std::string& path, bool reserved, wire::Bytes* fh) {
        auto r = Call(daemon_->mount_port(), reserved,
                      wire::RootCall(1, kMnt, 3, 1, wire::XdrOut().str(path).take()));
        EXPECT_TRUE(r.parse_error.empty()) << r.parse_error;
        wire::XdrIn in(r.results);
        uint32_t status = ~0u;
        if (!in.u32(&status)) return ~0u;
        if (status == 0) {
            EXPECT_TRUE(in.opaque(fh, 64));
        }
        return status;
    }
    // NFSv3 GETATTR: the nfsstat3.
    uint32_t Getattr(const wire::Bytes& fh, bool reserved) {
        auto r = Call(daemon_->nfs_port(), reserved,
                      wire::RootCall(2, kNfs, 3, kGetattr, wire::XdrOut().opaque(fh).take()));
        EXPECT_TRUE(r.parse_error.empty()) << r.parse_error;
        wire::XdrIn in(r.results);
        uint32_t status = ~0u;
        in.u32(&status);
        return status;
    }
};

TEST_F(SecurePortTest, SecureExportServesOnlyReservedPorts) {
    NFSRDMAD_E2E_REQUIRE_ROOT();  // binding a port below 1024
    wire::Bytes fh, ignored;
    ASSERT_EQ(Mnt(daemon_->export_dir(), true, &fh), 0u) << "MNT from a reserved port";
    EXPECT_EQ(Getattr(fh, true), 0u) << "GETATTR from a reserved port";
    EXPECT_EQ(Mnt(daemon_->export_dir(), false, &ignored), uint32_t(MNT3ERR_ACCES))
        << "MNT from an unprivileged port (rpc.mountd: illegal port)";
    EXPECT_EQ(Getattr(fh, false), uint32_t(NFS3ERR_PERM))
        << "GETATTR from an unprivileged port (knfsd answers nfserr_perm)";
}

TEST_F(SecurePortTest, InsecureExportServesAnyPort) {
    NFSRDMAD_E2E_REQUIRE_ROOT();
    const std::string open = daemon_->extra_export_dir("open");
    for (bool reserved : {true, false}) {
        SCOPED_TRACE(reserved ? "reserved port" : "unprivileged port");
        wire::Bytes fh;
        ASSERT_EQ(Mnt(open, reserved, &fh), 0u);
        EXPECT_EQ(Getattr(fh, reserved), 0u);
    }
}

}  // namespace
}  // namespace nfsrdmad::e2e
