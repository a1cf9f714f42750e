#include "daemon/doctor.h"

#include <arpa/inet.h>
#include <linux/capability.h>
#include <netinet/in.h>
#include <sys/resource.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <unistd.h>

#include <spdlog/fmt/fmt.h>

#include <cerrno>
#include <cstdio>
#include <cstring>
#include <filesystem>
#include <fstream>

#include "daemon/control.h"
#include "daemon/exports.h"
#include "daemon/kerberos.h"
#include "config/parse.h"
#include "daemon/memlock.h"
#include "transport/rdma/verbs/inventory.h"

namespace nfsrdmad::daemon {

namespace {

using F = DoctorFinding;

// The GID an RDMA listener's IPv4 address has (RoCE: ::ffff:a.b.c.d); "" for IPv6 text.
std::string mapped_gid(const std::string& address) {
    in_addr a{};
    if (inet_pton(AF_INET, address.c_str(), &a) != 1) return address;
    return "::ffff:" + address;
}

void rdma(const config::Config& cfg, std::vector<F>& out) {
    if (cfg.rdma.empty()) {
        out.push_back({F::Ok, "rdma", "RDMA is off in the configuration (listeners.rdma: [])"});
        return;
    }
    const auto devices = rdma::verbs::list_devices();
    if (devices.empty()) {
        out.push_back({F::Warn, "rdma",
                       "no RDMA device: nfsrdmad would serve TCP only. Load the NIC's RDMA "
                       "driver, or for Soft-RoCE `modprobe rdma_rxe && rdma link add rxe0 type "
                       "rxe netdev IFACE`; or set listeners.rdma: [] to say TCP only is meant"});
        return;
    }
    bool any_active = false;
    for (const auto& d : devices) {
        if (!d.opened) {
            out.push_back(
                {F::Warn, "rdma",
                 "device " + d.name +
                     " cannot be opened (permissions on "
                     "/dev/infiniband, or the driver): run as root, check `ibv_devinfo`"});
            continue;
        }
        for (const auto& p : d.ports) {
            size_t v2 = 0;
            for (const auto& g : p.gids) v2 += g.type == rdma::verbs::GidInfo::RoceV2;
            any_active |= p.active;
            out.push_back(
                {p.active ? F::Ok : F::Warn, "rdma",
                 fmt::format("device {} port {}: {}, {} GID(s), {} RoCE v2{}", d.name, p.number,
                             p.active ? "active" : "NOT active", p.gids.size(), v2,
                             p.active ? ""
                                      : ": bring its link up (`ip link set "
                                        "IFACE up`, cable, switch port)")});
        }
    }
    // Each specific listening address needs a GID of that address: RDMA CM binds by it.
    for (const auto& l : cfg.rdma) {
        if (l.address == "0.0.0.0" || l.address == "::") continue;
        const std::string want = mapped_gid(l.address);
        bool found = false, v2 = false;
        for (const auto& d : devices)
            for (const auto& p : d.ports)
                for (const auto& g : p.gids)
                    if (g.text == want) {
                        found = true;
                        v2 |= g.type == rdma::verbs::GidInfo::RoceV2;
                    }
        if (!found)
            out.push_back({F::Fail, "rdma",
                           "no RDMA device has a GID for " + l.address +
                               ", the address listeners.rdma names: put the address on the "
                               "RDMA NIC's interface, or listen on 0.0.0.0"});
        else if (!v2)
            out.push_back({F::Warn, "rdma",
                           l.address + " has a RoCE v1 GID only: routed RoCE (and the Linux "
                                       "client's default) needs v2"});
    }
    if (!any_active)
        out.push_back({F::Warn, "rdma", "no RDMA port is active: RDMA clients cannot connect"});
}

void memory(const config::Config& cfg, std::vector<F>& out) {
    if (cfg.rdma.empty()) return;
    const auto pools = pool_sizes(cfg);
    if (auto err = check_memlock(pools); !err.empty())
        out.push_back({F::Fail, "memlock", err});
    else
        out.push_back({F::Ok, "memlock",
                       fmt::format("RDMA may register {} MiB: RLIMIT_MEMLOCK{} allows it",
                                   pools.max_registered_bytes() >> 20,
                                   has_capability(CAP_IPC_LOCK) ? " (CAP_IPC_LOCK)" : "")});
    if (!cfg.rdma_tuning.huge_pages) return;
    std::ifstream in("/proc/meminfo");
    long free_pages = 0, size_kb = 0;
    for (std::string line; std::getline(in, line);) {
        std::sscanf(line.c_str(), "HugePages_Free: %ld", &free_pages);
        std::sscanf(line.c_str(), "Hugepagesize: %ld kB", &size_kb);
    }
    const unsigned long long need = pools.max_registered_bytes();
    const unsigned long long page = (unsigned long long)(size_kb > 0 ? size_kb : 2048) * 1024;
    const unsigned long long have = (unsigned long long)free_pages * page;
    if (have < need)
        out.push_back({F::Warn, "huge pages",
                       fmt::format("rdma.huge_pages is on, but {} MiB of huge pages are free "
                                   "for up to {} MiB: payload buffers fall back to 4 KiB pages. "
                                   "Reserve more: `sysctl vm.nr_hugepages={}`",
                                   have >> 20, need >> 20, (need + page - 1) / page)});
}

// Can `address:port` be bound now? "" if so, else why.
std::string bind_test(const std::string& address, uint16_t port) {
    sockaddr_storage ss{};
    socklen_t len = 0;
    int family = AF_INET;
    if (inet_pton(AF_INET, address.c_str(), &reinterpret_cast<sockaddr_in&>(ss).sin_addr) == 1) {
        auto& a = reinterpret_cast<sockaddr_in&>(ss);
        a.sin_family = AF_INET;
        a.sin_port = htons(port);
        len = sizeof a;
    } else {
        auto& a = reinterpret_cast<sockaddr_in6&>(ss);
        family = AF_INET6;
        a.sin6_family = AF_INET6;
        a.sin6_port = htons(port);
        inet_pton(AF_INET6, address.c_str(), &a.sin6_addr);
        len = sizeof a;
    }
    int fd = ::socket(family, SOCK_STREAM | SOCK_CLOEXEC, 0);
    if (fd < 0) return std::strerror(errno);
    int one = 1;
    ::setsockopt(fd, SOL_SOCKET, SO_REUSEADDR, &one, sizeof one);
    if (family == AF_INET6) ::setsockopt(fd, IPPROTO_IPV6, IPV6_V6ONLY, &one, sizeof one);
    std::string why;
    if (::bind(fd, reinterpret_cast<sockaddr*>(&ss), len) != 0) why = std::strerror(errno);
    ::close(fd);
    return why;
}

bool kernel_nfsd_running() {
    std::ifstream in("/proc/fs/nfsd/threads");
    int n = 0;
    return in && (in >> n) && n > 0;
}

void ports(const config::Config& cfg, bool running, std::vector<F>& out) {
    if (running) {
        out.push_back({F::Ok, "ports",
                       "nfsrdmad is running (its control socket answers): it holds its ports"});
        return;
    }
    std::vector<std::pair<std::string, config::TcpListener>> wanted;
    for (const auto& l : cfg.tcp) wanted.push_back({"NFS (TCP)", l});
    if (!cfg.tcp.empty()) wanted.push_back({"MOUNT", {cfg.tcp.front().address, cfg.mount_port}});
    for (const auto& l : cfg.rdma) wanted.push_back({"RPC-over-RDMA (checked as TCP)", l});
    if (cfg.metrics) wanted.push_back({"metrics", *cfg.metrics});
    const bool knfsd = kernel_nfsd_running();
    for (const auto& [what, l] : wanted) {
        const std::string where = config::to_string(l);
        if (auto why = bind_test(l.address, l.port); why.empty())
            out.push_back({F::Ok, "ports", what + " " + where + " is free"});
        else
            out.push_back(
                {F::Fail, "ports",
                 what + " " + where + ": " + why +
                     (knfsd ? ": the kernel NFS server runs (`systemctl stop nfs-server`, or "
                              "`rpc.nfsd 0`)"
                            : ": another program holds it (`ss -ltnp 'sport = :" +
                                  std::to_string(l.port) + "'`)")});
    }
}

void rpcbind(std::vector<F>& out) {
    int fd = ::socket(AF_INET, SOCK_STREAM | SOCK_CLOEXEC, 0);
    sockaddr_in a{};
    a.sin_family = AF_INET;
    a.sin_port = htons(111);
    a.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
    const bool up = fd >= 0 && ::connect(fd, reinterpret_cast<sockaddr*>(&a), sizeof a) == 0;
    if (fd >= 0) ::close(fd);
    out.push_back(up ? F{F::Ok, "rpcbind", "rpcbind answers on 127.0.0.1:111"}
                     : F{F::Warn, "rpcbind",
                         "rpcbind is not running: clients must name the ports (mount -o "
                         "port=2049,mountport=20048) and NLM locking needs it. `systemctl "
                         "enable --now rpcbind`"});
}

void exports(const config::Config& cfg, std::vector<F>& out) {
    if (cfg.exports.empty())
        out.push_back({F::Warn, "exports", "no exports: clients can mount nothing"});
    const auto problems = check_exports(cfg);
    for (const auto& p : problems) out.push_back({F::Fail, "exports", p});
    if (problems.empty() && !cfg.exports.empty())
        out.push_back({F::Ok, "exports",
                       fmt::format("{} export(s) open and give file handles", cfg.exports.size())});
}

void capabilities(std::vector<F>& out) {
    struct Need {
        int cap;
        const char* name;
        const char* why;
    };
    const Need needs[] = {
        {CAP_DAC_READ_SEARCH, "CAP_DAC_READ_SEARCH", "open_by_handle_at: every file handle"},
        {CAP_DAC_OVERRIDE, "CAP_DAC_OVERRIDE", "acting for root on the export"},
        {CAP_CHOWN, "CAP_CHOWN", "SETATTR of owners, creates as the caller"},
        {CAP_FOWNER, "CAP_FOWNER", "SETATTR of modes and times for the owner"},
        {CAP_FSETID, "CAP_FSETID", "setuid and setgid bits clients set"},
        {CAP_SETUID, "CAP_SETUID", "acting as the caller (fsuid)"},
        {CAP_SETGID, "CAP_SETGID", "acting as the caller (fsgid, groups)"},
        {CAP_MKNOD, "CAP_MKNOD", "MKNOD of device nodes"},
        {CAP_NET_BIND_SERVICE, "CAP_NET_BIND_SERVICE", "ports below 1024 (NLM callbacks)"},
        {CAP_LEASE, "CAP_LEASE", "NFSv4.1 delegations of files root does not own"},
    };
    std::string missing;
    bool fatal = false;
    for (const auto& n : needs)
        if (!has_capability(n.cap)) {
            missing += std::string(missing.empty() ? "" : "; ") + n.name + " (" + n.why + ")";
            fatal |= n.cap == CAP_DAC_READ_SEARCH || n.cap == CAP_SETUID;
        }
    if (missing.empty())
        out.push_back({F::Ok, "capabilities", "every capability an NFS server uses is there"});
    else
        out.push_back({fatal ? F::Fail : F::Warn, "capabilities",
                       "missing " + missing +
                           ": run nfsrdmad as root (its systemd unit does), not as " +
                           std::to_string(::geteuid())});
}

void state_dir(const config::Config& cfg, std::vector<F>& out) {
    struct stat st {};
    if (::stat(cfg.state_dir.c_str(), &st) != 0) {
        const bool absent = errno == ENOENT;
        out.push_back({absent ? F::Warn : F::Fail, "state_dir",
                       cfg.state_dir + ": " + std::strerror(errno) +
                           (absent ? ": it is made at start (mode 0700)" : "")});
        return;
    }
    if (!S_ISDIR(st.st_mode)) {
        out.push_back(
            {F::Fail, "state_dir", cfg.state_dir + " is not a directory: point state_dir at one"});
        return;
    }
    if (st.st_uid != ::geteuid() || (st.st_mode & 022)) {
        out.push_back({F::Fail, "state_dir",
                       fmt::format("{}: owner {} mode {:04o}: it keeps the key that signs file "
                                   "handles; `chown root {} && chmod 0700 {}`",
                                   cfg.state_dir, st.st_uid, st.st_mode & 07777, cfg.state_dir,
                                   cfg.state_dir)});
        return;
    }
    out.push_back(
        {F::Ok, "state_dir", cfg.state_dir + " is the daemon's and not writable by others"});
}

void keytab(const config::Config& cfg, std::vector<F>& out) {
    for (const auto& k : check_keytab(cfg))
        out.push_back({k.error ? F::Fail : F::Warn, "kerberos", k.text});
}

}  // namespace

std::vector<DoctorFinding> doctor(const config::Config& cfg) {
    std::vector<F> out;
    std::string reply, why;
    const bool running =
        control_request((std::filesystem::path(cfg.state_dir) / kControlSocketName).string(),
                        "clients", &reply, &why);
    capabilities(out);
    state_dir(cfg, out);
    exports(cfg, out);
    ports(cfg, running, out);
    rpcbind(out);
    rdma(cfg, out);
    memory(cfg, out);
    keytab(cfg, out);
    return out;
}

int run_doctor(const config::Config& cfg) {
    bool failed = false;
    for (const auto& f : doctor(cfg)) {
        const char* tag = f.level == F::Ok ? "ok  " : f.level == F::Warn ? "WARN" : "FAIL";
        std::printf("%s %-13s %s\n", tag, f.topic.c_str(), f.text.c_str());
        failed |= f.level == F::Fail;
    }
    std::printf(failed ? "\nnfsrdmad could not serve as configured: fix the FAIL lines.\n"
                       : "\nnothing stops nfsrdmad from serving.\n");
    return failed ? 1 : 0;
}

}  // namespace nfsrdmad::daemon
