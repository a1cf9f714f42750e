// The session operations of ClientTable: SEQUENCE (RFC 8881 §18.46), DESTROY_SESSION
// (§18.37), BIND_CONN_TO_SESSION (§18.34) and a connection's end. The slot rules themselves
// are Session::begin()/finish().
#include <algorithm>

#include "nfs/v4/state/client_table.h"

namespace nfsrdmad::nfs::v4::state {

SequenceResult ClientTable::sequence(const SequenceArgs& a) {
    SequenceResult out;
    {
        std::shared_lock lock(mu_);
        auto it = sessions_.find(a.sessionid);
        // An unknown session (destroyed, its client reaped or replaced, another boot) is
        // NFS4ERR_BADSESSION (§18.46.3). A courtesy client's sessions still exist.
        Record* r = it == sessions_.end() ? nullptr : find(it->second->client());
        if (!r) {
            out.status = x4::NFS4ERR_BADSESSION;
            return out;
        }
        Session& s = *it->second;
        // §18.46.3: "If SEQUENCE returns an error, then the state of the slot (sequence ID,
        // cached reply) MUST NOT change, and the associated lease MUST NOT be renewed": a
        // request beyond the channel's limits (§2.10.6.4) is refused before its slot is
        // looked at, as the Linux server does; the same seqid may then carry a smaller one.
        if (a.op_count > s.fore().max_operations) {
            out.status = x4::NFS4ERR_TOO_MANY_OPS;
            return out;
        }
        if (a.request_bytes > s.fore().max_request_size) {
            out.status = x4::NFS4ERR_REQ_TOO_BIG;
            return out;
        }
        // §2.10.3.1: with SP4_NONE (or without BIND_CONN_TO_SESSION enforced) the server
        // associates a connection a SEQUENCE arrives on with the session's fore channel;
        // with connection binding enforced an unbound connection is
        // NFS4ERR_CONN_NOT_BOUND_TO_SESSION.
        SlotResult& slot = out;
        slot = s.begin(a.slotid, a.seqid, a.highest_slotid, a.cachethis, &a.conn);
        if (slot.unbound) {
            slot.unbound = false;
            if (r->how == x4::SP4_MACH_CRED &&
                op_in(r->must_enforce, x4::OP_BIND_CONN_TO_SESSION)) {
                out.status = x4::NFS4ERR_CONN_NOT_BOUND_TO_SESSION;
                return out;
            }
            x4::channel_dir_from_server4 dir;
            out.status = s.bind(a.conn, x4::CDFC4_FORE, dir);
            if (out.status != x4::NFS4_OK) return out;
            slot = s.begin(a.slotid, a.seqid, a.highest_slotid, a.cachethis);
        }
        if (out.status != x4::NFS4_OK) return out;
        // §8.3: a successful SEQUENCE, or one answered from the reply cache, renews the
        // client's lease; a courtesy client (expired, state kept) is live again.
        renew(*r, clock_.now());
        out.status_flags = r->external_flags | stateids_.revoked_flags(r->id);
        out.clientid = r->id;
        if (!out.replay) out.session = it->second;
    }
    return out;
}

Status ClientTable::destroy_session(const SessionId& id, ConnId conn, const std::string& principal,
                                    std::optional<uint32_t> own_slot) {
    std::lock_guard lock(mu_);
    auto it = sessions_.find(id);
    Record* r = it == sessions_.end() ? nullptr : find(it->second->client());
    if (!r) return x4::NFS4ERR_BADSESSION;
    // §18.37.3: "DESTROY_SESSION MUST be invoked on a connection that is associated with the
    // session being destroyed"; with SP4_MACH_CRED the machine credential MUST destroy it.
    if (!it->second->bound(conn)) return x4::NFS4ERR_CONN_NOT_BOUND_TO_SESSION;
    if (enforced(*r, x4::OP_DESTROY_SESSION, principal)) return x4::NFS4ERR_WRONG_CRED;
    const Status st = it->second->try_destroy(own_slot);
    if (st != x4::NFS4_OK) return st;
    r->sessions.erase(std::find(r->sessions.begin(), r->sessions.end(), id));
    sessions_.erase(it);
    return x4::NFS4_OK;
}

ClientTable::BindResult ClientTable::bind_conn_to_session(const SessionId& id, ConnId conn,
                                                          x4::channel_dir_from_client4 dir,
                                                          const std::string& principal) {
    BindResult out;
    std::lock_guard lock(mu_);
    auto it = sessions_.find(id);
    Record* r = it == sessions_.end() ? nullptr : find(it->second->client());
    if (!r) {
        out.status = x4::NFS4ERR_BADSESSION;
        return out;
    }
    // §18.34.3: with BIND_CONN_TO_SESSION in spo_must_enforce, the machine credential binds.
    if (enforced(*r, x4::OP_BIND_CONN_TO_SESSION, principal)) {
        out.status = x4::NFS4ERR_WRONG_CRED;
        return out;
    }
    out.status = it->second->bind(conn, dir, out.dir, /*rebind=*/true);
    if (out.status == x4::NFS4_OK) renew(*r, clock_.now());
    return out;
}

std::optional<CallbackParams> ClientTable::callback_of(const SessionId& id) const {
    std::shared_lock lock(mu_);
    auto it = sessions_.find(id);
    if (it == sessions_.end() ||
        !(it->second->flags() & x4::CREATE_SESSION4_FLAG_CONN_BACK_CHAN))
        return std::nullopt;
    CallbackParams cb = it->second->callback();
    cb.session = id;
    cb.back_slots = std::max<uint32_t>(1, it->second->back().max_requests);
    return cb;
}

std::optional<ClientId> ClientTable::client_of(const SessionId& id) const {
    std::shared_lock lock(mu_);
    auto it = sessions_.find(id);
    if (it == sessions_.end()) return std::nullopt;
    return it->second->client();
}

void ClientTable::connection_closed(ConnId conn) {
    std::lock_guard lock(mu_);
    for (auto& [id, s] : sessions_) s->unbind(conn);
}

}  // namespace nfsrdmad::nfs::v4::state
