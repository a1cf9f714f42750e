#include "nfs/nlm/blocked.h"

namespace nfsrdmad::nfs::nlm {

std::string BlockedTable::key(const vs::FileKey& file, const vs::StateOwner& owner,
                              const vs::Lock& lock) {
    std::string k;
    auto put64 = [&k](uint64_t v) {
        for (int s = 56; s >= 0; s -= 8) k.push_back(static_cast<char>(v >> s));
    };
    put64(file.fsid);
    k.push_back(static_cast<char>(file.kernel.type));
    k.push_back(static_cast<char>(file.kernel.size));
    const auto fh = file.kernel.data();
    k.append(reinterpret_cast<const char*>(fh.data()), fh.size());
    put64(owner.client().id);
    put64(lock.range.first);
    put64(lock.range.last);
    k.push_back(lock.type == vs::LockType::Write ? 'w' : 'r');
    k += owner.bytes();
    return k;
}

std::optional<uint64_t> BlockedTable::put(Blocked b) {
    std::lock_guard l(mu_);
    const std::string k = key(b.file, b.owner, b.lock);
    if (auto it = by_key_.find(k); it != by_key_.end()) {
        b.id = it->second;
        by_id_[b.id] = std::move(b);
        return it->second;
    }
    if (by_id_.size() >= max_) return std::nullopt;
    b.id = next_++;
    by_key_.emplace(k, b.id);
    const uint64_t id = b.id;
    by_id_.emplace(id, std::move(b));
    return id;
}

void BlockedTable::put_back(Blocked b) {
    std::lock_guard l(mu_);
    by_key_[key(b.file, b.owner, b.lock)] = b.id;
    const uint64_t id = b.id;
    by_id_[id] = std::move(b);
}

std::optional<Blocked> BlockedTable::take(uint64_t id) {
    std::lock_guard l(mu_);
    auto it = by_id_.find(id);
    if (it == by_id_.end()) return std::nullopt;
    Blocked b = std::move(it->second);
    by_id_.erase(it);
    by_key_.erase(key(b.file, b.owner, b.lock));
    return b;
}

void BlockedTable::drop(const vs::FileKey& file, const vs::StateOwner& owner,
                        const vs::Lock& lock) {
    std::lock_guard l(mu_);
    auto it = by_key_.find(key(file, owner, lock));
    if (it == by_key_.end()) return;
    by_id_.erase(it->second);
    by_key_.erase(it);
}

void BlockedTable::drop_client(const vs::ClientKey& client) {
    std::lock_guard l(mu_);
    for (auto it = by_id_.begin(); it != by_id_.end();) {
        if (it->second.owner.client() == client) {
            by_key_.erase(key(it->second.file, it->second.owner, it->second.lock));
            it = by_id_.erase(it);
        } else {
            ++it;
        }
    }
}

size_t BlockedTable::size() const {
    std::lock_guard l(mu_);
    return by_id_.size();
}

}  // namespace nfsrdmad::nfs::nlm
