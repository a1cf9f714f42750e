// What a hostile or merely unlucky client must not be able to do to the server's files
// (issue 8): the real daemon, driven by libnfs's raw calls and hand-built records, and the
// effects checked on the server's side (its descriptors in /proc, the local filesystem).
#include <dirent.h>
#include <fcntl.h>
#include <spawn.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cerrno>
#include <chrono>
#include <cstring>
#include <fstream>
#include <string>
#include <thread>
#include <vector>

#include <gtest/gtest.h>

#include "tests/e2e/daemon_fixture.h"
#include "tests/e2e/e2e_util.h"
#include "tests/e2e/raw_nfs.h"
#include "tests/e2e/rpc_wire.h"

extern char** environ;

namespace nfsrdmad::e2e {
namespace {

// Copies /bin/true to `path`, mode 0755: a binary the test can execute locally.
::testing::AssertionResult PutExecutable(const std::string& path) {
    std::string bin, why;
    if (!ReadFile("/bin/true", &bin, &why) || !WriteFile(path, bin, &why))
        return ::testing::AssertionFailure() << why;
    if (::chmod(path.c_str(), 0755) != 0)
        return ::testing::AssertionFailure() << "chmod " << path << ": " << std::strerror(errno);
    return ::testing::AssertionSuccess();
}

// Executes `path` locally and waits for it: success iff it ran and exited 0 (a file some
// process holds open for writing fails with ETXTBSY, "Text file busy").
::testing::AssertionResult RunsLocally(const std::string& path) {
    char* argv[] = {const_cast<char*>(path.c_str()), nullptr};
    pid_t pid = -1;
    if (int e = ::posix_spawn(&pid, path.c_str(), nullptr, nullptr, argv, environ); e != 0)
        return ::testing::AssertionFailure() << "executing " << path << ": " << std::strerror(e);
    int status = 0;
    while (::waitpid(pid, &status, 0) < 0 && errno == EINTR) {
    }
    if (!WIFEXITED(status) || WEXITSTATUS(status) != 0)
        return ::testing::AssertionFailure() << path << " did not exit 0 (status " << status << ")";
    return ::testing::AssertionSuccess();
}

// The open flags (fdinfo "flags:") of every descriptor of process `pid` that refers to the
// file at `path` (same device and inode).
std::vector<int> DescriptorsOf(pid_t pid, const std::string& path) {
    std::vector<int> flags;
    struct stat want {};
    if (::stat(path.c_str(), &want) != 0) {
        ADD_FAILURE() << "stat " << path << ": " << std::strerror(errno);
        return flags;
    }
    const std::string dir = "/proc/" + std::to_string(pid) + "/fd";
    DIR* d = ::opendir(dir.c_str());
    if (!d) {
        ADD_FAILURE() << "opendir " << dir << ": " << std::strerror(errno);
        return flags;
    }
    while (dirent* e = ::readdir(d)) {
        if (e->d_name[0] == '.') continue;
        struct stat st {};
        if (::stat((dir + "/" + e->d_name).c_str(), &st) != 0) continue;  // closed meanwhile
        if (st.st_dev != want.st_dev || st.st_ino != want.st_ino) continue;
        std::ifstream info("/proc/" + std::to_string(pid) + "/fdinfo/" + e->d_name);
        std::string key, value;
        int f = -1;
        while (info >> key >> value) {
            if (key == "flags:") f = static_cast<int>(std::stoul(value, nullptr, 8));
        }
        flags.push_back(f);
    }
    ::closedir(d);
    return flags;
}

bool AnyOpenForWriting(const std::vector<int>& flags) {
    for (int f : flags) {
        if (f < 0 || (f & O_ACCMODE) != O_RDONLY) return true;
    }
    return false;
}

// ---- READ opens nothing it does not need ---------------------------------------------------

class ReadOnlyExportTest : public DaemonTest {
  protected:
    ReadOnlyExportTest() { mount_client_ = false; }
    DaemonOptions Options() override {
        DaemonOptions o;
        o.extra_exports.push_back({"ro_exp", "ro,no_root_squash"});
        return o;
    }
};

TEST_F(ReadOnlyExportTest, ReadingABinaryLeavesItExecutable) {
    NFSRDMAD_E2E_REQUIRE_ROOT();
    const std::string dir = daemon_->extra_export_dir("ro_exp");
    const std::string bin = dir + "/true";
    ASSERT_TRUE(PutExecutable(bin));
    std::string content, why;
    ASSERT_TRUE(ReadFile(bin, &content, &why)) << why;

    Fh root;
    ASSERT_NO_FATAL_FAILURE(FetchRootHandle(&root, dir));
    auto c = RpcConn::Connect(daemon_->nfs_port(), kNfsProgram, 3, &why, 0, 0);
    ASSERT_TRUE(c != nullptr) << why;
    LookupRes f = Lookup(c->get(), root, "true");
    ASSERT_TRUE(NfsIs(f, NFS3_OK));
    ReadRes rd = Read(c->get(), f.fh, 0, static_cast<uint32_t>(content.size()));
    ASSERT_TRUE(NfsIs(rd, NFS3_OK));
    EXPECT_EQ(rd.data, content);
    // A WRITE the export refuses must not open the file for writing either.
    EXPECT_TRUE(NfsIs(Write(c->get(), f.fh, 0, "XX", FILE_SYNC), NFS3ERR_ROFS));

    EXPECT_FALSE(AnyOpenForWriting(DescriptorsOf(daemon_->pid(), bin)))
        << "the daemon holds the file of a read-only export open for writing";
    EXPECT_TRUE(RunsLocally(bin)) << "a READ over NFS made the server's binary unexecutable";
}

class RefusedClientTest : public DaemonTest {
  protected:
    DaemonOptions Options() override {
        DaemonOptions o;
        o.use_config_file = true;
        return o;
    }
    // Rewrites the configuration so that no rule admits 127.0.0.1 and waits until the
    // daemon refuses `probe` (a handle it served before).
    void RefuseLoopback(const Fh& probe) {
        ASSERT_TRUE(daemon_->WriteConfig({{daemon_->export_dir(), "rw", "none", {"192.0.2.1"}}}));
        ASSERT_TRUE(daemon_->Reload());
        const auto deadline = std::chrono::steady_clock::now() + std::chrono::seconds(10);
        for (;;) {
            GetattrRes g = Getattr(rpc(), probe);
            if (g.rpc_error.empty() && g.status == NFS3ERR_ACCES) return;
            ASSERT_LT(std::chrono::steady_clock::now(), deadline)
                << "the reloaded exports never refused 127.0.0.1 (last GETATTR: "
                << (g.rpc_error.empty() ? NfsStatName(g.status) : g.rpc_error) << ")";
            std::this_thread::sleep_for(std::chrono::milliseconds(50));
        }
    }
};

TEST_F(RefusedClientTest, ReadOfARefusedClientOpensNothing) {
    NFSRDMAD_E2E_REQUIRE_ROOT();
    const std::string bin = disk("true");
    ASSERT_TRUE(PutExecutable(bin));
    LookupRes f = Lookup(rpc(), root_, "true");
    ASSERT_TRUE(NfsIs(f, NFS3_OK));
    ASSERT_NO_FATAL_FAILURE(RefuseLoopback(f.fh));

    ReadRes rd = Read(rpc(), f.fh, 0, 4096);
    EXPECT_TRUE(NfsIs(rd, NFS3ERR_ACCES));
    EXPECT_TRUE(rd.data.empty());
    WriteRes wr = Write(rpc(), f.fh, 0, "XX", FILE_SYNC);
    EXPECT_TRUE(NfsIs(wr, NFS3ERR_ACCES));
    CommitRes cm = Commit(rpc(), f.fh, 0, 0);
    EXPECT_TRUE(NfsIs(cm, NFS3ERR_ACCES));

    const std::vector<int> open_fds = DescriptorsOf(daemon_->pid(), bin);
    EXPECT_TRUE(open_fds.empty()) << open_fds.size()
                                  << " descriptor(s) of the file stay open in the daemon";
    EXPECT_TRUE(RunsLocally(bin)) << "a refused READ made the server's binary unexecutable";
}

// ---- READDIR / READDIRPLUS ----------------------------------------------------------------

constexpr uint32_t kNfsReaddir = 16, kNfsReaddirplus = 17;

class ListingTest : public DaemonTest {
  protected:
    // The results of one hand-built call (cookie 0, zero verifier, then `counts`), so that
    // the test sees the exact size of the reply.
    wire::Reply ListRaw(uint32_t proc, const Fh& dir, std::initializer_list<uint32_t> counts) {
        wire::XdrOut args;
        const uint8_t verf[8] = {};
        args.opaque(dir.data.data(), dir.size()).u64(0).raw(verf, sizeof verf);
        for (uint32_t c : counts) args.u32(c);
        return wire::RoundTrip(daemon_->nfs_port(), wire::EncodeCall(wire::RootCall(
                                                        proc, kNfsProgram, 3, proc, args.take())));
    }
};

TEST_F(ListingTest, HugeCountsAreClampedToDtpref) {
    // 3000 entries of 84 bytes each: far more than one reply may carry.
    ASSERT_EQ(::mkdir(disk("big").c_str(), 0755), 0);
    const std::string pad(56, 'n');
    for (int i = 0; i < 3000; ++i) {
        std::string why;
        ASSERT_TRUE(WriteFile(disk("big/" + pad + std::to_string(1000 + i)), "", &why)) << why;
    }
    FsinfoRes info = Fsinfo(rpc(), root_);
    ASSERT_TRUE(NfsIs(info, NFS3_OK));
    const uint32_t dtpref = info.ok.dtpref;
    ASSERT_GT(dtpref, 0u);
    LookupRes big = Lookup(rpc(), root_, "big");
    ASSERT_TRUE(NfsIs(big, NFS3_OK));

    for (uint32_t proc : {kNfsReaddir, kNfsReaddirplus}) {
        SCOPED_TRACE(proc == kNfsReaddir ? "READDIR" : "READDIRPLUS");
        wire::Reply r = proc == kNfsReaddir ? ListRaw(proc, big.fh, {0xffffffffu})
                                            : ListRaw(proc, big.fh, {0xffffffffu, 0xffffffffu});
        ASSERT_TRUE(r.parse_error.empty()) << r.parse_error;
        ASSERT_EQ(r.accept_stat, wire::kSuccess) << r.Describe();
        uint32_t status = 0xffffffffu;
        ASSERT_TRUE(wire::XdrIn(r.results).u32(&status));
        EXPECT_EQ(status, uint32_t{NFS3_OK});
        EXPECT_LE(r.results.size(), dtpref) << "a count of 4 GiB must not buy more than dtpref";
        EXPECT_GT(r.results.size(), dtpref / 2) << "the reply should still be filled";
    }

    // Paging with such counts still delivers every entry ("." and ".." too).
    size_t pages = 0;
    ReaddirRes all = ReaddirAll(rpc(), big.fh, 0xffffffffu, &pages);
    ASSERT_TRUE(NfsIs(all, NFS3_OK));
    EXPECT_EQ(all.entries.size(), 3002u);
    EXPECT_GT(pages, 1u);
    ReaddirRes plus = ReaddirplusAll(rpc(), big.fh, 0xffffffffu, 0xffffffffu);
    ASSERT_TRUE(NfsIs(plus, NFS3_OK));
    EXPECT_EQ(plus.entries.size(), 3002u);

    // A count too small for even one entry (RFC 1813 §3.3.16, §3.3.17).
    EXPECT_TRUE(NfsIs(Readdir(rpc(), big.fh, 0, Verf8{}, 16), NFS3ERR_TOOSMALL));
    EXPECT_TRUE(NfsIs(Readdirplus(rpc(), big.fh, 0, Verf8{}, 16, 16), NFS3ERR_TOOSMALL));
}

TEST_F(ListingTest, RefusedListingCarriesNoDirectoryAttributes) {
    NFSRDMAD_E2E_REQUIRE_ROOT();
    ASSERT_EQ(::mkdir(disk("private").c_str(), 0700), 0);
    std::string why;
    ASSERT_TRUE(WriteFile(disk("private/f"), "x", &why)) << why;
    LookupRes dir = Lookup(rpc(), root_, "private");
    ASSERT_TRUE(NfsIs(dir, NFS3_OK));
    auto other = RpcConn::Connect(daemon_->nfs_port(), kNfsProgram, 3, &why, 4321, 4321);
    ASSERT_TRUE(other != nullptr) << why;

    ReaddirRes r = Readdir(other->get(), dir.fh, 0, Verf8{}, 4096);
    EXPECT_TRUE(NfsIs(r, NFS3ERR_ACCES));
    EXPECT_FALSE(r.has_dir_attr) << "READDIR refused, yet the directory's attributes follow";
    ReaddirRes p = Readdirplus(other->get(), dir.fh, 0, Verf8{}, 4096, 16384);
    EXPECT_TRUE(NfsIs(p, NFS3ERR_ACCES));
    EXPECT_FALSE(p.has_dir_attr) << "READDIRPLUS refused, yet the directory's attributes follow";

    // The owner still gets them, and so does a failure that is not a refusal.
    ReaddirRes mine = Readdir(rpc(), dir.fh, 0, Verf8{}, 4096);
    ASSERT_TRUE(NfsIs(mine, NFS3_OK));
    EXPECT_TRUE(mine.has_dir_attr);
    ReaddirRes small = Readdir(rpc(), dir.fh, 0, Verf8{}, 16);
    ASSERT_TRUE(NfsIs(small, NFS3ERR_TOOSMALL));
    EXPECT_TRUE(small.has_dir_attr);
}

// ---- ".." never leaves the export ------------------------------------------------------------

class HardeningTest : public DaemonTest {};

TEST_F(HardeningTest, DotDotOfADirectoryMovedOutOfTheExportIsStale) {
    ASSERT_EQ(::mkdir(disk("d").c_str(), 0755), 0);
    ASSERT_EQ(::mkdir(disk("d/sub").c_str(), 0755), 0);
    LookupRes d = Lookup(rpc(), root_, "d");
    ASSERT_TRUE(NfsIs(d, NFS3_OK));
    LookupRes sub = Lookup(rpc(), d.fh, "sub");
    ASSERT_TRUE(NfsIs(sub, NFS3_OK));
    // A local user moves d out of the export (same filesystem).
    ASSERT_EQ(::rename(disk("d").c_str(), (daemon_->base_dir() + "/outside").c_str()), 0);

    for (const Fh* start : {&sub.fh, &d.fh}) {
        Fh cur = *start;
        for (int step = 0; step < 4; ++step) {
            LookupRes up = Lookup(rpc(), cur, "..");
            ASSERT_TRUE(NfsIs(up, NFS3ERR_STALE))
                << "step " << step << ": \"..\" led out of the export";
            EXPECT_TRUE(up.fh.empty());
        }
    }
    ReaddirRes list = ReaddirplusAll(rpc(), sub.fh, 4096, 16384);
    ASSERT_TRUE(NfsIs(list, NFS3_OK));
    bool saw_dotdot = false;
    for (const DirEntry& e : list.entries) {
        if (e.name != "..") continue;
        saw_dotdot = true;
        EXPECT_FALSE(e.has_fh) << "READDIRPLUS handed out a handle outside the export";
        EXPECT_FALSE(e.has_attr);
    }
    EXPECT_TRUE(saw_dotdot);

    // Inside the export ".." still works.
    ASSERT_EQ(::mkdir(disk("in").c_str(), 0755), 0);
    LookupRes in = Lookup(rpc(), root_, "in");
    ASSERT_TRUE(NfsIs(in, NFS3_OK));
    LookupRes up = Lookup(rpc(), in.fh, "..");
    ASSERT_TRUE(NfsIs(up, NFS3_OK));
    EXPECT_EQ(up.fh, root_);
}

// ---- SETATTR of a symlink's mode -------------------------------------------------------------

TEST_F(HardeningTest, SymlinkModeChangeIsRefusedNotIgnored) {
    NFSRDMAD_E2E_REQUIRE_ROOT();
    ASSERT_EQ(::symlink("target", disk("sl").c_str()), 0);
    ASSERT_EQ(::lchown(disk("sl").c_str(), 1234, 1234), 0);
    LookupRes sl = Lookup(rpc(), root_, "sl");
    ASSERT_TRUE(NfsIs(sl, NFS3_OK));
    std::string why;
    auto stranger = RpcConn::Connect(daemon_->nfs_port(), kNfsProgram, 3, &why, 4321, 4321);
    ASSERT_TRUE(stranger != nullptr) << why;
    auto owner = RpcConn::Connect(daemon_->nfs_port(), kNfsProgram, 3, &why, 1234, 1234);
    ASSERT_TRUE(owner != nullptr) << why;

    EXPECT_TRUE(NfsIs(Setattr(stranger->get(), sl.fh, SetAttrs::Mode(0600)), NFS3ERR_PERM));
    EXPECT_TRUE(NfsIs(Setattr(owner->get(), sl.fh, SetAttrs::Mode(0600)), NFS3ERR_NOTSUPP));
    EXPECT_TRUE(NfsIs(Setattr(rpc(), sl.fh, SetAttrs::Mode(0600)), NFS3ERR_NOTSUPP));
    struct stat st;
    ASSERT_TRUE(Lstat(disk("sl"), &st, &why)) << why;
    EXPECT_EQ(st.st_mode & 07777, 0777u);
}

}  // namespace
}  // namespace nfsrdmad::e2e
