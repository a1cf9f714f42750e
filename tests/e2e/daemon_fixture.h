// End-to-end test support: starts the real nfsrdmad binary (path in $NFSRDMAD_BIN) on free
// loopback ports with a fresh temporary export, and hands out libnfs clients connected to it.
//
// Layout of one daemon's temporary tree (created with mkdtemp under /tmp):
//   BASE/export     the exported directory (EXPORTDIR; its canonical path is what clients mount)
//   BASE/state      --state-dir
//   BASE/daemon.log stdout+stderr of every daemon run (appended across restarts)
// BASE is removed when the Daemon object is destroyed, unless NFSRDMAD_E2E_KEEP is set.
#pragma once

#include <sys/types.h>

#include <cstdint>
#include <memory>
#include <optional>
#include <string>
#include <vector>

#include <gtest/gtest.h>

#include "tests/e2e/raw_nfs.h"

struct nfs_context;
struct rpc_context;

namespace nfsrdmad::e2e {

// Environment variable holding the daemon binary path.
inline constexpr const char* kBinEnv = "NFSRDMAD_BIN";
// When set, the daemon started instead of $NFSRDMAD_BIN: `make test` runs the Release
// build's test programs a second time against the sanitizer build's daemon
// (scripts/run-tests.sh), rather than compiling them again with the sanitizers.
inline constexpr const char* kDaemonOverrideEnv = "NFSRDMAD_E2E_DAEMON";

// Returns the daemon path from $NFSRDMAD_E2E_DAEMON or else $NFSRDMAD_BIN, or "" and a
// human-readable reason in *why when it is unset, empty, missing or not executable.
std::string DaemonBinary(std::string* why);

// Binds 127.0.0.1:0, reads the kernel-chosen port back and closes the socket. `count` distinct
// ports are returned (all sockets are held open until every port is picked).
std::vector<uint16_t> PickFreePorts(size_t count);

// mkdtemp("/tmp/nfsrdmad-e2e-XXXXXX") + realpath. Aborts the test binary on failure.
std::string MakeTempDir(const std::string& tag);

// Whole-file helpers for server-side checks (these go straight to the local filesystem).
bool WriteFile(const std::string& path, const std::string& content, std::string* why = nullptr);
bool ReadFile(const std::string& path, std::string* out, std::string* why = nullptr);

// Last `lines` lines of a text file ("" if it cannot be read).
std::string TailFile(const std::string& path, size_t lines);

// True if a TCP connect to 127.0.0.1:port succeeds right now.
bool CanConnect(uint16_t port);

// geteuid() == 0.
bool IsRoot();

struct DaemonOptions {
    // Options for the primary export (BASE/export), exports(5) syntax.
    std::string export_options = "rw,no_root_squash,insecure";
    // Additional exports: each is created as BASE/<name> and passed as
    // --export 'BASE/<name>=<options>'.
    struct Extra {
        std::string name;
        std::string options;
    };
    std::vector<Extra> extra_exports;
    // Appended verbatim to the command line.
    std::vector<std::string> extra_args;
    // Instead of --tcp/--mount-port/--state-dir/--export, write BASE/nfsrdmad.yaml and start with
    // `--foreground --log-level debug --config BASE/nfsrdmad.yaml`. The YAML exports the primary
    // export (access rw, squash none, insecure, clients ["*"]) until Daemon::WriteConfig() says
    // otherwise.
    bool use_config_file = false;
    // Extra top-level YAML sections (e.g. "tcp: {idle_timeout: 1}"). In config-file mode they
    // are appended to BASE/nfsrdmad.yaml; otherwise they go to BASE/extra.yaml, passed with
    // --config under the command-line exports.
    std::string config_yaml;
    // > 0: the daemon's RLIMIT_NOFILE (soft and hard), set between fork and exec.
    unsigned long max_open_files = 0;
    // NAME=VALUE pairs added to the daemon's environment.
    std::vector<std::string> env;
};

// One export entry of the YAML configuration file.
struct ConfigExport {
    std::string path;
    std::string access = "rw";                 // rw | ro
    std::string squash = "none";               // none | root | all
    std::vector<std::string> clients = {"*"};  // exports(5)-style client specs
};

class Daemon {
  public:
    explicit Daemon(DaemonOptions opts = {});
    ~Daemon();
    Daemon(const Daemon&) = delete;
    Daemon& operator=(const Daemon&) = delete;

    // Picks fresh ports, fork/execs the daemon and waits (up to 10 s) until both the NFS port and
    // the MOUNT port accept TCP connections. Retries a few times when the daemon exits early
    // (e.g. a port picked here was grabbed by someone else in the meantime). On failure the
    // result message contains the command line and the tail of the daemon log.
    ::testing::AssertionResult Start();

    // SIGTERM, then waits up to 10 s; succeeds only if the daemon exited with status 0.
    // SIGKILLs it (and fails) if it does not exit in time.
    ::testing::AssertionResult Stop();

    // Stop() + Start(). New ports are picked; the export and state directories are kept.
    ::testing::AssertionResult Restart();

    // Config-file mode only: (re)writes BASE/nfsrdmad.yaml with the current ports, state dir and
    // the given exports. The next Start() and Reload() use it.
    ::testing::AssertionResult WriteConfig(const std::vector<ConfigExport>& exports);
    // SIGHUP; succeeds if the daemon is still running 500 ms later.
    ::testing::AssertionResult Reload();
    // SIGUSR1, then NAME's value in the dump's "stats: GROUP ..." line (GROUP: rpc, tcp,
    // vfs, rdma). nullopt when no such line or counter appears within 5 s.
    std::optional<uint64_t> StatsCounter(const std::string& group, const std::string& name);
    // StatsCounter until it reaches at least `min` (within 10 s): for counters the daemon
    // bumps after the reply has left (a splice counts when it returns). The last value read.
    std::optional<uint64_t> StatsCounterAtLeast(const std::string& group, const std::string& name,
                                                uint64_t min);
    const std::string& config_path() const { return config_; }

    bool running() const { return pid_ > 0; }
    pid_t pid() const { return pid_; }
    // The daemon's open descriptors, counted in /proc/<pid>/fd.
    size_t OpenFdCount() const;
    uint16_t nfs_port() const { return nfs_port_; }
    uint16_t mount_port() const { return mount_port_; }
    const std::string& base_dir() const { return base_; }
    // Canonical absolute path of the primary export: the path clients mount.
    const std::string& export_dir() const { return export_; }
    std::string extra_export_dir(const std::string& name) const { return base_ + "/" + name; }
    const std::string& state_dir() const { return state_; }
    const std::string& log_path() const { return log_; }
    const std::string& command_line() const { return cmdline_; }
    // Server-side path of a path inside the primary export ("a/b" or "/a/b").
    std::string on_disk(const std::string& rel) const;
    std::string log_tail(size_t lines = 80) const { return TailFile(log_, lines); }

  private:
    ::testing::AssertionResult StartOnce(bool* retryable);
    void KillHard();

    DaemonOptions opts_;
    std::string base_, export_, state_, log_, config_, cmdline_;
    std::vector<ConfigExport> config_exports_;
    pid_t pid_ = -1;
    uint16_t nfs_port_ = 0;
    uint16_t mount_port_ = 0;
};

// A libnfs NFSv3 client mounted on one of the daemon's exports, using explicit nfsport and
// mountport (no portmapper). Auto-traversal of nested mounts and the directory cache are off so
// every call really goes to the server.
class NfsClient {
  public:
    // `export_path` defaults to the daemon's primary export. uid/gid >= 0 set the AUTH_SYS
    // credentials (default: the test process's own).
    static std::unique_ptr<NfsClient> Mount(const Daemon& d, std::string* why,
                                            const std::string& export_path = "", int uid = -1,
                                            int gid = -1);
    ~NfsClient();
    NfsClient(const NfsClient&) = delete;
    NfsClient& operator=(const NfsClient&) = delete;

    nfs_context* nfs() const { return nfs_; }
    // The RPC context of the mounted session (nfs_get_rpc_context): NFS program, version 3.
    rpc_context* rpc() const;
    std::string error() const;

  private:
    explicit NfsClient(nfs_context* n) : nfs_(n) {}
    nfs_context* nfs_ = nullptr;
};

// Test fixture: a running daemon (started in SetUp, stopped in TearDown with an exit-status
// check) plus a mounted libnfs client. On any failure the daemon log tail is printed.
class DaemonTest : public ::testing::Test {
  protected:
    // Override to change the daemon's exports before SetUp starts it.
    virtual DaemonOptions Options() { return {}; }
    // Set to false in a subclass constructor to skip mounting a client in SetUp.
    bool mount_client_ = true;

    void SetUp() override;
    void TearDown() override;

    // Restarts the daemon (new ports), re-mounts client_ and re-fetches root_. Fatal-fails on
    // error.
    void RestartDaemon();
    // MOUNT v3 MNT of `path` (default: the primary export) on the daemon's MOUNT port.
    // Fatal-fails unless the result is MNT3_OK.
    void FetchRootHandle(Fh* out, const std::string& path = "");
    // The mounted session's RPC context (NFS v3), for raw calls.
    rpc_context* rpc() const { return client_->rpc(); }
    // Convenience: server-side path.
    std::string disk(const std::string& rel) const { return daemon_->on_disk(rel); }
    std::unique_ptr<Daemon> daemon_;
    std::unique_ptr<NfsClient> client_;
    Fh root_;  // the primary export's root handle (from MNT), set in SetUp when mount_client_
};

}  // namespace nfsrdmad::e2e

// Fatal failure (never a skip) when the test is not running as root: tests that chown, check
// ownership or squash uid 0 need it.
#define NFSRDMAD_E2E_REQUIRE_ROOT()                                                       \
    do {                                                                                  \
        if (!::nfsrdmad::e2e::IsRoot())                                                   \
            GTEST_FAIL() << "this end-to-end test must run as root (it checks ownership " \
                            "and uid squashing through the daemon)";                      \
    } while (0)
