#include "nfs/v4/state/session.h"

#include <algorithm>

#include "nfs/v4/state/limits.h"

namespace nfsrdmad::nfs::v4::state {

Session::Session(const SessionId& id, ClientId client, const ChannelAttrs& fore,
                 const ChannelAttrs& back, uint32_t flags, size_t max_connections)
    : id_(id),
      client_(client),
      fore_(fore),
      back_(back),
      flags_(flags),
      max_connections_(max_connections),
      slots_(std::max<uint32_t>(fore.max_requests, 1)),
      target_highest_slotid_(highest_slotid()) {}

CallbackParams Session::callback() const {
    std::lock_guard lock(mu_);
    return callback_;
}

void Session::set_callback(const CallbackParams& cb) {
    std::lock_guard lock(mu_);
    callback_ = cb;
}

Status choose_callback_security(const std::vector<x4::callback_sec_parms4>& parms,
                                CallbackParams& out) {
    // The list is what the client accepts (§18.36.3 csa_sec_parms, §18.33.3): the first
    // entry this server can use is taken. An RPCSEC_GSS entry names a context the client
    // set up with the server's callback service; none exists here, so it is passed over.
    // Only a list of such entries alone is refused (as the Linux server refuses it).
    std::optional<CallbackParams> chosen;
    bool gss = false;
    for (const auto& p : parms) {
        switch (p.cb_secflavor()) {
            case x4::AUTH_NONE:
                if (!chosen) chosen = CallbackParams{out.program, x4::AUTH_NONE, 0, 0};
                break;
            case x4::AUTH_SYS:
                if (!chosen)
                    chosen = CallbackParams{out.program, x4::AUTH_SYS, p.cbsp_sys_cred().uid,
                                            p.cbsp_sys_cred().gid};
                break;
            default:  // RPCSEC_GSS: no context of that handle exists here
                gss = true;
                break;
        }
    }
    if (!chosen && gss) return x4::NFS4ERR_NOENT;
    out = chosen.value_or(CallbackParams{out.program, x4::AUTH_NONE, 0, 0});
    return x4::NFS4_OK;
}

bool Session::fore_bound(ConnId conn) const {
    auto it = conns_.find(conn);
    return it != conns_.end() && it->second != x4::CDFS4_BACK;
}

SlotResult Session::begin(uint32_t slotid, uint32_t seqid, uint32_t highest, bool cachethis,
                          const ConnId* fore) {
    SlotResult r;
    // §18.46.3: a slot id beyond the session's highest slot is NFS4ERR_BADSLOT (no slot to
    // lock: the binding is looked up under mu_).
    if (slotid > highest_slotid()) {
        if (fore) {
            std::lock_guard l(mu_);
            if (!fore_bound(*fore)) {
                r.unbound = true;
                return r;
            }
        }
        r.highest_slotid = highest_slotid();
        r.target_highest_slotid = target_highest_slotid_.load(std::memory_order_relaxed);
        r.status = dead_.load() ? x4::NFS4ERR_BADSESSION : x4::NFS4ERR_BADSLOT;
        return r;
    }
    Slot& s = slots_[slotid];
    std::lock_guard lock(s.mu);
    if (fore &&
        (s.bound_conn != *fore || s.bound_gen != conns_gen_.load(std::memory_order_acquire))) {
        std::lock_guard l(mu_);  // a slot, then mu_
        if (!fore_bound(*fore)) {
            r.unbound = true;
            return r;
        }
        s.bound_conn = *fore;
        s.bound_gen = conns_gen_.load(std::memory_order_relaxed);
    }
    r.highest_slotid = highest_slotid();
    r.target_highest_slotid = target_highest_slotid_.load(std::memory_order_relaxed);
    if (dead_.load()) {
        r.status = x4::NFS4ERR_BADSESSION;
        return r;
    }
    // ... and a sa_highest_slotid beyond it is NFS4ERR_BAD_HIGH_SLOT (§15.1.11).
    if (highest > highest_slotid()) {
        r.status = x4::NFS4ERR_BAD_HIGH_SLOT;
        return r;
    }
    // §18.36.4 phase 4: a new slot holds sequence ID 0 and a contrived cached reply of
    // NFS4ERR_SEQ_MISORDERED, so a first request with seqid 0 gets that.
    if (!s.used && seqid == 0) {
        r.status = x4::NFS4ERR_SEQ_MISORDERED;
        return r;
    }
    if (seqid == s.seqid) {
        // §2.10.6.1, §18.46.3: a retry of the request last executed on the slot.
        if (s.in_progress)
            r.status = x4::NFS4ERR_DELAY;
        else if (!s.reply)
            r.status = x4::NFS4ERR_RETRY_UNCACHED_REP;
        else {
            r.replay = true;
            r.reply = s.reply;
        }
        return r;
    }
    if (seqid != static_cast<uint32_t>(s.seqid + 1)) {  // wraps at 2^32 (§2.10.6.1)
        r.status = x4::NFS4ERR_SEQ_MISORDERED;
        return r;
    }
    // A new request: the previous reply is dropped, the slot is busy until finish().
    r.prior = {s.seqid, s.used, s.cachethis, s.reply};
    s.seqid = seqid;
    s.used = true;
    s.in_progress = true;
    s.cachethis = cachethis;
    s.reply.reset();
    return r;
}

Status Session::finish(uint32_t slotid, uint32_t seqid,
                       std::optional<std::span<const uint8_t>> reply) {
    if (slotid >= slots_.size()) return x4::NFS4ERR_SERVERFAULT;
    Slot& s = slots_[slotid];
    std::lock_guard lock(s.mu);
    if (!s.in_progress || s.seqid != seqid) return x4::NFS4ERR_SERVERFAULT;
    if (reply && s.cachethis) {
        // §2.10.6.4 / §18.36.3 ca_maxresponsesize_cached: bounds the bytes each slot keeps, so
        // the session keeps at most max_requests * ca_maxresponsesize_cached bytes.
        if (reply->size() > fore_.max_response_size_cached) return x4::NFS4ERR_REP_TOO_BIG_TO_CACHE;
        s.reply = std::make_shared<const std::vector<uint8_t>>(reply->begin(), reply->end());
    }
    s.in_progress = false;
    return x4::NFS4_OK;
}

void Session::abandon(uint32_t slotid, uint32_t seqid, const PriorSlot& prior) {
    if (slotid >= slots_.size()) return;
    Slot& s = slots_[slotid];
    std::lock_guard lock(s.mu);
    if (!s.in_progress || s.seqid != seqid) return;
    s.seqid = prior.seqid;
    s.used = prior.used;
    s.cachethis = prior.cachethis;
    s.reply = prior.reply;
    s.in_progress = false;
}

void Session::set_target_highest_slotid(uint32_t target) {
    target_highest_slotid_.store(std::min(target, highest_slotid()), std::memory_order_relaxed);
}

Status Session::try_destroy(std::optional<uint32_t> own) {
    Status st = x4::NFS4_OK;
    for (Slot& s : slots_) s.mu.lock();  // in order; no request begins or ends meanwhile
    if (dead_.load()) {
        st = x4::NFS4ERR_BADSESSION;
    } else {
        // §18.37.3 lets a server refuse while work is outstanding; like the Linux server this
        // one answers NFS4ERR_DELAY while another request of the session is in progress.
        for (uint32_t i = 0; i < slots_.size() && st == x4::NFS4_OK; ++i)
            if (slots_[i].in_progress && (!own || *own != i)) st = x4::NFS4ERR_DELAY;
        if (st == x4::NFS4_OK) dead_.store(true);
    }
    for (Slot& s : slots_) s.mu.unlock();
    if (st != x4::NFS4_OK) return st;
    std::lock_guard lock(mu_);
    conns_.clear();
    bindings_changed();
    return x4::NFS4_OK;
}

bool Session::in_progress() const {
    for (const Slot& s : slots_) {
        std::lock_guard lock(s.mu);
        if (s.in_progress) return true;
    }
    return false;
}

size_t Session::cached_bytes() const {
    size_t n = 0;
    for (const Slot& s : slots_) {
        std::lock_guard lock(s.mu);
        if (s.reply) n += s.reply->size();
    }
    return n;
}

Status Session::bind(ConnId conn, x4::channel_dir_from_client4 dir,
                     x4::channel_dir_from_server4& out, bool rebind) {
    std::lock_guard lock(mu_);
    if (dead_) return x4::NFS4ERR_BADSESSION;
    // §18.34.3: "Invoking BIND_CONN_TO_SESSION on a connection already associated with the
    // specified session has no effect, and the server MUST respond with NFS4_OK, unless the
    // client is demanding changes to the set of channels the connection is associated
    // with. If so, the server MUST return NFS4ERR_INVAL." As the Linux server decides it
    // (nfsd4_match_existing_connection): FORE and BACK must be what the connection has,
    // FORE_OR_BOTH and BACK_OR_BOTH must find their own channel there; a FORE_OR_BOTH on a
    // fore-only connection adds the back channel, so that the Linux client's answer to
    // SEQ4_STATUS_CB_PATH_DOWN (FORE_OR_BOTH on the connection it uses) brings the
    // callback path back.
    if (auto it = conns_.find(conn); rebind && it != conns_.end()) {
        const x4::channel_dir_from_server4 cur = it->second;
        bool stands = false;
        switch (dir) {
            case x4::CDFC4_FORE:
                stands = cur == x4::CDFS4_FORE;
                break;
            case x4::CDFC4_BACK:
                stands = cur == x4::CDFS4_BACK;
                break;
            case x4::CDFC4_FORE_OR_BOTH:
                stands = cur != x4::CDFS4_BACK;
                break;
            case x4::CDFC4_BACK_OR_BOTH:
                stands = cur != x4::CDFS4_FORE;
                break;
            default:
                break;
        }
        if (!stands) return x4::NFS4ERR_INVAL;
        if (dir == x4::CDFC4_FORE_OR_BOTH && cur == x4::CDFS4_FORE) {
            it->second = x4::CDFS4_BOTH;
            bindings_changed();
        }
        out = it->second;
        return x4::NFS4_OK;
    }
    // §18.34.3: the server picks for FORE_OR_BOTH / BACK_OR_BOTH; like the Linux server it
    // grants both. Whether callbacks can use a back-bound connection is the callback layer's
    // business (the session's CONN_BACK_CHAN flag); here binding is bookkeeping.
    switch (dir) {
        case x4::CDFC4_FORE:
            out = x4::CDFS4_FORE;
            break;
        case x4::CDFC4_BACK:
            out = x4::CDFS4_BACK;
            break;
        case x4::CDFC4_FORE_OR_BOTH:
        case x4::CDFC4_BACK_OR_BOTH:
            out = x4::CDFS4_BOTH;
            break;
        default:
            return x4::NFS4ERR_INVAL;
    }
    auto it = conns_.find(conn);
    if (it == conns_.end() && conns_.size() >= max_connections_) return kTooManyConnections;
    // SEQUENCE on a back-only connection binds its fore channel too: it keeps the back one.
    if (it != conns_.end() && it->second != out) out = x4::CDFS4_BOTH;
    conns_[conn] = out;
    bindings_changed();
    return x4::NFS4_OK;
}

bool Session::bound(ConnId conn) const {
    std::lock_guard lock(mu_);
    return conns_.count(conn) != 0;
}

bool Session::unbind(ConnId conn) {
    std::lock_guard lock(mu_);
    bindings_changed();
    return conns_.erase(conn) != 0;
}

size_t Session::connections() const {
    std::lock_guard lock(mu_);
    return conns_.size();
}

void Session::mark_dead() {
    dead_.store(true);
    std::lock_guard lock(mu_);
    conns_.clear();
    bindings_changed();
}

bool Session::dead() const {
    return dead_.load();
}

}  // namespace nfsrdmad::nfs::v4::state
