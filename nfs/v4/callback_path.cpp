#include "nfs/v4/callback_path.h"

#include <spdlog/spdlog.h>

#include <algorithm>

#include "xdr/nfs4_prot.h"

namespace nfsrdmad::nfs::v4 {

void CallbackPaths::bound(state::ClientId client, state::ConnId conn,
                          const state::CallbackParams& cb) {
    if (!channels_) return;
    Probe pr;
    {
        std::lock_guard l(mu_);
        Path& p = paths_[client];
        p.cb = cb;
        if (std::find(p.conns.begin(), p.conns.end(), conn) == p.conns.end())
            p.conns.push_back(conn);
        if (p.state == State::Up) return;  // one that works already: no probe per session
        p.conn = conn;
        pr = start_probe(client, p);
    }
    send(std::move(pr));
}

CallbackPaths::Probe CallbackPaths::start_probe(state::ClientId client, Path& p) {
    p.state = State::Probing;
    p.probe = ++probes_;
    Probe pr;
    pr.client = client;
    pr.conn = p.conn;
    pr.id = p.probe;
    pr.call.prog = p.cb.program;
    pr.call.vers = kCbVersion;
    pr.call.proc = kCbNull;
    pr.call.flavor = p.cb.flavor;
    pr.call.uid = p.cb.uid;
    pr.call.gid = p.cb.gid;
    pr.call.timeout = timeout_;
    return pr;
}

// Outside mu_: the call may drop the last reference to a connection, whose end comes
// back here (connection_closed).
void CallbackPaths::send(Probe pr) {
    const state::ClientId client = pr.client;
    const state::ConnId conn = pr.conn;
    const uint64_t id = pr.id;
    auto done = [this, client, id, conn](rpc::CallbackResult r) {
        std::lock_guard l(mu_);
        auto it = paths_.find(client);
        if (it == paths_.end() || it->second.probe != id) return;
        it->second.state = r.ok ? State::Up : State::Down;
        if (r.ok)
            spdlog::info("nfsv4.1: callback path to client {:#x} up (CB_NULL on connection {})",
                         client, conn);
        else
            spdlog::warn(
                "nfsv4.1: callback path to client {:#x} down: CB_NULL on connection {}: {}", client,
                conn, r.error);
    };
    if (channels_->call(conn, std::move(pr.call), std::move(done))) return;
    std::lock_guard l(mu_);
    auto it = paths_.find(client);
    if (it == paths_.end() || it->second.probe != id) return;
    it->second.state = State::Down;
    spdlog::warn("nfsv4.1: callback path to client {:#x} down: connection {} carries no calls",
                 client, conn);
}

void CallbackPaths::connection_closed(state::ConnId conn) {
    std::vector<Probe> next;
    {
        std::lock_guard l(mu_);
        for (auto& [client, p] : paths_) {
            std::erase(p.conns, conn);
            if (p.conn != conn) continue;
            p.conn = 0;
            ++p.probe;               // a probe still out on it no longer counts
            if (!p.conns.empty()) {  // another bound connection: try it
                p.conn = p.conns.back();
                next.push_back(start_probe(client, p));
                continue;
            }
            if (p.state != State::Down)
                spdlog::info("nfsv4.1: callback path to client {:#x} down: its connection closed",
                             client);
            p.state = State::Down;
        }
    }
    for (Probe& pr : next) send(std::move(pr));
}

void CallbackPaths::forget(state::ClientId client) {
    std::lock_guard l(mu_);
    paths_.erase(client);
}

uint32_t CallbackPaths::status_flags(state::ClientId client) const {
    return state(client) == State::Down ? xdr::nfs4::SEQ4_STATUS_CB_PATH_DOWN : 0;
}

CallbackPaths::State CallbackPaths::state(state::ClientId client) const {
    std::lock_guard l(mu_);
    auto it = paths_.find(client);
    return it == paths_.end() ? State::Unknown : it->second.state;
}

}  // namespace nfsrdmad::nfs::v4
