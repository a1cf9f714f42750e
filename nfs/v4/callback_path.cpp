#include "nfs/v4/callback_path.h"

#include <spdlog/spdlog.h>

#include "xdr/nfs4_prot.h"

namespace nfsrdmad::nfs::v4 {

void CallbackPaths::bound(state::ClientId client, state::ConnId conn,
                          const state::CallbackParams& cb) {
    if (!channels_) return;
    std::lock_guard l(mu_);
    Path& p = paths_[client];
    p.cb = cb;
    if (p.state == State::Up) return;  // one that works already: no probe per session
    p.conn = conn;
    probe(client, p);
}

void CallbackPaths::probe(state::ClientId client, Path& p) {
    p.state = State::Probing;
    const uint64_t id = ++probes_;
    p.probe = id;
    rpc::BackCall c;
    c.prog = p.cb.program;
    c.vers = kCbVersion;
    c.proc = kCbNull;
    c.flavor = p.cb.flavor;
    c.uid = p.cb.uid;
    c.gid = p.cb.gid;
    c.timeout = timeout_;
    const state::ConnId conn = p.conn;
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
    if (!channels_->call(conn, std::move(c), std::move(done))) {
        p.state = State::Down;
        spdlog::warn("nfsv4.1: callback path to client {:#x} down: connection {} carries no calls",
                     client, conn);
    }
}

void CallbackPaths::connection_closed(state::ConnId conn) {
    std::lock_guard l(mu_);
    for (auto& [client, p] : paths_) {
        if (p.conn != conn || p.state == State::Down) continue;
        p.state = State::Down;
        ++p.probe;  // a probe still out on it no longer counts
        spdlog::info("nfsv4.1: callback path to client {:#x} down: its connection closed", client);
    }
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
