#include "nfs/v4/state/stateid_table.h"

#include "nfs/v4/state/limits.h"

namespace nfsrdmad::nfs::v4::state {

namespace {

void put32(uint8_t* p, uint32_t v) {
    p[0] = static_cast<uint8_t>(v >> 24);
    p[1] = static_cast<uint8_t>(v >> 16);
    p[2] = static_cast<uint8_t>(v >> 8);
    p[3] = static_cast<uint8_t>(v);
}

uint32_t get32(const uint8_t* p) {
    return uint32_t{p[0]} << 24 | uint32_t{p[1]} << 16 | uint32_t{p[2]} << 8 | p[3];
}

}  // namespace

StateidTable::StateidTable(uint32_t epoch, size_t max_total, size_t max_per_client, uint64_t seed)
    : epoch_(epoch),
      max_total_(max_total),
      max_per_client_(max_per_client),
      rng_(static_cast<std::mt19937::result_type>(seed ^ (seed >> 32))) {}

Stateid StateidTable::make(uint32_t index) const {
    Stateid s;
    s.seqid = entries_[index].seqid;
    put32(s.other.data(), epoch_);
    put32(s.other.data() + 4, index);
    put32(s.other.data() + 8, entries_[index].generation);
    return s;
}

StateidTable::Result StateidTable::allocate(ClientId client, StateKind kind) {
    Result r;
    auto& mine = by_client_[client];
    if (used_ >= max_total_ || mine.size() >= max_per_client_) {
        if (mine.empty()) by_client_.erase(client);
        r.status = kTooManyStateids;
        return r;
    }
    uint32_t index;
    if (!free_.empty()) {
        index = free_.back();
        free_.pop_back();
    } else {
        index = static_cast<uint32_t>(entries_.size());
        // A fresh index starts at a random generation: a guessed "other" rarely matches.
        entries_.push_back(Entry{.generation = static_cast<uint32_t>(rng_())});
    }
    Entry& e = entries_[index];
    e.used = true;
    e.client = client;
    e.kind = kind;
    e.seqid = 1;
    e.revoked = x4::NFS4_OK;
    mine.insert(index);
    ++used_;
    r.stateid = make(index);
    r.kind = kind;
    return r;
}

const StateidTable::Entry* StateidTable::find(ClientId client, const Stateid& s, Status& status,
                                              uint32_t* index) const {
    if (classify(s) != Special::None) {
        status = x4::NFS4ERR_BAD_STATEID;
        return nullptr;
    }
    if (get32(s.other.data()) != epoch_) {
        status = x4::NFS4ERR_STALE_STATEID;
        return nullptr;
    }
    const uint32_t i = get32(s.other.data() + 4);
    if (i >= entries_.size() || !entries_[i].used ||
        entries_[i].generation != get32(s.other.data() + 8) || entries_[i].client != client) {
        status = x4::NFS4ERR_BAD_STATEID;
        return nullptr;
    }
    if (index) *index = i;
    status = x4::NFS4_OK;
    return &entries_[i];
}

StateidTable::Result StateidTable::check(ClientId client, const Stateid& s, KindMask kinds) const {
    Result r;
    uint32_t index = 0;
    const Entry* e = find(client, s, r.status, &index);
    if (!e) return r;
    r.kind = e->kind;
    r.stateid = make(index);
    if (e->revoked != x4::NFS4_OK)
        r.status = e->revoked;
    else if ((mask_of(e->kind) & kinds) == 0 || s.seqid > e->seqid)
        r.status = x4::NFS4ERR_BAD_STATEID;
    else if (s.seqid != 0 && s.seqid < e->seqid)
        r.status = x4::NFS4ERR_OLD_STATEID;
    return r;
}

StateidTable::Result StateidTable::bump(ClientId client, const Stateid& s) {
    Result r = check(client, s, kAnyKind);
    if (r.status != x4::NFS4_OK) return r;
    const uint32_t i = get32(s.other.data() + 4);
    Entry& e = entries_[i];
    e.seqid = e.seqid == 0xffffffffu ? 1 : e.seqid + 1;
    r.stateid = make(i);
    return r;
}

Status StateidTable::release(ClientId client, const Stateid& s) {
    Result r = check(client, s, kAnyKind);
    if (r.status != x4::NFS4_OK) return r.status;
    erase(get32(s.other.data() + 4));
    return x4::NFS4_OK;
}

Status StateidTable::free_stateid(ClientId client, const Stateid& s, bool holds_locks) {
    Status status;
    uint32_t index = 0;
    const Entry* e = find(client, s, status, &index);
    if (!e) return status;
    if (e->revoked == x4::NFS4_OK && (e->kind != StateKind::Lock || holds_locks))
        return x4::NFS4ERR_LOCKS_HELD;
    erase(index);
    return x4::NFS4_OK;
}

std::vector<Status> StateidTable::test(ClientId client, std::span<const Stateid> ids) const {
    std::vector<Status> out;
    out.reserve(ids.size());
    // §18.48.3: "Any possible association with a previous instance of the client (as stale
    // stateids) is not considered": a stateid of another boot is one this client does not
    // have, BAD_STATEID (STALE_STATEID is not among the codes TEST_STATEID returns).
    for (const Stateid& s : ids) {
        const Status st = check(client, s, kAnyKind).status;
        out.push_back(st == x4::NFS4ERR_STALE_STATEID ? x4::NFS4ERR_BAD_STATEID : st);
    }
    return out;
}

Status StateidTable::revoke(const Stateid& s, Status reason) {
    if (classify(s) != Special::None || get32(s.other.data()) != epoch_)
        return x4::NFS4ERR_BAD_STATEID;
    const uint32_t i = get32(s.other.data() + 4);
    if (i >= entries_.size() || !entries_[i].used ||
        entries_[i].generation != get32(s.other.data() + 8))
        return x4::NFS4ERR_BAD_STATEID;
    if (reason != x4::NFS4ERR_EXPIRED && reason != x4::NFS4ERR_ADMIN_REVOKED &&
        reason != x4::NFS4ERR_DELEG_REVOKED)
        return x4::NFS4ERR_INVAL;
    count_revoked(entries_[i], -1);
    entries_[i].revoked = reason;
    count_revoked(entries_[i], +1);
    return x4::NFS4_OK;
}

void StateidTable::count_revoked(const Entry& e, int delta) {
    if (e.revoked == x4::NFS4_OK) return;
    Revoked& r = revoked_[e.client];
    uint32_t& n = e.revoked == x4::NFS4ERR_EXPIRED         ? r.expired
                  : e.revoked == x4::NFS4ERR_ADMIN_REVOKED ? r.admin
                                                           : r.deleg;
    n = delta > 0 ? n + 1 : n - 1;
    if (r.expired == 0 && r.admin == 0 && r.deleg == 0) revoked_.erase(e.client);
}

uint32_t StateidTable::revoked_flags(ClientId client) const {
    auto it = revoked_.find(client);
    if (it == revoked_.end()) return 0;
    const Revoked& r = it->second;
    return (r.expired ? x4::SEQ4_STATUS_EXPIRED_SOME_STATE_REVOKED : 0) |
           (r.admin ? x4::SEQ4_STATUS_ADMIN_STATE_REVOKED : 0) |
           (r.deleg ? x4::SEQ4_STATUS_RECALLABLE_STATE_REVOKED : 0);
}

size_t StateidTable::count(ClientId client) const {
    auto it = by_client_.find(client);
    return it == by_client_.end() ? 0 : it->second.size();
}

void StateidTable::erase(uint32_t index) {
    Entry& e = entries_[index];
    count_revoked(e, -1);
    auto it = by_client_.find(e.client);
    if (it != by_client_.end()) {
        it->second.erase(index);
        if (it->second.empty()) by_client_.erase(it);
    }
    e.used = false;
    ++e.generation;
    --used_;
    free_.push_back(index);
}

void StateidTable::drop_client(ClientId client) {
    auto it = by_client_.find(client);
    if (it == by_client_.end()) return;
    const std::vector<uint32_t> indices(it->second.begin(), it->second.end());
    for (uint32_t i : indices) erase(i);
}

}  // namespace nfsrdmad::nfs::v4::state
