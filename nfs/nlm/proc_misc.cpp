// The NLM v4 procedures that take no lock (XNFS NLM v4):
//   GRANTED       a server's callback to a client whose blocked LOCK it granted. This
//                 daemon is a server only and never asked another for a lock, so nothing
//                 it is told of is pending: NLM4_DENIED.
//   FREE_ALL      everything the named host holds (locks, waiters, shares) goes: its
//                 statd saw it reboot. From that host's address (that host), or from
//                 this host (the hosts at that address, or of that name). No reply body.
//   the *_RES     results of _MSG calls: this server sends only GRANTED (synchronous),
//                 so they are decoded and dropped.
#include <arpa/inet.h>
#include <netinet/in.h>
#include <spdlog/spdlog.h>

#include "nfs/common/authorize.h"
#include "nfs/common/log_text.h"
#include "nfs/nlm/request.h"

namespace nfsrdmad::nfs::nlm {

namespace {

bool is_loopback(const rpc::Peer& p) {
    if (p.addr.ss_family == AF_INET) {
        const auto* in = reinterpret_cast<const sockaddr_in*>(&p.addr);
        return (ntohl(in->sin_addr.s_addr) >> 24) == 127;
    }
    if (p.addr.ss_family == AF_INET6) {
        const auto* in6 = reinterpret_cast<const sockaddr_in6*>(&p.addr);
        return IN6_IS_ADDR_LOOPBACK(&in6->sin6_addr);
    }
    return false;
}

}  // namespace

rpc::Outcome proc_granted(Request& rq) {
    x::nlm4_testargs a;
    if (!rq.decode(a)) return rpc::Outcome::garbage();
    x::nlm4_res res;
    res.cookie = a.cookie;
    res.stat.stat = x::NLM4_DENIED;
    return rq.reply(res);
}

rpc::Outcome proc_free_all(Request& rq) {
    x::nlm4_notify a;
    if (!rq.decode(a)) return rpc::Outcome::garbage();
    // The host itself frees what it holds (the name at the address it calls from: a host
    // is both, hosts.h); from anyone else it would free another host's locks (knfsd
    // matches the caller too). From this host (its statd, an administrator) the name is
    // what statd watches: an address frees the hosts there, else a name frees the hosts
    // of that name (as a reboot notice, nsm_rebooted).
    const rpc::Peer* p = rq.ctx.header.peer;
    const std::string from = p ? peer_host(*p) : "";
    std::vector<HostTable::Named> hosts;
    if (p && is_loopback(*p)) {
        hosts = rq.svc.hosts.at(a.name);
        if (hosts.empty()) hosts = rq.svc.hosts.named(a.name);
    } else if (p && rq.svc.hosts.find(a.name, from)) {
        hosts.push_back(HostTable::Named{std::string(a.name), from});
    }
    if (hosts.empty()) {
        spdlog::warn("nlm: FREE_ALL for '{}' from {}: no such host there: ignored",
                     log_text(a.name), from);
        return rpc::Outcome::ok();
    }
    size_t waiters = 0;
    for (const HostTable::Named& h : hosts) {
        auto woken = rq.svc.free_all(h.name, h.address);
        waiters += woken.size();
        rq.svc.wake(std::move(woken));
    }
    spdlog::info("nlm: FREE_ALL for host '{}' from {} ({} waiter(s) may proceed)", log_text(a.name),
                 from, waiters);
    return rpc::Outcome::ok();
}

// statd's callback for a host it watches for us (nsm_monitor.h): {mon_name, state,
// priv[16]}. Only from this host (statd is local): from elsewhere it would let anyone
// free another host's locks, so it is ignored.
rpc::Outcome proc_nsm_notify(Request& rq) {
    auto& d = rq.ctx.args;
    const std::string_view name = d.get_string(1024);
    const int32_t state = d.get_i32();  // the host's new state
    (void)d.get_fixed(16);              // priv
    if (!d.ok() || d.remaining() != 0) return rpc::Outcome::garbage();
    const rpc::Peer* p = rq.ctx.header.peer;
    if (!p || !is_loopback(*p)) {
        spdlog::warn("nsm: a reboot notice for '{}' from {}, not from this host's statd: ignored",
                     log_text(name), p ? p->text : "?");
        return rpc::Outcome::ok();
    }
    rq.svc.nsm_rebooted(name, state);
    return rpc::Outcome::ok();
}

rpc::Outcome proc_result(Request& rq) {
    if (rq.ctx.header.proc == x::NLMPROC4_TEST_RES) {
        x::nlm4_testres a;
        return rq.decode(a) ? rpc::Outcome::ok() : rpc::Outcome::garbage();
    }
    x::nlm4_res a;
    return rq.decode(a) ? rpc::Outcome::ok() : rpc::Outcome::garbage();
}

}  // namespace nfsrdmad::nfs::nlm
