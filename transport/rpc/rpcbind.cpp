#include "transport/rpc/rpcbind.h"

#include <arpa/inet.h>
#include <netinet/in.h>
#include <poll.h>
#include <rpc/rpc.h>
#include <sys/socket.h>
#include <unistd.h>

#include <cerrno>
#include <fcntl.h>
#include <spdlog/spdlog.h>
#include <string>

namespace nfsrdmad::rpc {

bool rpcbind_running() {
    // A quick TCP connect to 127.0.0.1:111; libtirpc itself would wait much longer.
    int fd = ::socket(AF_INET, SOCK_STREAM | SOCK_NONBLOCK | SOCK_CLOEXEC, 0);
    if (fd < 0) return false;
    sockaddr_in sa{};
    sa.sin_family = AF_INET;
    sa.sin_port = htons(111);
    sa.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
    bool up = false;
    if (::connect(fd, reinterpret_cast<sockaddr*>(&sa), sizeof sa) == 0) {
        up = true;
    } else if (errno == EINPROGRESS) {
        pollfd p{fd, POLLOUT, 0};
        int err = 0;
        socklen_t len = sizeof err;
        up = ::poll(&p, 1, 1000) == 1 && getsockopt(fd, SOL_SOCKET, SO_ERROR, &err, &len) == 0 &&
             err == 0;
    }
    ::close(fd);
    return up;
}

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

}  // namespace

RpcbindRegistration::RpcbindRegistration(std::vector<Entry> entries) : entries_(std::move(entries)) {
    if (!rpcbind_running()) {
        spdlog::warn(
            "rpcbind: not running on this host; programs are not registered (clients must "
            "name the ports: mount -o port=...,mountport=...)");
        return;
    }
    active_ = true;
    for (auto& e : entries_) {
        unset_one("tcp", e);  // a stale registration from an earlier run
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
    for (auto& e : entries_) {
        unset_one("tcp", e);
        unset_one("tcp6", e);
        if (e.udp) {
            unset_one("udp", e);
            unset_one("udp6", e);
        }
    }
    spdlog::info("rpcbind: unregistered");
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
