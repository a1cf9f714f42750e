#include "transport/rpc/rpcbind.h"

#include <arpa/inet.h>
#include <netinet/in.h>
#include <poll.h>
#include <rpc/pmap_clnt.h>
#include <rpc/rpc.h>
#include <sys/socket.h>
#include <unistd.h>

#include <cerrno>
#include <fcntl.h>
#include <spdlog/spdlog.h>
#include <string>

namespace nfsrdmad::rpc {

namespace {

// RFC 1833 §2.2: a universal address is "h1.h2.h3.h4.p1.p2" (IPv4) or "::.p1.p2".
std::string universal_address(bool v6, uint16_t port) {
    return std::string(v6 ? "::" : "0.0.0.0") + "." + std::to_string(port >> 8) + "." +
           std::to_string(port & 0xff);
}

bool set_one(const char* netid, const RpcbindRegistration::Entry& e) {
    netconfig* nc = getnetconfigent(netid);
    if (!nc) return false;
    const std::string id(netid);
    std::string ua = universal_address(id == "tcp6" || id == "udp6", e.port);
    netbuf* nb = uaddr2taddr(nc, ua.c_str());
    bool ok = nb && rpcb_set(e.prog, e.vers, nc, nb);
    if (nb) {
        free(nb->buf);
        free(nb);
    }
    freenetconfigent(nc);
    return ok;
}

void unset_one(const char* netid, const RpcbindRegistration::Entry& e) {
    netconfig* nc = getnetconfigent(netid);
    if (!nc) return;
    rpcb_unset(e.prog, e.vers, nc);
    freenetconfigent(nc);
}

// The port rpcbind gives for (prog, vers) over tcp, 0 when none: PMAPPROC_GETPORT
// (RFC 1833 §3.2), which rpcbind answers from the same table. libtirpc's rpcb_getaddr
// leaks the reply's strings (LeakSanitizer); pmap_getport frees what it allocates.
uint16_t registered_tcp_port(uint32_t prog, uint32_t vers) {
    sockaddr_in sa{};
    sa.sin_family = AF_INET;
    sa.sin_port = htons(111);
    sa.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
    return pmap_getport(&sa, prog, vers, IPPROTO_TCP);
}

bool tcp_port_answers(uint16_t port) {
    int fd = ::socket(AF_INET, SOCK_STREAM | SOCK_NONBLOCK | SOCK_CLOEXEC, 0);
    if (fd < 0) return false;
    sockaddr_in sa{};
    sa.sin_family = AF_INET;
    sa.sin_port = htons(port);
    sa.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
    bool up = ::connect(fd, reinterpret_cast<sockaddr*>(&sa), sizeof sa) == 0;
    if (!up && errno == EINPROGRESS) {
        pollfd p{fd, POLLOUT, 0};
        int err = 0;
        socklen_t len = sizeof err;
        up = ::poll(&p, 1, 1000) == 1 && getsockopt(fd, SOL_SOCKET, SO_ERROR, &err, &len) == 0 &&
             err == 0;
    }
    ::close(fd);
    return up;
}

}  // namespace

bool rpcbind_running() {
    // A quick TCP connect to 127.0.0.1:111; libtirpc itself would wait much longer.
    return tcp_port_answers(111);
}

RpcbindClaim rpcbind_claim(uint16_t ours, uint16_t registered, bool registered_answers,
                           bool other_nfs_server) {
    if (registered == 0 || registered == ours) return RpcbindClaim::Take;
    return registered_answers && other_nfs_server ? RpcbindClaim::LeaveToOther : RpcbindClaim::Take;
}

RpcbindRegistration::RpcbindRegistration(std::vector<Entry> entries) : entries_(std::move(entries)) {
    if (!rpcbind_running()) {
        spdlog::warn(
            "rpcbind: not running on this host; programs are not registered (clients must "
            "name the ports: mount -o port=...,mountport=...)");
        return;
    }
    active_ = true;
    // Another NFS server on this host (NFS v3 registered on a live port that is not ours).
    constexpr uint32_t kNfsProgram = 100003;
    uint16_t our_nfs = 0;
    for (const auto& e : entries_)
        if (e.prog == kNfsProgram) our_nfs = e.port;
    const uint16_t nfs_held = registered_tcp_port(kNfsProgram, 3);
    const bool other_nfs = nfs_held && nfs_held != our_nfs && tcp_port_answers(nfs_held);
    for (auto& e : entries_) {
        // Another NFS server (a second nfsrdmad, the kernel nfsd) keeps what it holds and
        // still answers for; a registration whose port is dead, ours from an earlier run,
        // or one of a program without another NFS server (the client side's lockd) is
        // replaced (rpcbind_claim).
        const uint16_t held = registered_tcp_port(e.prog, e.vers);
        const bool answers = held && held != e.port && tcp_port_answers(held);
        if (rpcbind_claim(e.port, held, answers, other_nfs) == RpcbindClaim::LeaveToOther) {
            spdlog::warn(
                "rpcbind: program {} version {} is registered by another server on port {}; "
                "left to it (clients of this one must name port {})",
                e.prog, e.vers, held, e.port);
            continue;
        }
        if (answers)
            spdlog::info(
                "rpcbind: program {} version {} was registered on port {}, where no NFS server "
                "runs (this host's lockd for its own mounts?): taken for port {}",
                e.prog, e.vers, held, e.port);
        e.owned = true;
        unset_one("tcp", e);
        unset_one("tcp6", e);
        bool v4 = set_one("tcp", e);
        bool v6 = set_one("tcp6", e);
        if (v4 || v6)
            spdlog::info("rpcbind: registered program {} version {} on tcp port {}", e.prog, e.vers,
                         e.port);
        else
            spdlog::warn("rpcbind: could not register program {} version {}", e.prog, e.vers);
        if (!e.udp) continue;
        unset_one("udp", e);
        unset_one("udp6", e);
        if (set_one("udp", e) || set_one("udp6", e))
            spdlog::info("rpcbind: registered program {} version {} on udp port {}", e.prog, e.vers,
                         e.port);
        else
            spdlog::warn("rpcbind: could not register program {} version {} over udp", e.prog,
                         e.vers);
    }
}

RpcbindRegistration::~RpcbindRegistration() {
    if (!active_) return;
    size_t n = 0;
    for (auto& e : entries_) {
        // Only what is still ours: another server may have registered over it since.
        if (!e.owned || registered_tcp_port(e.prog, e.vers) != e.port) continue;
        unset_one("tcp", e);
        unset_one("tcp6", e);
        if (e.udp) {
            unset_one("udp", e);
            unset_one("udp6", e);
        }
        ++n;
    }
    spdlog::info("rpcbind: unregistered {} program version(s)", n);
}

std::vector<RpcbindRegistration::Entry> rpcbind_entries(
    const ProgramRegistry& registry, const std::function<uint16_t(uint32_t prog)>& port_of,
    const std::function<bool(uint32_t prog)>& over_udp) {
    std::vector<RpcbindRegistration::Entry> out;
    for (auto [prog, vers] : registry.registrations())
        out.push_back({prog, vers, port_of(prog), over_udp && over_udp(prog)});
    return out;
}

}  // namespace nfsrdmad::rpc
