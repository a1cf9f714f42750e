// nfsrdmad: a userspace NFS server (NFSv3 + MOUNT over TCP; RPC-over-RDMA to come).
#include <unistd.h>

#include <CLI/CLI.hpp>
#include <cstdio>
#include <filesystem>
#include <spdlog/sinks/syslog_sink.h>
#include <spdlog/spdlog.h>

#include "config/load.h"
#include "config/overrides.h"
#include "daemon/daemon.h"
#include "daemon/kerberos.h"

#ifndef NFSRDMAD_VERSION
#define NFSRDMAD_VERSION "0.0.0"
#endif

using namespace nfsrdmad;

namespace {

int check_config(const std::string& path) {
    auto r = config::load_file(path);
    for (const auto& e : r.errors) std::fprintf(stderr, "%s\n", e.str().c_str());
    if (!r.config) return 1;
    bool failed = false;
    for (const auto& f : daemon::check_keytab(*r.config)) {
        std::fprintf(stderr, "%s: %s: %s\n", path.c_str(), f.error ? "error" : "warning",
                     f.text.c_str());
        failed = failed || f.error;
    }
    if (failed) return 1;
    std::printf("%s: OK (%zu export(s))\n", path.c_str(), r.config->exports.size());
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
    app.add_flag("--foreground,-f", foreground, "stay in the foreground, log to stderr");
    app.add_option("--log-level", log_level, "trace, debug, info, warn, error, critical, off");
    app.add_option("--export", ov.exports,
                   "export PATH[=OPTS] (exports(5) options: rw,ro,root_squash,no_root_squash,"
                   "all_squash,anonuid=N,anongid=N,sec=sys:none,fsid=N,clients=SPEC); repeatable");
    app.add_option("--tcp", tcp, "listen for NFS on ADDR:PORT (IPv6: [ADDR]:PORT)");
    std::string rdma;
    app.add_option("--rdma", rdma, "RPC-over-RDMA on ADDR:PORT (default 0.0.0.0:20049), or 'off'");
    app.add_option("--mount-port", mount_port, "TCP port of the MOUNT service");
    app.add_option("--state-dir", state_dir, "directory for the handle key and other state");

    std::string check_path;
    auto* check = app.add_subcommand("check-config", "validate a configuration file and exit");
    check->add_option("file", check_path, "configuration file")->required();

    CLI11_PARSE(app, argc, argv);
    if (*check) return check_config(check_path);

    if (!tcp.empty()) ov.tcp = tcp;
    if (!rdma.empty()) ov.rdma = rdma;
    if (mount_port) ov.mount_port = mount_port;
    if (!state_dir.empty()) ov.state_dir = state_dir;
    if (!log_level.empty()) ov.log_level = log_level;

    config::Config cfg;
    if (!config_path.empty()) {
        auto r = config::load_file(config_path);
        for (const auto& e : r.errors) std::fprintf(stderr, "%s\n", e.str().c_str());
        if (!r.config) return 1;
        cfg = *r.config;
    }
    if (auto errs = config::apply_overrides(cfg, ov); !errs.empty()) {
        for (const auto& e : errs) std::fprintf(stderr, "%s\n", e.str().c_str());
        return 1;
    }

    // Detaching changes directory to /: relative paths must be resolved first.
    cfg.state_dir = std::filesystem::absolute(cfg.state_dir).lexically_normal().string();
    if (!config_path.empty()) config_path = std::filesystem::absolute(config_path).string();

    // Detach before any thread exists; a daemon logs to syslog.
    if (!foreground) {
        if (::daemon(0, 0) != 0) {
            std::perror("daemon");
            return 1;
        }
        spdlog::set_default_logger(spdlog::syslog_logger_mt("nfsrdmad", "nfsrdmad", LOG_PID));
    }
    spdlog::set_level(spdlog::level::from_str(cfg.log_level));
    spdlog::flush_on(spdlog::level::info);  // lines reach a redirected log as they happen
    spdlog::set_pattern(foreground ? "%Y-%m-%d %H:%M:%S.%e %^%l%$ %v" : "%v");

    daemon::Options opts;
    if (!config_path.empty()) opts.config_path = config_path;
    opts.overrides = ov;
    return daemon::run(std::move(cfg), opts);
}
