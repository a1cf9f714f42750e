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

}  // namespace
}  // namespace nfsrdmad::e2e
