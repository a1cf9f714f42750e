#include "tests/e2e/daemon_fixture.h"
#include "tests/e2e/e2e_util.h"

#include <arpa/inet.h>
#include <dirent.h>
#include <fcntl.h>
#include <netinet/in.h>
#include <signal.h>
#include <stdlib.h>
#include <sys/prctl.h>
#include <sys/resource.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cerrno>
#include <chrono>
#include <cstdio>
#include <cstring>
#include <deque>
#include <filesystem>
#include <fstream>
#include <iostream>
#include <sstream>
#include <thread>

// libnfs.h must come before libnfs-raw.h.
#include <nfsc/libnfs.h>

#include <nfsc/libnfs-raw.h>

namespace nfsrdmad::e2e {

namespace {

using Clock = std::chrono::steady_clock;

constexpr auto kReadyTimeout = std::chrono::seconds(10);
constexpr auto kStopTimeout = std::chrono::seconds(10);
constexpr int kStartAttempts = 3;

// The daemon may close connections under libnfs's feet (restart, bad-input tests): a write to a
// closed socket must fail with EPIPE instead of killing the test process. The daemon itself
// gets SIGPIPE back to SIG_DFL in the child before exec.
const bool kSigpipeIgnored = [] {
    ::signal(SIGPIPE, SIG_IGN);
    return true;
}();

std::string ErrnoText(const std::string& what) {
    return what + ": " + std::strerror(errno);
}

std::string DescribeWaitStatus(int status) {
    std::ostringstream o;
    if (WIFEXITED(status)) {
        o << "exited with status " << WEXITSTATUS(status);
    } else if (WIFSIGNALED(status)) {
        o << "killed by signal " << WTERMSIG(status) << " (" << strsignal(WTERMSIG(status)) << ")"
          << (WCOREDUMP(status) ? ", core dumped" : "");
    } else {
        o << "unknown wait status 0x" << std::hex << status;
    }
    return o.str();
}

std::string ShellQuote(const std::string& s) {
    std::string out = "'";
    for (char c : s) {
        if (c == '\'')
            out += "'\\''";
        else
            out += c;
    }
    return out + "'";
}

void AppendToLog(const std::string& path, const std::string& line) {
    std::ofstream f(path, std::ios::app);
    f << line << "\n";
}

}  // namespace

std::string DaemonBinary(std::string* why) {
    const char* name = kBinEnv;
    if (const char* o = std::getenv(kDaemonOverrideEnv); o != nullptr && *o != '\0')
        name = kDaemonOverrideEnv;
    const char* v = std::getenv(name);
    if (v == nullptr || *v == '\0') {
        *why = std::string(kBinEnv) +
               " is not set: it must hold the path of the nfsrdmad binary under test "
               "(CTest sets it to $<TARGET_FILE:nfsrdmad>; when running by hand: " +
               kBinEnv + "=/path/to/build/daemon/nfsrdmad ./e2e_...)";
        return "";
    }
    struct stat st {};
    if (::stat(v, &st) != 0) {
        *why = std::string(name) + "=" + v + " does not exist: " + std::strerror(errno);
        return "";
    }
    if (!S_ISREG(st.st_mode) || ::access(v, X_OK) != 0) {
        *why = std::string(name) + "=" + v + " is not an executable regular file";
        return "";
    }
    return v;
}

std::vector<uint16_t> PickFreePorts(size_t count) {
    std::vector<int> fds;
    std::vector<uint16_t> ports;
    for (size_t i = 0; i < count; ++i) {
        int fd = ::socket(AF_INET, SOCK_STREAM | SOCK_CLOEXEC, 0);
        if (fd < 0) {
            std::cerr << ErrnoText("socket") << "\n";
            std::abort();
        }
        sockaddr_in a{};
        a.sin_family = AF_INET;
        a.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
        a.sin_port = 0;
        if (::bind(fd, reinterpret_cast<sockaddr*>(&a), sizeof a) != 0) {
            std::cerr << ErrnoText("bind 127.0.0.1:0") << "\n";
            std::abort();
        }
        socklen_t len = sizeof a;
        if (::getsockname(fd, reinterpret_cast<sockaddr*>(&a), &len) != 0) {
            std::cerr << ErrnoText("getsockname") << "\n";
            std::abort();
        }
        fds.push_back(fd);
        ports.push_back(ntohs(a.sin_port));
    }
    for (int fd : fds) ::close(fd);
    return ports;
}

std::string MakeTempDir(const std::string& tag) {
    std::string tmpl = "/tmp/nfsrdmad-e2e-" + tag + "-XXXXXX";
    std::vector<char> buf(tmpl.begin(), tmpl.end());
    buf.push_back('\0');
    if (::mkdtemp(buf.data()) == nullptr) {
        std::cerr << ErrnoText("mkdtemp " + tmpl) << "\n";
        std::abort();
    }
    char* real = ::realpath(buf.data(), nullptr);
    if (real == nullptr) {
        std::cerr << ErrnoText("realpath") << "\n";
        std::abort();
    }
    std::string out = real;
    std::free(real);
    return out;
}

bool WriteFile(const std::string& path, const std::string& content, std::string* why) {
    int fd = ::open(path.c_str(), O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0644);
    if (fd < 0) {
        if (why) *why = ErrnoText("open " + path);
        return false;
    }
    size_t off = 0;
    while (off < content.size()) {
        ssize_t n = ::write(fd, content.data() + off, content.size() - off);
        if (n < 0 && errno == EINTR) continue;
        if (n <= 0) {
            if (why) *why = ErrnoText("write " + path);
            ::close(fd);
            return false;
        }
        off += static_cast<size_t>(n);
    }
    ::close(fd);
    return true;
}

bool ReadFile(const std::string& path, std::string* out, std::string* why) {
    int fd = ::open(path.c_str(), O_RDONLY | O_CLOEXEC);
    if (fd < 0) {
        if (why) *why = ErrnoText("open " + path);
        return false;
    }
    out->clear();
    char buf[65536];
    for (;;) {
        ssize_t n = ::read(fd, buf, sizeof buf);
        if (n < 0 && errno == EINTR) continue;
        if (n < 0) {
            if (why) *why = ErrnoText("read " + path);
            ::close(fd);
            return false;
        }
        if (n == 0) break;
        out->append(buf, static_cast<size_t>(n));
    }
    ::close(fd);
    return true;
}

std::string TailFile(const std::string& path, size_t lines) {
    std::ifstream f(path);
    if (!f) return "";
    std::deque<std::string> q;
    std::string line;
    while (std::getline(f, line)) {
        q.push_back(line);
        if (q.size() > lines) q.pop_front();
    }
    std::string out;
    for (auto& l : q) out += l + "\n";
    return out;
}

bool CanConnect(uint16_t port) {
    int fd = ::socket(AF_INET, SOCK_STREAM | SOCK_CLOEXEC, 0);
    if (fd < 0) return false;
    sockaddr_in a{};
    a.sin_family = AF_INET;
    a.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
    a.sin_port = htons(port);
    bool ok = ::connect(fd, reinterpret_cast<sockaddr*>(&a), sizeof a) == 0;
    ::close(fd);
    return ok;
}

bool IsRoot() {
    return ::geteuid() == 0;
}

// ---------------------------------------------------------------------------------------------
// Daemon

Daemon::Daemon(DaemonOptions opts) : opts_(std::move(opts)) {
    base_ = MakeTempDir("d");
    export_ = base_ + "/export";
    state_ = base_ + "/state";
    log_ = base_ + "/daemon.log";
    config_ = base_ + "/nfsrdmad.yaml";
    config_exports_ = {ConfigExport{export_, "rw", "none"}};
    if (::mkdir(export_.c_str(), 0755) != 0 || ::mkdir(state_.c_str(), 0700) != 0) {
        std::cerr << ErrnoText("mkdir under " + base_) << "\n";
        std::abort();
    }
    // mkdir honours the umask; make the export mode deterministic.
    ::chmod(export_.c_str(), 0755);
    for (const auto& e : opts_.extra_exports) {
        std::string p = base_ + "/" + e.name;
        if (::mkdir(p.c_str(), 0755) != 0) {
            std::cerr << ErrnoText("mkdir " + p) << "\n";
            std::abort();
        }
        ::chmod(p.c_str(), 0755);
    }
}

Daemon::~Daemon() {
    if (pid_ > 0) KillHard();
    if (std::getenv("NFSRDMAD_E2E_KEEP") != nullptr) {
        std::cerr << "[e2e] keeping " << base_ << " (NFSRDMAD_E2E_KEEP is set)\n";
        return;
    }
    std::error_code ec;
    std::filesystem::remove_all(base_, ec);
}

std::string Daemon::on_disk(const std::string& rel) const {
    if (rel.empty() || rel == "/") return export_;
    if (rel[0] == '/') return export_ + rel;
    return export_ + "/" + rel;
}

::testing::AssertionResult Daemon::Start() {
    if (pid_ > 0)
        return ::testing::AssertionFailure() << "daemon already running (pid " << pid_ << ")";
    ::testing::AssertionResult last = ::testing::AssertionFailure() << "not started";
    for (int attempt = 1; attempt <= kStartAttempts; ++attempt) {
        bool retryable = false;
        last = StartOnce(&retryable);
        if (last || !retryable) return last;
        std::cerr << "[e2e] daemon start attempt " << attempt
                  << " failed, retrying with new ports\n";
    }
    return last;
}

::testing::AssertionResult Daemon::StartOnce(bool* retryable) {
    *retryable = false;
    std::string why;
    std::string bin = DaemonBinary(&why);
    if (bin.empty()) return ::testing::AssertionFailure() << why;

    auto ports = PickFreePorts(2);
    nfs_port_ = ports[0];
    mount_port_ = ports[1];

    std::vector<std::string> args;
    if (opts_.use_config_file) {
        auto written = WriteConfig(config_exports_);
        if (!written) return written;
        args = {bin, "--foreground", "--log-level", "debug", "--config", config_};
    } else {
        args = {bin,
                "--foreground",
                "--log-level",
                "debug",
                "--state-dir",
                state_,
                "--tcp",
                "127.0.0.1:" + std::to_string(nfs_port_),
                "--mount-port",
                std::to_string(mount_port_),
                "--export",
                export_ + "=" + opts_.export_options};
        for (const auto& e : opts_.extra_exports) {
            args.push_back("--export");
            args.push_back(base_ + "/" + e.name + "=" + e.options);
        }
        if (!opts_.config_yaml.empty()) {
            const std::string extra = base_ + "/extra.yaml";
            std::string why;
            if (!WriteFile(extra, opts_.config_yaml + "\n", &why))
                return ::testing::AssertionFailure() << why;
            args.push_back("--config");
            args.push_back(extra);
        }
    }
    // The tests name the ports; registering with a system rpcbind would only make
    // daemons of tests that run at once meet there (tools_test.sh tests rpcbind).
    args.push_back("--no-rpcbind");
    for (const auto& a : opts_.extra_args) args.push_back(a);

    cmdline_.clear();
    for (const auto& a : args) cmdline_ += (cmdline_.empty() ? "" : " ") + ShellQuote(a);
    AppendToLog(log_, "=== e2e: starting: " + cmdline_);

    int logfd = ::open(log_.c_str(), O_WRONLY | O_CREAT | O_APPEND | O_CLOEXEC, 0644);
    if (logfd < 0) return ::testing::AssertionFailure() << ErrnoText("open " + log_);
    int nullfd = ::open("/dev/null", O_RDONLY | O_CLOEXEC);

    std::vector<char*> argv;
    for (auto& a : args) argv.push_back(a.data());
    argv.push_back(nullptr);

    std::vector<std::string> env = opts_.env;  // putenv keeps the pointers: copied first
    pid_t parent = ::getpid();
    pid_t pid = ::fork();
    if (pid < 0) {
        ::close(logfd);
        if (nullfd >= 0) ::close(nullfd);
        return ::testing::AssertionFailure() << ErrnoText("fork");
    }
    if (pid == 0) {
        // Child: the daemon must never outlive the test process.
        ::prctl(PR_SET_PDEATHSIG, SIGKILL);
        if (::getppid() != parent) ::_exit(126);
        // Undo anything the test process changed that exec would inherit.
        sigset_t none;
        sigemptyset(&none);
        ::sigprocmask(SIG_SETMASK, &none, nullptr);
        for (int s = 1; s < NSIG; ++s) ::signal(s, SIG_DFL);
        if (nullfd >= 0) ::dup2(nullfd, 0);
        ::dup2(logfd, 1);
        ::dup2(logfd, 2);
        ::close_range(3, ~0U, 0);
        if (opts_.max_open_files > 0) {
            rlimit nofile{opts_.max_open_files, opts_.max_open_files};
            if (::setrlimit(RLIMIT_NOFILE, &nofile) != 0) ::_exit(125);
        }
        for (auto& e : env) ::putenv(e.data());
        ::execv(argv[0], argv.data());
        std::fprintf(stderr, "e2e: execv(%s) failed: %s\n", argv[0], std::strerror(errno));
        ::_exit(127);
    }
    ::close(logfd);
    if (nullfd >= 0) ::close(nullfd);
    pid_ = pid;

    auto deadline = Clock::now() + kReadyTimeout;
    for (;;) {
        int status = 0;
        pid_t r = ::waitpid(pid_, &status, WNOHANG);
        if (r == pid_) {
            pid_ = -1;
            *retryable = true;  // most likely a port clash; Start() retries with new ports
            AppendToLog(log_,
                        "=== e2e: daemon " + DescribeWaitStatus(status) + " before it was ready");
            return ::testing::AssertionFailure()
                   << "nfsrdmad " << DescribeWaitStatus(status)
                   << " before accepting connections.\ncommand: " << cmdline_
                   << "\n---- daemon log tail (" << log_ << ") ----\n"
                   << log_tail();
        }
        if (CanConnect(nfs_port_) && CanConnect(mount_port_)) break;
        if (Clock::now() > deadline) {
            KillHard();
            return ::testing::AssertionFailure()
                   << "nfsrdmad did not accept TCP connections on 127.0.0.1:" << nfs_port_
                   << " (NFS) and 127.0.0.1:" << mount_port_
                   << " (MOUNT) within 10 s.\ncommand: " << cmdline_ << "\n---- daemon log tail ("
                   << log_ << ") ----\n"
                   << log_tail();
        }
        std::this_thread::sleep_for(std::chrono::milliseconds(25));
    }
    // A port stolen by some other listener would make CanConnect succeed: make sure it is ours.
    int status = 0;
    if (::waitpid(pid_, &status, WNOHANG) == pid_) {
        pid_ = -1;
        *retryable = true;
        return ::testing::AssertionFailure() << "nfsrdmad " << DescribeWaitStatus(status)
                                             << " right after start\n---- daemon log tail ----\n"
                                             << log_tail();
    }
    return ::testing::AssertionSuccess();
}

::testing::AssertionResult Daemon::Stop() {
    if (pid_ <= 0) return ::testing::AssertionFailure() << "daemon is not running";
    if (::kill(pid_, SIGTERM) != 0)
        return ::testing::AssertionFailure() << ErrnoText("kill SIGTERM");
    auto deadline = Clock::now() + kStopTimeout;
    for (;;) {
        int status = 0;
        pid_t r = ::waitpid(pid_, &status, WNOHANG);
        if (r == pid_) {
            pid_ = -1;
            AppendToLog(log_, "=== e2e: daemon " + DescribeWaitStatus(status) + " after SIGTERM");
            if (WIFEXITED(status) && WEXITSTATUS(status) == 0) return ::testing::AssertionSuccess();
            return ::testing::AssertionFailure()
                   << "nfsrdmad must exit with status 0 on SIGTERM, but it "
                   << DescribeWaitStatus(status) << "\n---- daemon log tail (" << log_ << ") ----\n"
                   << log_tail();
        }
        if (r < 0 && errno != EINTR) {
            pid_ = -1;
            return ::testing::AssertionFailure() << ErrnoText("waitpid");
        }
        if (Clock::now() > deadline) {
            KillHard();
            return ::testing::AssertionFailure()
                   << "nfsrdmad did not exit within 10 s of SIGTERM (SIGKILLed it)\n"
                   << "---- daemon log tail (" << log_ << ") ----\n"
                   << log_tail();
        }
        std::this_thread::sleep_for(std::chrono::milliseconds(20));
    }
}

::testing::AssertionResult Daemon::Restart() {
    auto stopped = Stop();
    if (!stopped) return stopped;
    return Start();
}

::testing::AssertionResult Daemon::WriteConfig(const std::vector<ConfigExport>& exports) {
    config_exports_ = exports;
    std::ostringstream y;
    y << "# written by the nfsrdmad end-to-end tests\n"
      << "listeners:\n"
      << "  tcp: [\"127.0.0.1:" << nfs_port_ << "\"]\n"
      << "  mount_port: " << mount_port_ << "\n"
      << "state_dir: \"" << state_ << "\"\n"
      << "exports:\n";
    for (const auto& e : exports) {
        y << "  - {path: \"" << e.path << "\", access: " << e.access << ", squash: " << e.squash
          << ", secure: false, clients: [";
        for (size_t i = 0; i < e.clients.size(); ++i)
            y << (i ? ", " : "") << "\"" << e.clients[i] << "\"";
        y << "]}\n";
    }
    if (!opts_.config_yaml.empty()) y << opts_.config_yaml << "\n";
    std::string why;
    if (!WriteFile(config_, y.str(), &why)) return ::testing::AssertionFailure() << why;
    AppendToLog(log_, "=== e2e: wrote " + config_ + ":\n" + y.str());
    return ::testing::AssertionSuccess();
}

size_t Daemon::OpenFdCount() const {
    size_t n = 0;
    const std::string dir = "/proc/" + std::to_string(pid_) + "/fd";
    if (DIR* d = ::opendir(dir.c_str())) {
        while (const dirent* e = ::readdir(d))
            if (e->d_name[0] != '.') ++n;
        ::closedir(d);
    }
    return n;
}

std::optional<uint64_t> Daemon::StatsCounterAtLeast(const std::string& group,
                                                    const std::string& name, uint64_t min) {
    std::optional<uint64_t> v;
    WaitFor(
        [&] {
            v = StatsCounter(group, name);
            return v && *v >= min;
        },
        std::chrono::seconds(10));
    return v;
}

std::optional<uint64_t> Daemon::StatsCounter(const std::string& group, const std::string& name) {
    if (pid_ <= 0) return std::nullopt;
    std::error_code ec;
    const auto start = std::filesystem::file_size(log_, ec);
    if (ec || ::kill(pid_, SIGUSR1) != 0) return std::nullopt;
    const std::string prefix = "stats: " + group + " ", key = " " + name + "=";
    for (int i = 0; i < 50; ++i) {
        std::this_thread::sleep_for(std::chrono::milliseconds(100));
        std::ifstream in(log_);
        in.seekg(static_cast<std::streamoff>(start));
        std::string line;
        while (std::getline(in, line)) {
            auto at = line.find(prefix);
            if (at == std::string::npos) continue;
            auto k = line.find(key, at);
            if (k == std::string::npos) return std::nullopt;
            return std::stoull(line.substr(k + key.size()));
        }
    }
    return std::nullopt;
}

::testing::AssertionResult Daemon::Reload() {
    if (pid_ <= 0) return ::testing::AssertionFailure() << "daemon is not running";
    AppendToLog(log_, "=== e2e: sending SIGHUP");
    std::error_code ec;
    const auto start = std::filesystem::file_size(log_, ec);
    if (::kill(pid_, SIGHUP) != 0) return ::testing::AssertionFailure() << ErrnoText("kill SIGHUP");
    // The reload is over when the daemon says how it ended (daemon.cpp's reload()).
    const bool ended = WaitFor(
        [&] {
            std::ifstream in(log_);
            in.seekg(static_cast<std::streamoff>(ec ? 0 : start));
            for (std::string line; std::getline(in, line);)
                if (line.find("reload: exports replaced") != std::string::npos ||
                    line.find("keeping the current exports") != std::string::npos)
                    return true;
            return false;
        },
        std::chrono::seconds(10));
    int status = 0;
    if (::waitpid(pid_, &status, WNOHANG) == pid_) {
        pid_ = -1;
        return ::testing::AssertionFailure() << "nfsrdmad " << DescribeWaitStatus(status)
                                             << " after SIGHUP (it must reload, not exit)"
                                             << "\n---- daemon log tail ----\n"
                                             << log_tail();
    }
    if (!ended)
        return ::testing::AssertionFailure() << "no end of the reload in the log after 10 s"
                                             << "\n---- daemon log tail ----\n"
                                             << log_tail();
    return ::testing::AssertionSuccess();
}

void Daemon::KillHard() {
    if (pid_ <= 0) return;
    ::kill(pid_, SIGKILL);
    int status = 0;
    while (::waitpid(pid_, &status, 0) < 0 && errno == EINTR) {
    }
    AppendToLog(log_, "=== e2e: daemon SIGKILLed by the test harness");
    pid_ = -1;
}

// ---------------------------------------------------------------------------------------------
// NfsClient

std::unique_ptr<NfsClient> NfsClient::Mount(const Daemon& d, std::string* why,
                                            const std::string& export_path, int uid, int gid) {
    nfs_context* n = nfs_init_context();
    if (n == nullptr) {
        *why = "nfs_init_context failed";
        return nullptr;
    }
    const std::string exp = export_path.empty() ? d.export_dir() : export_path;
    const std::string url =
        "nfs://127.0.0.1" + exp + "?version=3&nfsport=" + std::to_string(d.nfs_port()) +
        "&mountport=" + std::to_string(d.mount_port()) + "&auto-traverse-mounts=0&dircache=0";
    nfs_url* u = nfs_parse_url_dir(n, url.c_str());
    if (u == nullptr) {
        *why = "nfs_parse_url_dir(" + url + "): " + nfs_get_error(n);
        nfs_destroy_context(n);
        return nullptr;
    }
    if (uid >= 0) nfs_set_uid(n, uid);
    if (gid >= 0) nfs_set_gid(n, gid);
    // A hung daemon must fail the test instead of blocking it forever.
    nfs_set_timeout(n, 60000);
    int rc = nfs_mount(n, u->server, u->path);
    if (rc != 0) {
        *why = "nfs_mount(" + url + ") = " + std::to_string(rc) + " (" + std::strerror(-rc) +
               "): " + nfs_get_error(n);
        nfs_destroy_url(u);
        nfs_destroy_context(n);
        return nullptr;
    }
    nfs_destroy_url(u);
    return std::unique_ptr<NfsClient>(new NfsClient(n));
}

NfsClient::~NfsClient() {
    if (nfs_ != nullptr) nfs_destroy_context(nfs_);
}

rpc_context* NfsClient::rpc() const {
    return nfs_get_rpc_context(nfs_);
}

std::string NfsClient::error() const {
    const char* e = nfs_get_error(nfs_);
    return e ? e : "";
}

// ---------------------------------------------------------------------------------------------
// DaemonTest

void DaemonTest::SetUp() {
    std::string why;
    if (DaemonBinary(&why).empty()) GTEST_FAIL() << why;
    daemon_ = std::make_unique<Daemon>(Options());
    ASSERT_TRUE(daemon_->Start());
    if (mount_client_) {
        client_ = NfsClient::Mount(*daemon_, &why);
        ASSERT_TRUE(client_ != nullptr)
            << "libnfs could not mount the export: " << why << "\n---- daemon log tail ----\n"
            << daemon_->log_tail();
        ASSERT_NO_FATAL_FAILURE(FetchRootHandle(&root_));
    }
}

void DaemonTest::FetchRootHandle(Fh* out, const std::string& path) {
    std::string why;
    auto conn = RpcConn::Connect(daemon_->mount_port(), kMountProgram, 3, &why);
    ASSERT_TRUE(conn != nullptr) << "connect to MOUNT port " << daemon_->mount_port() << ": "
                                 << why;
    MntRes m = Mnt3(conn->get(), path.empty() ? daemon_->export_dir() : path);
    ASSERT_TRUE(MountIs(m, MNT3_OK)) << "MNT " << (path.empty() ? daemon_->export_dir() : path);
    ASSERT_FALSE(m.fh.empty());
    *out = m.fh;
}

void DaemonTest::TearDown() {
    client_.reset();
    if (daemon_ && daemon_->running()) {
        EXPECT_TRUE(daemon_->Stop());
    }
    if (HasFailure() && daemon_) {
        std::cerr << "---- nfsrdmad log tail (" << daemon_->log_path() << ") ----\n"
                  << daemon_->log_tail(120) << "---- end of log tail ----\n";
    }
    daemon_.reset();
}

void DaemonTest::RestartDaemon() {
    client_.reset();
    ASSERT_TRUE(daemon_->Restart());
    if (mount_client_) {
        std::string why;
        client_ = NfsClient::Mount(*daemon_, &why);
        ASSERT_TRUE(client_ != nullptr) << "re-mount after restart failed: " << why;
        ASSERT_NO_FATAL_FAILURE(FetchRootHandle(&root_));
    }
}

}  // namespace nfsrdmad::e2e
