// nfsrdmad: a userspace NFS server (NFSv3 + MOUNT over TCP; RPC-over-RDMA to come).
#include <sys/stat.h>
#include <unistd.h>

#include <spdlog/sinks/systemd_sink.h>
#include <spdlog/spdlog.h>
#include <CLI/CLI.hpp>
#include <cerrno>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <optional>
#include <sstream>

#include "config/import_exports.h"
#include "config/load.h"
#include "config/overrides.h"
#include "daemon/admin.h"
#include "daemon/control.h"
#include "daemon/daemon.h"
#include "daemon/doctor.h"
#include "daemon/exports.h"
#include "daemon/kerberos.h"

#ifndef NFSRDMAD_VERSION
#define NFSRDMAD_VERSION "0.0.0"
#endif

using namespace nfsrdmad;

namespace {

constexpr const char* kDefaultConfig = "/etc/nfsrdmad/nfsrdmad.yaml";

// The file's configuration, or nullopt with its errors on stderr.
std::optional<config::Config> load_or_report(const std::string& path) {
    auto r = config::load_file(path);
    for (const auto& e : r.errors) std::fprintf(stderr, "%s\n", e.str().c_str());
    return r.config;
}

// --strict: also open every export as the daemon would.
int check_config(const std::string& path, bool strict) {
    auto cfg = load_or_report(path);
    if (!cfg) return 1;
    bool failed = false;
    if (strict)
        for (const auto& p : daemon::check_exports(*cfg)) {
            std::fprintf(stderr, "%s: error: %s\n", path.c_str(), p.c_str());
            failed = true;
        }
    for (const auto& f : daemon::check_keytab(*cfg)) {
        std::fprintf(stderr, "%s: %s: %s\n", path.c_str(), f.error ? "error" : "warning",
                     f.text.c_str());
        failed = failed || f.error;
    }
    if (failed) return 1;
    std::printf("%s: OK (%zu export(s))\n", path.c_str(), cfg->exports.size());
    return 0;
}

// systemd connects stdout to the journal and says so in JOURNAL_STREAM ("dev:ino",
// systemd.exec(5)): log there with each line's priority, so `journalctl -p err` finds the
// errors. Anywhere else (a terminal, a file, a test's log) lines go to stdout as text.
bool stdout_is_journal() {
    const char* js = std::getenv("JOURNAL_STREAM");
    unsigned long long dev = 0, ino = 0;
    struct stat st {};
    return js && std::sscanf(js, "%llu:%llu", &dev, &ino) == 2 && ::fstat(1, &st) == 0 &&
           st.st_dev == dev && st.st_ino == ino;
}

// Warnings (options dropped, and why) and errors go to stderr, the YAML to stdout.
int import_exports(const std::string& path) {
    std::ifstream in(path);
    if (!in) {
        std::fprintf(stderr, "%s: cannot read: %s\n", path.c_str(), std::strerror(errno));
        return 1;
    }
    std::stringstream text;
    text << in.rdbuf();
    const auto r = config::import_exports(text.str(), path);
    for (const auto& w : r.warnings) std::fprintf(stderr, "%s (warning)\n", w.str().c_str());
    for (const auto& e : r.errors) std::fprintf(stderr, "%s\n", e.str().c_str());
    if (!r.errors.empty()) return 1;
    std::fputs(r.yaml.c_str(), stdout);
    return 0;
}

}  // namespace

int main(int argc, char** argv) {
    CLI::App app{"nfsrdmad: NFS server over TCP and RPC-over-RDMA"};
    app.set_version_flag("--version", std::string("nfsrdmad ") + NFSRDMAD_VERSION);

    std::string config_path, log_level;
    bool foreground = false;
    config::Overrides ov;
    std::string tcp, state_dir;
    uint16_t mount_port = 0;
    app.add_option("--config,-c", config_path, "YAML configuration file")->check(CLI::ExistingFile);
    // The daemon never detaches: a service manager or the shell backgrounds it, and no
    // start-up error is lost with a closed terminal. Kept for older command lines.
    app.add_flag("--foreground,-f", foreground, "accepted and ignored: always in the foreground");
    app.add_option("--log-level", log_level, "trace, debug, info, warn, error, critical, off");
    app.add_option("--export", ov.exports,
                   "export PATH[=OPTS] (exports(5) options: rw,ro,root_squash,no_root_squash,"
                   "all_squash,anonuid=N,anongid=N,sec=sys:none,fsid=N,clients=SPEC); repeatable");
    app.add_option("--tcp", tcp, "listen for NFS on ADDR:PORT (IPv6: [ADDR]:PORT)");
    std::string rdma;
    app.add_option("--rdma", rdma, "RPC-over-RDMA on ADDR:PORT (default 0.0.0.0:20049), or 'off'");
    std::string metrics;
    app.add_option("--metrics", metrics,
                   "serve Prometheus metrics on ADDR:PORT (GET /metrics), or 'off' (default)");
    app.add_option("--mount-port", mount_port, "TCP port of the MOUNT service");
    app.add_option("--state-dir", state_dir, "directory for the handle key and other state");
    bool no_rpcbind = false;
    app.add_flag("--no-rpcbind", no_rpcbind,
                 "do not register with the system rpcbind (clients name the ports)");

    std::string import_path = "/etc/exports";
    auto* import = app.add_subcommand(
        "import-exports", "print the nfsrdmad.yaml exports: section for an exports(5) file");
    import->add_option("file", import_path, "exports(5) file (default /etc/exports)");

    std::string check_path;
    auto* check = app.add_subcommand("check-config", "validate a configuration file and exit");
    check->add_option("file", check_path, "configuration file")->required();
    bool strict = false;
    check->add_flag("--strict", strict,
                    "also open every export as the daemon would: paths exist, are directories, "
                    "give file handles, and (mp) are mount points");

    // Admin commands: they ask the running daemon through its control socket, found in
    // the state directory (--state-dir, else the --config file's, else the default file's).
    bool as_json = false;
    std::string level;
    auto admin = [&](const char* name, const char* what) {
        auto* s = app.add_subcommand(name, what);
        s->fallthrough();  // --config and --state-dir may follow the command
        return s;
    };
    auto* doctor = app.add_subcommand(
        "doctor", "what would stop nfsrdmad from serving here, and what to do about it");
    doctor->fallthrough();
    auto* stats = admin("stats", "calls per operation, errors, bytes (like nfsstat -s)");
    auto* exports_cmd = admin("exports", "the exports in force and their rules (like exportfs -v)");
    auto* clients = admin("clients", "open connections, MOUNT's list, NFSv4.1 clients");
    auto* log_level_cmd = admin("log-level", "set the running daemon's log level");
    for (auto* s : {stats, exports_cmd, clients, log_level_cmd})
        s->add_flag("--json", as_json, "print the daemon's answer as JSON");
    log_level_cmd->add_option("level", level, "trace, debug, info, warn, error, critical, off")
        ->required();

    CLI11_PARSE(app, argc, argv);
    if (*check) return check_config(check_path, strict);
    if (*import) return import_exports(import_path);
    for (auto* s : {stats, exports_cmd, clients, log_level_cmd}) {
        if (!*s) continue;
        std::string dir = state_dir;
        if (dir.empty()) {
            std::string file = config_path;
            if (file.empty() && std::filesystem::exists(kDefaultConfig)) file = kDefaultConfig;
            auto c = file.empty() ? std::optional<config::Config>(config::Config{})
                                  : load_or_report(file);
            if (!c) return 1;
            dir = c->state_dir;
        }
        daemon::AdminCommand cmd;
        cmd.socket = (std::filesystem::path(dir) / daemon::kControlSocketName).string();
        cmd.request = s == log_level_cmd ? "log-level " + level : s->get_name();
        cmd.json = as_json;
        return daemon::run_admin(cmd);
    }

    if (!tcp.empty()) ov.tcp = tcp;
    if (!rdma.empty()) ov.rdma = rdma;
    if (!metrics.empty()) ov.metrics = metrics;
    if (mount_port) ov.mount_port = mount_port;
    if (!state_dir.empty()) ov.state_dir = state_dir;
    if (!log_level.empty()) ov.log_level = log_level;

    // doctor reads the configuration the daemon would: the default file when none is named.
    if (*doctor && config_path.empty() && std::filesystem::exists(kDefaultConfig))
        config_path = kDefaultConfig;
    config::Config cfg;
    if (!config_path.empty()) {
        auto loaded = load_or_report(config_path);
        if (!loaded) return 1;
        cfg = std::move(*loaded);
    }
    if (auto errs = config::apply_overrides(cfg, ov); !errs.empty()) {
        for (const auto& e : errs) std::fprintf(stderr, "%s\n", e.str().c_str());
        return 1;
    }

    // Paths are kept absolute: the daemon's directory may not stay the same.
    cfg.state_dir = std::filesystem::absolute(cfg.state_dir).lexically_normal().string();
    if (!config_path.empty()) config_path = std::filesystem::absolute(config_path).string();
    if (*doctor) return daemon::run_doctor(cfg);

    (void)foreground;
    const bool journal = stdout_is_journal();
    if (journal)
        spdlog::set_default_logger(std::make_shared<spdlog::logger>(
            "nfsrdmad", std::make_shared<spdlog::sinks::systemd_sink_mt>("nfsrdmad")));
    spdlog::set_level(spdlog::level::from_str(cfg.log_level));
    spdlog::flush_on(spdlog::level::info);  // lines reach a redirected log as they happen
    // The journal stamps and ranks each line itself.
    spdlog::set_pattern(journal ? "%v" : "%Y-%m-%d %H:%M:%S.%e %^%l%$ %v");

    daemon::Options opts;
    if (!config_path.empty()) opts.config_path = config_path;
    opts.overrides = ov;
    opts.rpcbind = !no_rpcbind;
    return daemon::run(std::move(cfg), opts);
}
