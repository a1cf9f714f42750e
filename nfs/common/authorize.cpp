#include "nfs/common/authorize.h"

#include <arpa/inet.h>
#include <netdb.h>

#include <cstring>

#include "nfs/common/hostname_cache.h"
#include "nfs/vfs/policy.h"

namespace nfsrdmad::nfs {

namespace {

bool has_hostname_rule(const vfs::ExportSpec& spec) {
    for (const auto& r : spec.rules)
        if (r.match.kind == vfs::ClientRule::Match::Hostname) return true;
    return false;
}

bool same_address(const sockaddr* a, const sockaddr* b) {
    if (a->sa_family != b->sa_family) return false;
    if (a->sa_family == AF_INET)
        return reinterpret_cast<const sockaddr_in*>(a)->sin_addr.s_addr ==
               reinterpret_cast<const sockaddr_in*>(b)->sin_addr.s_addr;
    return std::memcmp(&reinterpret_cast<const sockaddr_in6*>(a)->sin6_addr,
                       &reinterpret_cast<const sockaddr_in6*>(b)->sin6_addr, 16) == 0;
}

std::string resolve_verified(const rpc::Peer& peer) {
    char host[NI_MAXHOST];
    auto* sa = reinterpret_cast<const sockaddr*>(&peer.addr);
    if (getnameinfo(sa, peer.len, host, sizeof host, nullptr, 0, NI_NAMEREQD) != 0) return {};
    // Forward-confirm: a PTR record alone is the client's to forge.
    addrinfo hints{};
    hints.ai_family = sa->sa_family;
    addrinfo* res = nullptr;
    if (getaddrinfo(host, nullptr, &hints, &res) != 0) return {};
    bool confirmed = false;
    for (auto* ai = res; ai && !confirmed; ai = ai->ai_next)
        confirmed = same_address(ai->ai_addr, sa);
    freeaddrinfo(res);
    return confirmed ? host : "";
}

}  // namespace

std::string peer_host(const rpc::Peer& peer) {
    char buf[INET6_ADDRSTRLEN] = "";
    auto* sa = reinterpret_cast<const sockaddr*>(&peer.addr);
    if (sa->sa_family == AF_INET)
        inet_ntop(AF_INET, &reinterpret_cast<const sockaddr_in*>(sa)->sin_addr, buf, sizeof buf);
    else if (sa->sa_family == AF_INET6)
        inet_ntop(AF_INET6, &reinterpret_cast<const sockaddr_in6*>(sa)->sin6_addr, buf, sizeof buf);
    return buf;
}

std::string verified_hostname(const rpc::Peer& peer) {
    static HostnameCache cache(resolve_verified);
    return cache.lookup(peer);
}

bool port_allowed(const vfs::ClientRule& rule, const rpc::Peer& peer) {
    if (!rule.secure || peer.rdma) return true;
    auto* sa = reinterpret_cast<const sockaddr*>(&peer.addr);
    uint16_t port = 0;
    if (sa->sa_family == AF_INET)
        port = ntohs(reinterpret_cast<const sockaddr_in*>(sa)->sin_port);
    else if (sa->sa_family == AF_INET6)
        port = ntohs(reinterpret_cast<const sockaddr_in6*>(sa)->sin6_port);
    else
        return false;
    return port < 1024;
}

bool may_look_up_names(const vfs::Export& exp) {
    return has_hostname_rule(exp.spec());
}

const vfs::ClientRule* client_rule(const vfs::Export& exp, const rpc::Peer& peer) {
    const auto* sa = reinterpret_cast<const sockaddr*>(&peer.addr);
    if (!has_hostname_rule(exp.spec())) return vfs::match(exp.spec(), sa, {});
    const std::string host = verified_hostname(peer);
    return vfs::match(exp.spec(), sa, host);
}

Verdict authorize(const vfs::Export& exp, const rpc::CallHeader& h, Caller& out, bool any_flavor) {
    out.rule = h.peer ? client_rule(exp, *h.peer) : nullptr;
    if (!out.rule) return Verdict::NotAllowed;
    if (!port_allowed(*out.rule, *h.peer)) return Verdict::InsecurePort;
    if (!any_flavor && !vfs::flavor_allowed(*out.rule, h.cred.flavor)) return Verdict::WeakAuth;
    out.id.uid = h.cred.sys.uid;
    out.id.gid = h.cred.sys.gid;
    out.id.groups = h.cred.sys.gids;
    vfs::squash_in_place(*out.rule, out.id, h.cred.flavor, h.cred.anonymous);
    out.read_write = out.rule->read_write;
    return Verdict::Ok;
}

}  // namespace nfsrdmad::nfs
