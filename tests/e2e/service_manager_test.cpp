// systemd's notify protocol (sd_notify(3), daemon/service_manager.h), against a socket
// the test owns in place of systemd's: READY=1 once the daemon serves, RELOADING=1 and
// READY=1 around each SIGHUP (a rejected file says so in STATUS=), STOPPING=1 on SIGTERM,
// and WATCHDOG=1 pings at half the WATCHDOG_USEC it is given.
#include <sys/socket.h>
#include <sys/un.h>
#include <unistd.h>

#include <chrono>
#include <fstream>
#include <string>
#include <vector>

#include <gtest/gtest.h>

#include "tests/e2e/daemon_fixture.h"

namespace nfsrdmad::e2e {
namespace {

using Clock = std::chrono::steady_clock;

// An abstract-namespace datagram socket, as systemd's notify socket is one.
class NotifySocket {
  public:
    NotifySocket() {
        name_ = "nfsrdmad-e2e-notify-" + std::to_string(::getpid()) + "-" + std::to_string(++n_);
        fd_ = ::socket(AF_UNIX, SOCK_DGRAM | SOCK_CLOEXEC, 0);
        sockaddr_un a{};
        a.sun_family = AF_UNIX;
        name_.copy(a.sun_path + 1, sizeof a.sun_path - 2);
        const socklen_t len = socklen_t(offsetof(sockaddr_un, sun_path) + 1 + name_.size());
        ok_ = fd_ >= 0 && ::bind(fd_, reinterpret_cast<sockaddr*>(&a), len) == 0;
        timeval tv{0, 200000};
        if (ok_) ::setsockopt(fd_, SOL_SOCKET, SO_RCVTIMEO, &tv, sizeof tv);
    }
    ~NotifySocket() {
        if (fd_ >= 0) ::close(fd_);
    }
    bool ok() const { return ok_; }
    std::string env() const { return "NOTIFY_SOCKET=@" + name_; }

    // Messages until one contains `want` (it included), or `timeout`: empty if none did.
    std::vector<std::string> Until(const std::string& want,
                                   std::chrono::milliseconds timeout = std::chrono::seconds(10)) {
        std::vector<std::string> got;
        const auto deadline = Clock::now() + timeout;
        while (Clock::now() < deadline) {
            char buf[4096];
            ssize_t n = ::recv(fd_, buf, sizeof buf, 0);
            if (n <= 0) continue;
            got.emplace_back(buf, size_t(n));
            if (got.back().find(want) != std::string::npos) return got;
        }
        ADD_FAILURE() << "no notification with " << want << " within " << timeout.count()
                      << " ms; got " << got.size() << " other(s)";
        return {};
    }

    // Every message that arrives within `d`.
    std::vector<std::string> Collect(std::chrono::milliseconds d) {
        std::vector<std::string> got;
        const auto deadline = Clock::now() + d;
        while (Clock::now() < deadline) {
            char buf[4096];
            ssize_t n = ::recv(fd_, buf, sizeof buf, 0);
            if (n > 0) got.emplace_back(buf, size_t(n));
        }
        return got;
    }

  private:
    static inline int n_ = 0;
    std::string name_;
    int fd_ = -1;
    bool ok_ = false;
};

bool Has(const std::vector<std::string>& msgs, const std::string& what) {
    for (const auto& m : msgs)
        if (m.find(what) != std::string::npos) return true;
    return false;
}

class ServiceManagerTest : public ::testing::Test {
  protected:
    void StartDaemon(std::vector<std::string> env) {
        ASSERT_TRUE(sock_.ok());
        DaemonOptions o;
        o.use_config_file = true;
        o.extra_args = {"--rdma", "off"};
        o.env = std::move(env);
        o.env.push_back(sock_.env());
        daemon_ = std::make_unique<Daemon>(o);
        ASSERT_TRUE(daemon_->Start());
    }
    NotifySocket sock_;
    std::unique_ptr<Daemon> daemon_;
};

TEST_F(ServiceManagerTest, ReadyReloadingAndStopping) {
    StartDaemon({});
    if (HasFatalFailure()) return;
    auto ready = sock_.Until("READY=1");
    ASSERT_FALSE(ready.empty());
    EXPECT_NE(ready.back().find("STATUS=serving 1 export(s)"), std::string::npos) << ready.back();
    EXPECT_FALSE(Has(ready, "WATCHDOG=1")) << "no WATCHDOG_USEC, no pings";

    // A good file: RELOADING=1, then READY=1 again.
    ASSERT_TRUE(daemon_->Reload());
    auto reload = sock_.Until("READY=1");
    ASSERT_FALSE(reload.empty());
    EXPECT_NE(reload.front().find("RELOADING=1"), std::string::npos) << reload.front();
    EXPECT_NE(reload.front().find("MONOTONIC_USEC="), std::string::npos) << reload.front();
    EXPECT_EQ(reload.back().find("rejected"), std::string::npos) << reload.back();

    // A file that does not parse: the daemon keeps serving, and its status says so.
    { std::ofstream(daemon_->config_path()) << "exports: [ {path: \n"; }
    ASSERT_TRUE(daemon_->Reload());
    auto rejected = sock_.Until("READY=1");
    ASSERT_FALSE(rejected.empty());
    EXPECT_NE(rejected.front().find("RELOADING=1"), std::string::npos);
    EXPECT_NE(rejected.back().find("STATUS=serving 1 export(s); the last reload was rejected"),
              std::string::npos)
        << rejected.back();

    ASSERT_TRUE(daemon_->Stop());
    auto stopping = sock_.Until("STOPPING=1", std::chrono::seconds(1));
    EXPECT_FALSE(stopping.empty());
}

TEST_F(ServiceManagerTest, WatchdogPingsAtHalfTheInterval) {
    StartDaemon({"WATCHDOG_USEC=400000"});  // a ping every 200 ms
    if (HasFatalFailure()) return;
    ASSERT_FALSE(sock_.Until("READY=1").empty());
    // Everything that arrives in the 2 s after READY=1: about ten pings, never more than
    // the interval allows.
    auto msgs = sock_.Collect(std::chrono::seconds(2));
    size_t pings = 0;
    for (const auto& m : msgs) pings += m == "WATCHDOG=1";
    EXPECT_GE(pings, 3u);
    EXPECT_LE(pings, 12u);
    ASSERT_TRUE(daemon_->Stop());
}

}  // namespace
}  // namespace nfsrdmad::e2e
