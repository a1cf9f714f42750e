// The control socket and the admin commands (daemon/control.h, daemon/admin.h): the real
// binary's `stats`, `exports`, `clients` and `log-level` against a running daemon, read
// as the JSON they print (--json), and the socket's guards: root only, bounded requests,
// gone when the daemon stops.
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/un.h>
#include <sys/wait.h>
#include <unistd.h>

#include <nlohmann/json.hpp>

#include <cstdio>
#include <cstdlib>
#include <fstream>
#include <iterator>
#include <string>

#include <gtest/gtest.h>

#include "tests/e2e/daemon_fixture.h"
#include "tests/e2e/raw_nfs.h"

namespace nfsrdmad::e2e {
namespace {

using json = nlohmann::json;

struct AdminRun {
    int status = -1;  // exit status
    std::string out;
};

class ControlTest : public DaemonTest {
  protected:
    std::string Socket() const { return daemon_->state_dir() + "/control.sock"; }

    // `nfsrdmad ARGS --state-dir STATE`, stdout captured (stderr to the test's).
    AdminRun Admin(const std::string& args) {
        std::string why;
        const std::string bin = DaemonBinary(&why);
        EXPECT_FALSE(bin.empty()) << why;
        AdminRun r;
        const std::string cmd =
            "'" + bin + "' " + args + " --state-dir '" + daemon_->state_dir() + "'";
        FILE* p = ::popen(cmd.c_str(), "r");
        if (!p) return r;
        char buf[4096];
        for (size_t n; (n = std::fread(buf, 1, sizeof buf, p)) > 0;) r.out.append(buf, n);
        const int st = ::pclose(p);
        r.status = WIFEXITED(st) ? WEXITSTATUS(st) : -1;
        return r;
    }
    json AdminJson(const std::string& args) {
        AdminRun r = Admin(args + " --json");
        EXPECT_EQ(r.status, 0) << args;
        json j = json::parse(r.out, nullptr, false);
        EXPECT_FALSE(j.is_discarded()) << r.out;
        return j;
    }
    static double Sample(const json& stats, const std::string& name, const std::string& op) {
        for (const auto& f : stats["metrics"])
            if (f["name"] == name)
                for (const auto& s : f["samples"])
                    if (s["labels"].value("operation", "") == op &&
                        s["labels"].value("version", "") == "3" &&
                        s["labels"].value("program", "") == "nfs")
                        return s["value"].get<double>();
        return 0;
    }
    // One raw request on the socket; the daemon's answer (until it closes).
    std::string Raw(const std::string& bytes) {
        int fd = ::socket(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0);
        sockaddr_un a{};
        a.sun_family = AF_UNIX;
        Socket().copy(a.sun_path, sizeof a.sun_path - 1);
        EXPECT_EQ(::connect(fd, reinterpret_cast<sockaddr*>(&a), sizeof a), 0);
        EXPECT_EQ(::send(fd, bytes.data(), bytes.size(), MSG_NOSIGNAL), ssize_t(bytes.size()));
        ::shutdown(fd, SHUT_WR);
        std::string out;
        char buf[4096];
        for (ssize_t n; (n = ::recv(fd, buf, sizeof buf, 0)) > 0;) out.append(buf, size_t(n));
        ::close(fd);
        return out;
    }
};

TEST_F(ControlTest, StatsCountTheCallsMade) {
    const json before = AdminJson("stats");
    for (int i = 0; i < 5; ++i) ASSERT_TRUE(NfsIs(Getattr(rpc(), root_), NFS3_OK));
    ASSERT_TRUE(NfsIs(Lookup(rpc(), root_, "absent"), NFS3ERR_NOENT));
    const json after = AdminJson("stats");
    EXPECT_EQ(Sample(after, "nfsrdmad_calls_total", "GETATTR") -
                  Sample(before, "nfsrdmad_calls_total", "GETATTR"),
              5);
    EXPECT_EQ(Sample(after, "nfsrdmad_calls_total", "LOOKUP") -
                  Sample(before, "nfsrdmad_calls_total", "LOOKUP"),
              1);
    // The table form names the operations it counted.
    AdminRun table = Admin("stats");
    EXPECT_EQ(table.status, 0);
    EXPECT_NE(table.out.find("nfs v3:"), std::string::npos) << table.out;
    EXPECT_NE(table.out.find("GETATTR"), std::string::npos) << table.out;
}

TEST_F(ControlTest, ExportsShowTheRulesInForce) {
    const json j = AdminJson("exports");
    ASSERT_EQ(j["exports"].size(), 1u) << j.dump();
    const json& e = j["exports"][0];
    EXPECT_EQ(e["path"], daemon_->export_dir());
    ASSERT_EQ(e["rules"].size(), 1u);
    const json& r = e["rules"][0];
    EXPECT_EQ(r["clients"], "*");
    EXPECT_EQ(r["access"], "rw");
    EXPECT_EQ(r["squash"], "none");
    EXPECT_EQ(r["secure"], false);
    EXPECT_EQ(r["sec"], json::array({"sys"}));
    EXPECT_NE(e["fsid"].get<uint32_t>(), 0u);
}

TEST_F(ControlTest, ClientsListConnectionsAndMounts) {
    const json j = AdminJson("clients");
    // The fixture's libnfs mount holds one NFS connection.
    size_t tcp = 0;
    for (const auto& c : j["connections"]) tcp += c["transport"] == "tcp";
    EXPECT_GE(tcp, 1u) << j.dump();
    bool mounted = false;
    for (const auto& m : j["mounts"]) mounted |= m["path"] == daemon_->export_dir();
    EXPECT_TRUE(mounted) << j.dump();
}

TEST_F(ControlTest, LogLevelChangesAtRunTimeAndRefusesUnknownWords) {
    AdminRun r = Admin("log-level warn --json");
    ASSERT_EQ(r.status, 0);
    json j = json::parse(r.out);
    EXPECT_EQ(j["level"], "warning");
    EXPECT_EQ(j["was"], "debug");  // the fixture starts with --log-level debug
    j = json::parse(Admin("log-level debug --json").out);
    EXPECT_EQ(j["level"], "debug");
    EXPECT_EQ(j["was"], "warning");
    EXPECT_EQ(Admin("log-level loud").status, 1);
}

TEST_F(ControlTest, SocketIsRootsAndBoundsWhatItReads) {
    struct stat st {};
    ASSERT_EQ(::stat(Socket().c_str(), &st), 0);
    EXPECT_TRUE(S_ISSOCK(st.st_mode));
    EXPECT_EQ(st.st_mode & 0777, 0600u);
    EXPECT_EQ(st.st_uid, 0u);

    // Another user cannot connect (the socket's mode), and says so.
    pid_t pid = ::fork();
    ASSERT_GE(pid, 0);
    if (pid == 0) {
        if (::setgid(65534) != 0 || ::setuid(65534) != 0) ::_exit(99);
        std::string why;
        const std::string bin = DaemonBinary(&why);
        ::execl(bin.c_str(), bin.c_str(), "stats", "--state-dir", daemon_->state_dir().c_str(),
                static_cast<char*>(nullptr));
        ::_exit(98);
    }
    int st2 = 0;
    ASSERT_EQ(::waitpid(pid, &st2, 0), pid);
    ASSERT_TRUE(WIFEXITED(st2));
    EXPECT_EQ(WEXITSTATUS(st2), 1);

    // A request longer than 4096 bytes without a newline, an unknown one, bad UTF-8: an
    // error each, and the daemon still answers.
    json big = json::parse(Raw(std::string(10000, 'x')), nullptr, false);
    ASSERT_FALSE(big.is_discarded());
    EXPECT_TRUE(big.contains("error"));
    json unknown = json::parse(Raw("reboot\n"), nullptr, false);
    ASSERT_FALSE(unknown.is_discarded());
    EXPECT_TRUE(unknown.contains("error"));
    json bad = json::parse(Raw("\xff\xfe\n"), nullptr, false);
    ASSERT_FALSE(bad.is_discarded());
    EXPECT_TRUE(bad.contains("error"));
    json ok = json::parse(Raw("exports\n"), nullptr, false);
    ASSERT_FALSE(ok.is_discarded());
    EXPECT_EQ(ok["exports"].size(), 1u);
}

// A second daemon given the same state directory is refused at start (vfs::StateDirLock),
// says which daemon holds it, and leaves the first one's socket alone.
TEST_F(ControlTest, ASecondDaemonOnTheSameStateDirIsRefused) {
    std::string why;
    const std::string bin = DaemonBinary(&why);
    ASSERT_FALSE(bin.empty()) << why;
    const auto ports = PickFreePorts(2);
    const std::string out = daemon_->state_dir() + "/../second.log";
    const std::string cmd = "timeout 20 '" + bin + "' --no-rpcbind --rdma off --tcp 127.0.0.1:" +
                            std::to_string(ports[0]) + " --mount-port " + std::to_string(ports[1]) +
                            " --state-dir '" + daemon_->state_dir() + "' --export '" +
                            daemon_->export_dir() + "' >'" + out + "' 2>&1";
    const int status = std::system(cmd.c_str());
    ASSERT_TRUE(WIFEXITED(status));
    EXPECT_EQ(WEXITSTATUS(status), 1);  // not 124: it did not start serving
    std::ifstream log(out);
    const std::string text((std::istreambuf_iterator<char>(log)), std::istreambuf_iterator<char>());
    EXPECT_NE(text.find("is in use by another nfsrdmad, pid " + std::to_string(daemon_->pid())),
              std::string::npos)
        << text;
    json ok = json::parse(Raw("exports\n"), nullptr, false);
    ASSERT_FALSE(ok.is_discarded());
    EXPECT_EQ(ok["exports"].size(), 1u);  // still the first daemon, still there
}

TEST_F(ControlTest, SocketGoesWithTheDaemon) {
    ASSERT_EQ(::access(Socket().c_str(), F_OK), 0);
    const std::string path = Socket();
    client_.reset();
    ASSERT_TRUE(daemon_->Stop());
    EXPECT_NE(::access(path.c_str(), F_OK), 0);
    AdminRun r = Admin("stats");
    EXPECT_EQ(r.status, 1);
}

}  // namespace
}  // namespace nfsrdmad::e2e
