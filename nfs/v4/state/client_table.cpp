// Client records, DESTROY_CLIENTID, leases and the stateid wrappers of ClientTable.
// EXCHANGE_ID, CREATE_SESSION and the session operations are in their own files.
#include "nfs/v4/state/client_table.h"

#include <algorithm>
#include <tuple>

namespace nfsrdmad::nfs::v4::state {

ClientTable::ClientTable(const Clock& clock, uint32_t epoch, Limits limits, uint64_t seed)
    : clock_(clock),
      epoch_(epoch),
      limits_(std::move(limits)),
      rng_(seed),
      stateids_(epoch, limits_.max_stateids, limits_.max_stateids_per_client, seed) {}

ClientTable::Record* ClientTable::find(ClientId id) {
    if (epoch_of(id) != epoch_) return nullptr;
    auto it = records_.find(id);
    return it == records_.end() ? nullptr : &it->second;
}

const ClientTable::Record* ClientTable::find(ClientId id) const {
    return const_cast<ClientTable*>(this)->find(id);
}

// The unconfirmed record `id`, unless it has outlived its lease: then it is dropped
// (§18.35.4: "Any unconfirmed record that is not confirmed within a lease period SHOULD be
// removed").
ClientTable::Record* ClientTable::live_unconfirmed(std::optional<ClientId> id, Time now) {
    if (!id) return nullptr;
    Record* r = find(*id);
    if (r && !r->confirmed && expired(*r, now)) {
        remove_record(*id);
        return nullptr;
    }
    return r;
}

bool ClientTable::make_room(Time now) {
    if (records_.size() < limits_.max_clients) return true;
    std::vector<ClientId> stale;
    for (const auto& [id, r] : records_)
        if (!r.confirmed && expired(r, now)) stale.push_back(id);
    for (ClientId id : stale) remove_record(id);
    return records_.size() < limits_.max_clients;
}

ClientTable::Record& ClientTable::add_record(const ExchangeIdArgs& a, Time now) {
    const ClientId id = ClientId{epoch_} << 32 | ++next_client_;
    Record& r = records_[id];
    r.id = id;
    r.ownerid = a.ownerid;
    r.verifier = a.verifier;
    r.principal = a.principal;
    // §13.1: a server that is neither a pNFS metadata nor data server answers USE_NON_PNFS.
    // SUPP_MOVED_*, BIND_PRINC_STATEID: not offered.
    r.flags = x4::EXCHGID4_FLAG_USE_NON_PNFS;
    r.how = a.how;
    if (a.how == x4::SP4_MACH_CRED) {
        // §18.35.3: the reply's spo_must_enforce MUST include the operations the client asked
        // for from {EXCHANGE_ID, CREATE_SESSION, DELEGPURGE, DESTROY_SESSION,
        // BIND_CONN_TO_SESSION, DESTROY_CLIENTID}; beyond those, what the server enforces.
        OpSet enforceable = limits_.mach_enforceable;
        for (uint32_t op :
             {x4::OP_EXCHANGE_ID, x4::OP_CREATE_SESSION, x4::OP_DELEGPURGE, x4::OP_DESTROY_SESSION,
              x4::OP_BIND_CONN_TO_SESSION, x4::OP_DESTROY_CLIENTID})
            op_add(enforceable, op);
        r.must_enforce = op_intersect(a.must_enforce, enforceable);
        r.must_allow = op_intersect(a.must_allow, limits_.mach_allowable);
    }
    // §18.36.4: the CREATE_SESSION slot starts at eir_sequenceid - 1 with a contrived cached
    // result of NFS4ERR_SEQ_MISORDERED. eir_sequenceid is 1.
    r.cs_sequence = 0;
    r.cs_cached.status = x4::NFS4ERR_SEQ_MISORDERED;
    r.expiry.store(now + limits_.lease);
    owners_[a.ownerid].unconfirmed = id;
    return r;
}

void ClientTable::remove_record(ClientId id) {
    auto it = records_.find(id);
    if (it == records_.end()) return;
    Record& r = it->second;
    for (const SessionId& sid : r.sessions) {
        auto s = sessions_.find(sid);
        if (s == sessions_.end()) continue;
        s->second->mark_dead();
        sessions_.erase(s);
    }
    stateids_.drop_client(id);
    auto o = owners_.find(r.ownerid);
    if (o != owners_.end()) {
        if (o->second.confirmed == id) o->second.confirmed.reset();
        if (o->second.unconfirmed == id) o->second.unconfirmed.reset();
        if (!o->second.confirmed && !o->second.unconfirmed) owners_.erase(o);
    }
    records_.erase(it);
}

// Sessions count as state: a client that has one is using the record.
bool ClientTable::has_state(const Record& r) const {
    return !r.sessions.empty() || stateids_.count(r.id) != 0;
}

bool ClientTable::enforced(const Record& r, uint32_t op, const std::string& principal) const {
    return r.how == x4::SP4_MACH_CRED && op_in(r.must_enforce, op) && principal != r.principal;
}

ExchangeIdResult ClientTable::result_of(const Record& r) const {
    ExchangeIdResult out;
    out.clientid = r.id;
    out.sequenceid = r.cs_sequence + 1;
    out.flags = r.flags | (r.confirmed ? x4::EXCHGID4_FLAG_CONFIRMED_R : 0);
    out.how = r.how;
    out.must_enforce = r.must_enforce;
    out.must_allow = r.must_allow;
    return out;
}

bool ClientTable::expired(const Record& r, Time now) const {
    if (r.expiry.load() > now) return false;
    for (const SessionId& sid : r.sessions) {
        auto s = sessions_.find(sid);
        if (s != sessions_.end() && s->second->in_progress()) return false;
    }
    return true;
}

// Every SEQUENCE renews, from any thread: the record's line is written only when the lease
// moves on (a tick of the coarse clock) or was a courtesy client's, so SEQUENCEs of one
// client on several cores mostly read it. A lease never moves back.
void ClientTable::renew(Record& r, Time now) {
    const Time until = now + limits_.lease;
    if (r.expiry.load() < until) r.expiry.store(until);
    if (r.courtesy.load()) r.courtesy.store(false);
}

SessionId ClientTable::new_sessionid(ClientId id) {
    // epoch | client counter | session counter | 32 random bits: unique per boot and hard
    // to guess.
    SessionId s{};
    const uint32_t words[4] = {epoch_, static_cast<uint32_t>(id), ++next_session_,
                               static_cast<uint32_t>(rng_())};
    for (int w = 0; w < 4; ++w)
        for (int b = 0; b < 4; ++b) s[w * 4 + b] = static_cast<uint8_t>(words[w] >> (24 - 8 * b));
    return s;
}

Status ClientTable::destroy_clientid(ClientId id, const std::string& principal) {
    std::lock_guard lock(mu_);
    Record* r = find(id);
    // §18.50.3: an unknown client ID is NFS4ERR_STALE_CLIENTID.
    if (!r) return x4::NFS4ERR_STALE_CLIENTID;
    if (enforced(*r, x4::OP_DESTROY_CLIENTID, principal)) return x4::NFS4ERR_WRONG_CRED;
    // §18.50.3: a client ID with sessions or state is NFS4ERR_CLIENTID_BUSY.
    if (has_state(*r)) return x4::NFS4ERR_CLIENTID_BUSY;
    remove_record(id);
    return x4::NFS4_OK;
}

Status ClientTable::check_mach_cred(ClientId id, uint32_t op, const std::string& principal) const {
    std::shared_lock lock(mu_);
    const Record* r = find(id);
    if (!r) return x4::NFS4ERR_STALE_CLIENTID;
    return enforced(*r, op, principal) ? x4::NFS4ERR_WRONG_CRED : x4::NFS4_OK;
}

bool ClientTable::mach_allowed(ClientId id, std::span<const uint32_t> ops,
                               const std::string& principal) const {
    std::shared_lock lock(mu_);
    const Record* r = find(id);
    if (!r || r->how != x4::SP4_MACH_CRED || principal != r->principal) return false;
    return std::any_of(ops.begin(), ops.end(),
                       [&](uint32_t op) { return op_in(r->must_allow, op); });
}

Status ClientTable::lease_status(ClientId id) const {
    const Record* r = find(id);
    if (!r || !r->confirmed) return x4::NFS4ERR_BAD_STATEID;
    return expired(*r, clock_.now()) ? x4::NFS4ERR_EXPIRED : x4::NFS4_OK;
}

StateidTable::Result ClientTable::new_stateid(ClientId id, StateKind kind) {
    std::lock_guard lock(mu_);
    StateidTable::Result r;
    r.status = lease_status(id);
    if (r.status != x4::NFS4_OK) return r;
    return stateids_.allocate(id, kind);
}

StateidTable::Result ClientTable::check_stateid(ClientId id, const Stateid& s,
                                                KindMask kinds) const {
    std::shared_lock lock(mu_);
    StateidTable::Result r = stateids_.check(id, s, kinds);
    if (r.status == x4::NFS4_OK) r.status = lease_status(id);
    return r;
}

StateidTable::Result ClientTable::bump_stateid(ClientId id, const Stateid& s) {
    std::lock_guard lock(mu_);
    StateidTable::Result r;
    r.status = lease_status(id);
    if (r.status != x4::NFS4_OK) return r;
    return stateids_.bump(id, s);
}

Status ClientTable::release_stateid(ClientId id, const Stateid& s) {
    std::lock_guard lock(mu_);
    return stateids_.release(id, s);
}

Status ClientTable::free_stateid(ClientId id, const Stateid& s, bool holds_locks) {
    std::lock_guard lock(mu_);
    return stateids_.free_stateid(id, s, holds_locks);
}

std::vector<Status> ClientTable::test_stateids(ClientId id, std::span<const Stateid> ids) const {
    std::shared_lock lock(mu_);
    std::vector<Status> out = stateids_.test(id, ids);
    const Status lease = lease_status(id);
    for (Status& s : out)
        if (s == x4::NFS4_OK) s = lease;
    return out;
}

Status ClientTable::revoke_stateid(const Stateid& s, Status reason) {
    std::lock_guard lock(mu_);
    return stateids_.revoke(s, reason);
}

std::vector<ClientId> ClientTable::expired_clients() {
    std::lock_guard lock(mu_);
    const Time now = clock_.now();
    std::vector<ClientId> out, stale;
    for (auto& [id, r] : records_) {
        if (!expired(r, now)) continue;
        if (!r.confirmed) {
            stale.push_back(id);
            continue;
        }
        r.courtesy.store(true);
        out.push_back(id);
    }
    for (ClientId id : stale) remove_record(id);
    std::sort(out.begin(), out.end());
    return out;
}

bool ClientTable::may_reap(ClientId id) const {
    std::shared_lock lock(mu_);
    const Record* r = find(id);
    return r && expired(*r, clock_.now());
}

bool ClientTable::courtesy(ClientId id) const {
    std::shared_lock lock(mu_);
    const Record* r = find(id);
    return r && r->courtesy.load();
}

bool ClientTable::reap(ClientId id) {
    std::lock_guard lock(mu_);
    const Record* r = find(id);
    if (!r || !expired(*r, clock_.now())) return false;
    remove_record(id);
    return true;
}

std::vector<std::pair<ClientId, Time>> ClientTable::courtesy_clients() const {
    std::shared_lock lock(mu_);
    std::vector<std::pair<ClientId, Time>> out;
    for (const auto& [id, r] : records_)
        if (r.courtesy.load()) out.emplace_back(id, r.expiry.load());
    std::sort(out.begin(), out.end(),
              [](const auto& a, const auto& b) { return std::tie(a.second, a.first) < std::tie(b.second, b.first); });
    return out;
}

std::optional<Time> ClientTable::next_expiry() const {
    std::shared_lock lock(mu_);
    std::optional<Time> out;
    for (const auto& [id, r] : records_)
        if (!r.courtesy.load() && (!out || r.expiry.load() < *out)) out = r.expiry.load();
    return out;
}

void ClientTable::set_external_status_flags(ClientId id, uint32_t flags) {
    std::lock_guard lock(mu_);
    if (Record* r = find(id)) r->external_flags = flags;
}

size_t ClientTable::client_count() const {
    std::shared_lock lock(mu_);
    return records_.size();
}

ClientTable::Totals ClientTable::totals() const {
    std::shared_lock lock(mu_);
    Totals t{records_.size(), sessions_.size(), stateids_.size(), 0};
    for (const auto& [id, r] : records_) t.mach_cred += r.how == x4::SP4_MACH_CRED;
    return t;
}

bool ClientTable::confirmed(ClientId id) const {
    std::shared_lock lock(mu_);
    const Record* r = find(id);
    return r && r->confirmed;
}

Status ClientTable::reclaim_complete(ClientId id) {
    std::lock_guard lock(mu_);
    Record* r = find(id);
    if (!r || !r->confirmed) return x4::NFS4ERR_STALE_CLIENTID;
    if (r->reclaim_complete) return x4::NFS4ERR_COMPLETE_ALREADY;
    r->reclaim_complete = true;
    return x4::NFS4_OK;
}

bool ClientTable::reclaim_done(ClientId id) const {
    std::shared_lock lock(mu_);
    const Record* r = find(id);
    return r && r->reclaim_complete;
}

std::optional<std::string> ClientTable::ownerid(ClientId id) const {
    std::shared_lock lock(mu_);
    const Record* r = find(id);
    if (!r) return std::nullopt;
    return r->ownerid;
}

size_t ClientTable::session_count(ClientId id) const {
    std::shared_lock lock(mu_);
    const Record* r = find(id);
    return r ? r->sessions.size() : 0;
}

}  // namespace nfsrdmad::nfs::v4::state
