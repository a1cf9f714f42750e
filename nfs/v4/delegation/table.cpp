#include "nfs/v4/delegation/table.h"

#include <algorithm>

#include "nfs/vfs/sys.h"

namespace nfsrdmad::nfs::v4 {

DelegationTable::FileKey DelegationTable::key_of(const vfs::FileHandle& f) {
    auto d = f.data();
    return FileKey(d.begin(), d.end());
}

void DelegationTable::forget_cooldowns(state::Time now) {
    // Bounded by the delegations there were: a file enters on a conflict with one.
    if (conflicted_.size() < 4096) return;
    std::erase_if(conflicted_, [&](const auto& kv) { return now - kv.second >= kCooldown; });
}

bool DelegationTable::may_grant(const vfs::FileHandle& file, state::ClientId client, bool write,
                                state::Time now) const {
    std::lock_guard l(mu_);
    if (by_id_.size() >= max_) return false;
    const FileKey key = key_of(file);
    if (auto c = conflicted_.find(key); c != conflicted_.end() && now - c->second < kCooldown)
        return false;
    auto it = by_file_.find(key);
    if (it == by_file_.end()) return true;
    for (const Other& o : it->second) {
        const Delegation& d = by_id_.at(o);
        if (d.client == client) return false;  // one per client and file
        if (d.write || write || d.recalled) return false;
    }
    return true;
}

void DelegationTable::put(Delegation d) {
    std::lock_guard l(mu_);
    const Other id = d.stateid.other;
    by_file_[key_of(d.file)].push_back(id);
    if (d.lease) by_lease_[d.lease->fd()] = id;
    writes_ += d.write;
    recalling_ += d.recalled.has_value();
    by_id_.insert_or_assign(id, std::move(d));
    count_.store(by_id_.size(), std::memory_order_relaxed);
}

std::optional<Delegation> DelegationTable::find(const Other& other) const {
    std::lock_guard l(mu_);
    auto it = by_id_.find(other);
    if (it == by_id_.end()) return std::nullopt;
    return it->second;
}

DelegationTable::AttrQuery DelegationTable::query_attrs(const vfs::FileHandle& file,
                                                        state::ClientId by, state::Time now,
                                                        std::chrono::steady_clock::duration fresh) {
    AttrQuery out;
    std::lock_guard l(mu_);
    if (writes_ == 0) return out;
    auto it = by_file_.find(key_of(file));
    if (it == by_file_.end()) return out;
    for (const Other& o : it->second) {
        Delegation& d = by_id_.at(o);
        if (!d.write || (by != 0 && d.client == by)) continue;
        if (d.recalled) {
            out.kind = AttrQuery::Wait;
        } else if (d.answered && now - *d.answered < fresh) {
            out.kind = AttrQuery::Answer;
        } else if (d.asked && now - *d.asked < fresh) {
            out.kind = AttrQuery::Wait;
        } else {
            d.asked = now;
            out.kind = AttrQuery::Ask;
        }
        out.d = d;
        return out;  // a write delegation is the only one on its file
    }
    return out;
}

std::optional<Delegation> DelegationTable::answered(const Other& other, bool modified,
                                                    uint64_t size, uint64_t cc, state::Time now) {
    std::lock_guard l(mu_);
    auto it = by_id_.find(other);
    if (it == by_id_.end()) return std::nullopt;
    Delegation& d = it->second;
    d.modified = modified;
    if (!d.change) d.change = cc;
    d.size = size;
    d.answered = now;
    d.asked.reset();
    return d;
}

std::optional<Delegation> DelegationTable::recall(const Other& other, state::Time now) {
    std::lock_guard l(mu_);
    auto it = by_id_.find(other);
    if (it == by_id_.end()) return std::nullopt;
    it->second.asked.reset();
    if (!mark_recalled(it->second, now)) return std::nullopt;
    return it->second;
}

std::vector<std::pair<state::ClientId, size_t>> DelegationTable::holders() const {
    std::unordered_map<state::ClientId, size_t> n;
    {
        std::lock_guard l(mu_);
        for (const auto& [id, d] : by_id_)
            if (!d.recalled) ++n[d.client];
    }
    return {n.begin(), n.end()};
}

std::optional<Delegation> DelegationTable::erase(const Other& other) {
    std::lock_guard l(mu_);
    auto it = by_id_.find(other);
    if (it == by_id_.end()) return std::nullopt;
    Delegation d = std::move(it->second);
    by_id_.erase(it);
    if (auto f = by_file_.find(key_of(d.file)); f != by_file_.end()) {
        std::erase(f->second, other);
        if (f->second.empty()) by_file_.erase(f);
    }
    if (d.lease) by_lease_.erase(d.lease->fd());
    writes_ -= d.write;
    recalling_ -= d.recalled.has_value();
    count_.store(by_id_.size(), std::memory_order_relaxed);
    return d;
}

DelegationTable::Conflict DelegationTable::conflict(const vfs::FileHandle& file, state::ClientId by,
                                                    bool write, state::Time now) {
    Conflict out;
    std::lock_guard l(mu_);
    const FileKey key = key_of(file);
    auto it = by_file_.find(key);
    if (it == by_file_.end()) return out;
    for (const Other& o : it->second) {
        Delegation& d = by_id_.at(o);
        if (by != 0 && d.client == by) continue;  // the holder's own access
        if (!write && !d.write) continue;         // reading beside a read delegation
        out.blocked = true;
        if (mark_recalled(d, now)) out.to_recall.push_back(d);  // else under way already
    }
    if (out.blocked) {
        forget_cooldowns(now);
        conflicted_[key] = now;
    }
    return out;
}

bool DelegationTable::mark_recalled(Delegation& d, state::Time now) {
    if (d.recalled) return false;
    d.recalled = now;
    ++recalling_;
    forget_cooldowns(now);
    conflicted_[key_of(d.file)] = now;
    return true;
}

std::optional<Delegation> DelegationTable::recall_lease(int fd, state::Time now) {
    std::lock_guard l(mu_);
    auto it = by_lease_.find(fd);
    if (it == by_lease_.end()) return std::nullopt;
    Delegation& d = by_id_.at(it->second);
    // The signal may be for an earlier lease whose descriptor number this one reuses: only
    // a lease that is breaking counts.
    if (!d.lease->breaking() || !mark_recalled(d, now)) return std::nullopt;
    return d;
}

std::vector<Delegation> DelegationTable::recall_breaking_leases(state::Time now) {
    std::vector<Delegation> out;
    std::lock_guard l(mu_);
    for (const auto& [fd, id] : by_lease_) {
        Delegation& d = by_id_.at(id);
        if (!d.recalled && d.lease->breaking() && mark_recalled(d, now)) out.push_back(d);
    }
    return out;
}

template <class Pred>
std::vector<Delegation> DelegationTable::erase_where(Pred&& pred) {
    std::vector<Other> ids;
    {
        std::lock_guard l(mu_);
        for (const auto& [id, d] : by_id_)
            if (pred(d)) ids.push_back(id);
    }
    std::vector<Delegation> out;
    for (const Other& id : ids)
        if (auto d = erase(id)) out.push_back(std::move(*d));
    return out;
}

std::vector<Delegation> DelegationTable::overdue(state::Time deadline) {
    if (!recalling()) return {};
    return erase_where([&](const Delegation& d) { return d.recalled && *d.recalled <= deadline; });
}

bool DelegationTable::write_delegated(const vfs::FileHandle& file) const {
    std::lock_guard l(mu_);
    if (writes_ == 0) return false;
    auto it = by_file_.find(key_of(file));
    if (it == by_file_.end()) return false;
    for (const Other& o : it->second)
        if (by_id_.at(o).write) return true;
    return false;
}

std::optional<bool> DelegationTable::held_by(const vfs::FileHandle& file,
                                             state::ClientId client) const {
    std::lock_guard l(mu_);
    auto it = by_file_.find(key_of(file));
    if (it == by_file_.end()) return std::nullopt;
    for (const Other& o : it->second)
        if (const Delegation& d = by_id_.at(o); d.client == client) return d.write;
    return std::nullopt;
}

bool DelegationTable::recalling() const {
    std::lock_guard l(mu_);
    return recalling_ != 0;
}

std::vector<Delegation> DelegationTable::forget_client(state::ClientId client) {
    return erase_where([&](const Delegation& d) { return d.client == client; });
}

std::vector<Delegation> DelegationTable::erase_removed(const Held& held) {
    std::vector<Delegation> out;
    for (const auto& [id, fd] : held) {
        auto st = vfs::sys::stat_fd(fd->fd.get());
        if (!st || st->stx_nlink != 0) continue;
        if (auto d = erase(id)) out.push_back(std::move(*d));
    }
    return out;
}

std::vector<Delegation> DelegationTable::forget_removed(state::ClientId client) {
    Held held;
    {
        std::lock_guard l(mu_);
        for (const auto& [id, d] : by_id_)
            if (d.client == client && d.fd) held.emplace_back(id, d.fd);
    }
    return erase_removed(held);
}

std::vector<Delegation> DelegationTable::forget_removed(const vfs::FileHandle& file) {
    Held held;
    {
        std::lock_guard l(mu_);
        if (auto it = by_file_.find(key_of(file)); it != by_file_.end())
            for (const Other& id : it->second)
                if (const Delegation& d = by_id_.at(id); d.fd) held.emplace_back(id, d.fd);
    }
    return erase_removed(held);
}

std::vector<Delegation> DelegationTable::forget_removed_next(size_t n) {
    Held held;
    {
        std::lock_guard l(mu_);
        n = std::min(n, by_id_.size());
        auto it = by_id_.upper_bound(removed_cursor_);
        for (size_t i = 0; i < n; ++i, ++it) {
            if (it == by_id_.end()) it = by_id_.begin();  // around again
            if (it->second.fd) held.emplace_back(it->first, it->second.fd);
            removed_cursor_ = it->first;
        }
    }
    return erase_removed(held);
}

size_t DelegationTable::writes() const {
    std::lock_guard l(mu_);
    return writes_;
}

}  // namespace nfsrdmad::nfs::v4
