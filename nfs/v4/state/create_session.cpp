// CREATE_SESSION (RFC 8881 §18.36): the per-client one-slot reply cache, client record
// confirmation and the channel attributes the session will use.
#include <algorithm>

#include "nfs/v4/state/client_table.h"

namespace nfsrdmad::nfs::v4::state {

namespace {

// The fore channel the session will use (§18.36.3): each value the client offers is kept or
// decreased to the server's limit, never increased.
Status clamp_fore(const ChannelAttrs& c, const ChannelLimits& l, ChannelAttrs& out) {
    // A channel that could never carry a request or a reply (a SEQUENCE and one more
    // operation) is NFS4ERR_TOOSMALL (§18.36.3, ca_maxresponsesize: "the server SHOULD return
    // NFS4ERR_TOOSMALL").
    if (c.max_request_size < l.min_request_size || c.max_response_size < l.min_response_size ||
        c.max_operations < 2 || c.max_requests < 1)
        return x4::NFS4ERR_TOOSMALL;
    out.header_pad_size = 0;  // "zero if padding is not in use"
    out.max_request_size = std::min(c.max_request_size, l.max_request_size);
    out.max_response_size = std::min(c.max_response_size, l.max_response_size);
    out.max_response_size_cached =
        std::min({c.max_response_size_cached, l.max_response_size_cached, out.max_response_size});
    out.max_operations = std::min(c.max_operations, l.max_operations);
    out.max_requests = std::min(c.max_requests, l.max_slots);
    out.rdma_ird.clear();
    if (!c.rdma_ird.empty()) out.rdma_ird.push_back(std::min(c.rdma_ird[0], l.max_rdma_ird));
    return x4::NFS4_OK;
}

// A back channel that could never carry a CB_COMPOUND (CB_SEQUENCE and one more operation)
// or its reply is NFS4ERR_TOOSMALL too (§18.36.3), as the Linux server answers.
Status check_back(const ChannelAttrs& c, const ChannelLimits& l) {
    if (c.max_request_size < l.min_request_size || c.max_response_size < l.min_response_size ||
        c.max_operations < 2)
        return x4::NFS4ERR_TOOSMALL;
    return x4::NFS4_OK;
}

// The back channel: "the server MUST NOT change" ca_maxoperations and ca_maxrequests; the
// sizes and the IRD it may decrease. No header padding.
ChannelAttrs clamp_back(const ChannelAttrs& c, const ChannelLimits& l) {
    ChannelAttrs out = c;
    out.header_pad_size = 0;
    out.max_request_size = std::min(c.max_request_size, l.max_request_size);
    out.max_response_size = std::min(c.max_response_size, l.max_response_size);
    out.max_response_size_cached = std::min(c.max_response_size_cached, out.max_response_size);
    if (!c.rdma_ird.empty()) out.rdma_ird = {std::min(c.rdma_ird[0], l.max_rdma_ird)};
    return out;
}

}  // namespace

CreateSessionResult ClientTable::create_session(const CreateSessionArgs& a) {
    CreateSessionResult out;
    // csa_flags: only PERSIST, CONN_BACK_CHAN and CONN_RDMA are defined (§18.36.1); any other
    // bit is NFS4ERR_INVAL before anything is looked at, as the Linux server answers.
    constexpr uint32_t kFlags = x4::CREATE_SESSION4_FLAG_PERSIST |
                                x4::CREATE_SESSION4_FLAG_CONN_BACK_CHAN |
                                x4::CREATE_SESSION4_FLAG_CONN_RDMA;
    if ((a.flags & ~kFlags) != 0) {
        out.status = x4::NFS4ERR_INVAL;
        return out;
    }
    // ca_rdma_ird<1>: "This array has a maximum of one element" (§18.36.3).
    if (a.fore.rdma_ird.size() > 1 || a.back.rdma_ird.size() > 1) {
        out.status = x4::NFS4ERR_INVAL;
        return out;
    }
    std::lock_guard lock(mu_);
    const Time now = clock_.now();

    // §18.36.4 phase 1, client record look up: no record with clientid_arg (another boot, never
    // issued, purged, or an unconfirmed record past its lease) is NFS4ERR_STALE_CLIENTID.
    Record* r = find(a.clientid);
    if (r && !r->confirmed) r = live_unconfirmed(r->id, now);
    if (!r) {
        out.status = x4::NFS4ERR_STALE_CLIENTID;
        return out;
    }

    // Phase 2, sequence ID processing: the slot's sequence → the cached result (a replay, or
    // the contrived SEQ_MISORDERED EXCHANGE_ID left); anything but the slot's + 1 →
    // NFS4ERR_SEQ_MISORDERED, the slot unchanged.
    if (a.sequence == r->cs_sequence) {
        out = r->cs_cached;
        out.replay = true;
        return out;
    }
    if (a.sequence != static_cast<uint32_t>(r->cs_sequence + 1)) {
        out.status = x4::NFS4ERR_SEQ_MISORDERED;
        return out;
    }

    // Phase 3, client ID confirmation. Unsuccessful confirmation: the record was made by
    // another principal ("Processing stops and NFS4ERR_CLID_INUSE is returned ... No changes
    // are made"). A confirmed record is checked only for SP4_MACH_CRED (§18.35.3).
    if (!r->confirmed && r->principal != a.principal) {
        out.status = x4::NFS4ERR_CLID_INUSE;
        return out;
    }
    if (r->confirmed && enforced(*r, x4::OP_CREATE_SESSION, a.principal)) {
        out.status = x4::NFS4ERR_WRONG_CRED;
        return out;
    }

    // Phase 4, session creation. Errors here change nothing, so a retry is executed again.
    ChannelAttrs fore;
    out.status = clamp_fore(a.fore, limits_.fore, fore);
    if (out.status == x4::NFS4_OK) out.status = check_back(a.back, limits_.fore);
    CallbackParams cb{a.cb_program};
    if (out.status == x4::NFS4_OK) out.status = choose_callback_security(a.cb_sec_parms, cb);
    if (out.status != x4::NFS4_OK) return out;
    if (r->sessions.size() >= limits_.max_sessions_per_client) {
        out.status = kTooManySessions;
        return out;
    }
    // PERSIST (no persistent reply cache) and CONN_RDMA (no step-up) are never granted;
    // CONN_BACK_CHAN only when the daemon runs a backchannel (§18.36.3).
    out.flags = (a.flags & x4::CREATE_SESSION4_FLAG_CONN_BACK_CHAN) && limits_.fore.backchannel
                    ? x4::CREATE_SESSION4_FLAG_CONN_BACK_CHAN
                    : 0;
    out.fore = fore;
    out.back = clamp_back(a.back, limits_.fore);
    out.sequence = a.sequence;
    out.sessionid = new_sessionid(r->id);

    // Successful confirmation: the unconfirmed record becomes the confirmed one; a confirmed
    // record of the previous incarnation (EXCHANGE_ID case 5) is destroyed with its sessions
    // and state, which the caller releases elsewhere too (`purged`).
    if (!r->confirmed) {
        Owner& o = owners_[r->ownerid];
        if (o.confirmed && *o.confirmed != r->id) {
            out.purged = *o.confirmed;
            remove_record(*o.confirmed);
        }
        o.confirmed = r->id;
        o.unconfirmed.reset();
        r->confirmed = true;
    }
    auto session = std::make_shared<Session>(out.sessionid, r->id, out.fore, out.back, out.flags,
                                             limits_.max_connections_per_session);
    session->set_callback(cb);
    x4::channel_dir_from_server4 dir;
    session->bind(a.conn,
                  out.flags ? x4::CDFC4_FORE_OR_BOTH : x4::CDFC4_FORE,  // §18.36.3
                  dir);
    sessions_.emplace(out.sessionid, std::move(session));
    r->sessions.push_back(out.sessionid);
    renew(*r, now);

    r->cs_sequence = a.sequence;
    r->cs_cached = out;
    r->cs_cached.purged.reset();  // a replay must not purge twice
    return out;
}

}  // namespace nfsrdmad::nfs::v4::state
