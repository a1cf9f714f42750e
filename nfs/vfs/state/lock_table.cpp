#include "nfs/vfs/state/lock_table.h"

#include <algorithm>
#include <cassert>
#include <cerrno>
#include <utility>

namespace nfsrdmad::vfs::state {
namespace {

template <class Map, class Key>
size_t count_in(const Map& m, const Key& k) {
    auto it = m.find(k);
    return it == m.end() ? 0 : it->second;
}

template <class Map, class Key>
void set_count(Map& m, const Key& k, size_t v) {
    if (v == 0) {
        m.erase(k);
    } else {
        m[k] = v;
    }
}

bool downgrades(std::span<const Lock> held, const Lock& want) {
    if (want.type != LockType::Read) return false;
    return std::any_of(held.begin(), held.end(), [&](const Lock& l) {
        return l.type == LockType::Write && l.range.overlaps(want.range);
    });
}

bool waiters_conflict(const Waiter& a, const Waiter& b) {
    return !(a.owner == b.owner) && a.lock.range.overlaps(b.lock.range) &&
           types_conflict(a.lock.type, b.lock.type);
}

}  // namespace

LockTable::LockTable(LockLimits limits) : limits_(limits) {}

LockTable::~LockTable() = default;

std::optional<Conflict> LockTable::table_conflict(const FileState& fs, const StateOwner& owner,
                                                  const Lock& want) {
    for (const OwnerEntry& e : fs.owners) {
        if (e.owner == owner) continue;
        if (const Lock* l = first_conflict(e.locks, want.range, want.type)) {
            return Conflict{e.owner, *l};
        }
    }
    return std::nullopt;
}

bool LockTable::adjust_locks(const StateOwner& owner, ptrdiff_t delta) {
    if (delta == 0) return true;
    std::lock_guard lock(count_mu_);
    const size_t o = count_in(owner_locks_, owner);
    const size_t c = count_in(client_locks_, owner.client());
    if (delta > 0) {
        const auto up = static_cast<size_t>(delta);
        if (o + up > limits_.locks_per_owner || c + up > limits_.locks_per_client) return false;
    } else {
        assert(o >= static_cast<size_t>(-delta) && c >= static_cast<size_t>(-delta));
    }
    set_count(owner_locks_, owner, o + delta);
    set_count(client_locks_, owner.client(), c + delta);
    return true;
}

bool LockTable::adjust_waiters(const ClientKey& client, ptrdiff_t delta) {
    std::lock_guard lock(count_mu_);
    const size_t n = count_in(client_waiters_, client);
    if (delta > 0 && n + static_cast<size_t>(delta) > limits_.waiters_per_client) return false;
    assert(delta >= 0 || n >= static_cast<size_t>(-delta));
    set_count(client_waiters_, client, n + delta);
    return true;
}

bool LockTable::enqueue(FileState& fs, const FileKey& file, const StateOwner& owner,
                        const Lock& want, uint64_t cookie) {
    for (Waiter& w : fs.waiters) {
        if (w.owner == owner && w.lock == want) {  // a retransmitted blocking request
            w.cookie = cookie;
            return true;
        }
    }
    if (!adjust_waiters(owner.client(), 1)) return false;
    fs.waiters.push_back(Waiter{file, owner, want, cookie});
    return true;
}

// FIFO per file: a waiter is woken only if no other owner's lock and no earlier waiter
// of another owner (woken now or still waiting) conflicts with it.
std::vector<Waiter> LockTable::wake(FileState& fs) {
    std::vector<Waiter> woken;
    std::vector<bool> go(fs.waiters.size(), false);
    for (size_t i = 0; i < fs.waiters.size(); ++i) {
        const Waiter& w = fs.waiters[i];
        bool blocked = table_conflict(fs, w.owner, w.lock).has_value();
        for (size_t j = 0; j < i && !blocked; ++j) blocked = waiters_conflict(fs.waiters[j], w);
        go[i] = !blocked;
    }
    std::deque<Waiter> kept;
    for (size_t i = 0; i < fs.waiters.size(); ++i) {
        if (go[i]) {
            adjust_waiters(fs.waiters[i].owner.client(), -1);
            woken.push_back(std::move(fs.waiters[i]));
        } else {
            kept.push_back(std::move(fs.waiters[i]));
        }
    }
    fs.waiters = std::move(kept);
    return woken;
}

Result<void> LockTable::unmirror(FileState& fs, std::span<const Lock> freed,
                                 const StateOwner* except) {
    if (!fs.slot || freed.empty()) return {};
    // What the other owners keep within the span of the freed bytes, merged once.
    ByteRange span{freed.front().range.first, freed.front().range.last};
    for (const Lock& f : freed) {
        span.first = std::min(span.first, f.range.first);
        span.last = std::max(span.last, f.range.last);
    }
    std::vector<ByteRange> kept;
    for (const OwnerEntry& e : fs.owners) {
        if (except && e.owner == *except) continue;
        for (const Lock& l : e.locks)
            if (l.range.overlaps(span)) kept.push_back(l.range);
    }
    kept = merge_ranges(std::move(kept));
    // A failure (only the kernel's ENOLCK on a split can cause one) leaves those bytes
    // locked there; the other gaps are still unlocked, and the first error is returned.
    Result<void> first{};
    for (const Lock& f : freed)
        for (const ByteRange& gap : uncovered(f.range, kept))
            if (auto r = fs.slot->unlock(gap); !r && first) first = r;
    return first;
}

void LockTable::settle(FileState& fs, const ClientKey& client) {
    if (!fs.slot) return;
    if (fs.owners.empty()) {
        fs.slot.reset();  // closes it now, under the file's mutex
        return;
    }
    const bool stays = std::any_of(fs.owners.begin(), fs.owners.end(),
                                   [&](const OwnerEntry& e) { return e.owner.client() == client; });
    if (!stays) fs.slot->left(client);
}

Result<LockReply> LockTable::lock(const FileKey& file, const StateOwner& owner, const Lock& want,
                                  std::optional<uint64_t> wait_cookie, LockMirror* mirror) {
    if (want.range.first > want.range.last) return fail(EINVAL);
    Shard& sh = shards_.of(file);
    std::lock_guard guard(sh.mu);
    FileState& fs = sh.files[file];
    LockReply reply;
    // A slot the mirror created for a lock that is not granted goes again at once.
    const bool had_slot = fs.slot != nullptr;
    auto drop_unused_slot = [&] {
        if (!had_slot) fs.slot.reset();
    };

    auto deny = [&](Conflict c) -> Result<LockReply> {
        reply.denied = std::move(c);
        if (wait_cookie) reply.queued = enqueue(fs, file, owner, want, *wait_cookie);
        drop_unused_slot();
        sh.erase_if_empty(file);
        return std::move(reply);
    };
    if (auto c = table_conflict(fs, owner, want)) return deny(std::move(*c));

    auto entry = std::find_if(fs.owners.begin(), fs.owners.end(),
                              [&](const OwnerEntry& e) { return e.owner == owner; });
    const bool known = entry != fs.owners.end();
    std::span<const Lock> held;
    if (known) held = entry->locks;
    OwnerLocks next = apply_lock(held, want.range, want.type);
    const bool changes = !std::ranges::equal(next, held);
    const auto delta = static_cast<ptrdiff_t>(next.size()) - static_cast<ptrdiff_t>(held.size());
    if (changes) {
        if (!adjust_locks(owner, delta)) {
            sh.erase_if_empty(file);
            return fail(ENOLCK);
        }
        if (mirror) {
            auto all_locks = [&] {
                OwnerLocks out;
                for (const OwnerEntry& e : fs.owners)
                    out.insert(out.end(), e.locks.begin(), e.locks.end());
                return out;
            };
            auto m = mirror->lock(fs.slot, owner, all_locks, want);
            if (!m || *m) {
                adjust_locks(owner, -delta);
                if (!m) {
                    drop_unused_slot();
                    sh.erase_if_empty(file);
                    return m.failure();
                }
                return deny(std::move(**m));
            }
        }
        const bool freed = downgrades(held, want);
        if (known) {
            entry->locks = std::move(next);
        } else {
            fs.owners.push_back(OwnerEntry{owner, std::move(next)});
        }
        if (freed) reply.woken = wake(fs);
    }
    // Granted: the owner no longer waits for this lock.
    auto w = std::find_if(fs.waiters.begin(), fs.waiters.end(),
                          [&](const Waiter& x) { return x.owner == owner && x.lock == want; });
    if (w != fs.waiters.end()) {
        fs.waiters.erase(w);
        adjust_waiters(owner.client(), -1);
    }
    sh.erase_if_empty(file);
    return reply;
}

Result<std::optional<Conflict>> LockTable::test(const FileKey& file, const StateOwner& owner,
                                                const Lock& want, LockMirror* mirror) const {
    if (want.range.first > want.range.last) return fail(EINVAL);
    Shard& sh = shards_.of(file);
    std::lock_guard guard(sh.mu);
    const MirrorSlot* slot = nullptr;
    auto f = sh.files.find(file);
    if (f != sh.files.end()) {
        if (auto c = table_conflict(f->second, owner, want)) return c;
        slot = f->second.slot.get();  // holds the table's locks: only outsiders show
    }
    if (mirror) return mirror->test(slot, want);
    return std::optional<Conflict>{};
}

Result<std::vector<Waiter>> LockTable::unlock(const FileKey& file, const StateOwner& owner,
                                              ByteRange range) {
    if (range.first > range.last) return fail(EINVAL);
    Shard& sh = shards_.of(file);
    std::lock_guard guard(sh.mu);
    auto f = sh.files.find(file);
    if (f == sh.files.end()) return std::vector<Waiter>{};
    FileState& fs = f->second;
    auto entry = std::find_if(fs.owners.begin(), fs.owners.end(),
                              [&](const OwnerEntry& e) { return e.owner == owner; });
    if (entry == fs.owners.end()) return std::vector<Waiter>{};
    OwnerLocks next = apply_lock(entry->locks, range, std::nullopt);
    if (next == entry->locks) return std::vector<Waiter>{};  // nothing held there
    const auto delta =
        static_cast<ptrdiff_t>(next.size()) - static_cast<ptrdiff_t>(entry->locks.size());
    if (delta > 0 && !adjust_locks(owner, delta)) return fail(ENOLCK);
    const Lock freed[] = {Lock{range, LockType::Read}};
    if (auto r = unmirror(fs, freed, &owner); !r) {
        if (delta > 0) adjust_locks(owner, -delta);
        return r.failure();
    }
    if (delta < 0) adjust_locks(owner, delta);
    entry->locks = std::move(next);
    if (entry->locks.empty()) {
        fs.owners.erase(entry);
        settle(fs, owner.client());
    }
    std::vector<Waiter> woken = wake(fs);
    sh.erase_if_empty(file);
    return woken;
}

bool LockTable::cancel_wait(const FileKey& file, const StateOwner& owner, const Lock& lock) {
    Shard& sh = shards_.of(file);
    std::lock_guard guard(sh.mu);
    auto f = sh.files.find(file);
    if (f == sh.files.end()) return false;
    auto& q = f->second.waiters;
    auto w = std::find_if(q.begin(), q.end(),
                          [&](const Waiter& x) { return x.owner == owner && x.lock == lock; });
    if (w == q.end()) return false;
    q.erase(w);
    adjust_waiters(owner.client(), -1);
    sh.erase_if_empty(file);
    return true;
}

template <class Pred>
std::vector<Waiter> LockTable::drop_if(FileState& fs, Pred pred, bool waiters_too) {
    bool changed = false;
    std::vector<OwnerEntry> gone;
    for (auto it = fs.owners.begin(); it != fs.owners.end();) {
        if (!pred(it->owner)) {
            ++it;
            continue;
        }
        adjust_locks(it->owner, -static_cast<ptrdiff_t>(it->locks.size()));
        gone.push_back(std::move(*it));
        it = fs.owners.erase(it);
        changed = true;
    }
    // Off the mirror now, under the file's mutex, in one pass over what the remaining
    // owners keep. A failure (the kernel's ENOLCK on a split) leaves bytes locked there
    // until the slot closes with the file's last owner.
    if (!fs.owners.empty() && fs.slot) {
        std::vector<Lock> freed;
        for (const OwnerEntry& e : gone) freed.insert(freed.end(), e.locks.begin(), e.locks.end());
        (void)unmirror(fs, freed, nullptr);
    }
    for (const OwnerEntry& e : gone) settle(fs, e.owner.client());
    if (waiters_too) {
        for (auto it = fs.waiters.begin(); it != fs.waiters.end();) {
            if (!pred(it->owner)) {
                ++it;
                continue;
            }
            adjust_waiters(it->owner.client(), -1);
            it = fs.waiters.erase(it);
            changed = true;  // a later waiter may no longer be behind a conflicting one
        }
    }
    return changed ? wake(fs) : std::vector<Waiter>{};
}

template <class Pred>
std::vector<Waiter> LockTable::drop_everywhere(Pred pred) {
    std::vector<Waiter> woken;
    for (Shard& sh : shards_.all()) {
        std::lock_guard guard(sh.mu);
        for (auto it = sh.files.begin(); it != sh.files.end();) {
            for (Waiter& w : drop_if(it->second, pred, true)) woken.push_back(std::move(w));
            if (it->second.empty()) {
                it = sh.files.erase(it);
            } else {
                ++it;
            }
        }
    }
    return woken;
}

std::vector<Waiter> LockTable::release_owner(const FileKey& file, const StateOwner& owner) {
    Shard& sh = shards_.of(file);
    std::lock_guard guard(sh.mu);
    auto f = sh.files.find(file);
    if (f == sh.files.end()) return {};
    auto woken = drop_if(
        f->second, [&](const StateOwner& o) { return o == owner; }, true);
    sh.erase_if_empty(file);
    return woken;
}

std::vector<Waiter> LockTable::release_owner(const StateOwner& owner) {
    return drop_everywhere([&](const StateOwner& o) { return o == owner; });
}

std::vector<Waiter> LockTable::release_client(const ClientKey& client) {
    return drop_everywhere([&](const StateOwner& o) { return o.client() == client; });
}

std::vector<Waiter> LockTable::release_file(const FileKey& file) {
    Shard& sh = shards_.of(file);
    std::lock_guard guard(sh.mu);
    auto f = sh.files.find(file);
    if (f == sh.files.end()) return {};
    auto woken = drop_if(
        f->second, [](const StateOwner&) { return true; }, false);
    sh.erase_if_empty(file);
    return woken;
}

OwnerLocks LockTable::locks_of(const FileKey& file, const StateOwner& owner) const {
    Shard& sh = shards_.of(file);
    std::lock_guard guard(sh.mu);
    auto f = sh.files.find(file);
    if (f == sh.files.end()) return {};
    for (const OwnerEntry& e : f->second.owners) {
        if (e.owner == owner) return e.locks;
    }
    return {};
}

size_t LockTable::lock_count(const StateOwner& owner) const {
    std::lock_guard lock(count_mu_);
    return count_in(owner_locks_, owner);
}

size_t LockTable::lock_count(const ClientKey& client) const {
    std::lock_guard lock(count_mu_);
    return count_in(client_locks_, client);
}

size_t LockTable::waiter_count(const ClientKey& client) const {
    std::lock_guard lock(count_mu_);
    return count_in(client_waiters_, client);
}

size_t LockTable::file_count() const {
    return shards_.file_count();
}

}  // namespace nfsrdmad::vfs::state
