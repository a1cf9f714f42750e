#include "transport/rpc/reply_cache.h"

#include <functional>

namespace nfsrdmad::rpc {

uint64_t hash_bytes(const uint8_t* p, size_t n) {
    uint64_t h = 1469598103934665603ull;  // FNV-1a
    for (size_t i = 0; i < n; ++i) h = (h ^ p[i]) * 1099511628211ull;
    return h;
}

size_t ReplyCache::KeyHash::operator()(const Key& k) const {
    uint64_t h = std::hash<std::string>()(k.peer);
    for (uint64_t v : {uint64_t(k.xid), uint64_t(k.prog), uint64_t(k.vers), uint64_t(k.proc),
                       k.args_hash})
        h = (h ^ v) * 1099511628211ull;
    return h;
}

ReplyCache::Lookup ReplyCache::begin(const Key& k, std::vector<uint8_t>& reply) {
    std::lock_guard lock(mu_);
    auto it = map_.find(k);
    if (it != map_.end()) {
        if (!it->second.done) return Lookup::InProgress;
        lru_.splice(lru_.begin(), lru_, it->second.lru);
        reply = it->second.reply;
        return Lookup::Done;
    }
    lru_.push_front(k);
    map_.emplace(k, Entry{false, {}, lru_.begin()});
    evict_locked();
    return Lookup::New;
}

void ReplyCache::finish(const Key& k, const std::vector<uint8_t>& reply) {
    std::lock_guard lock(mu_);
    auto it = map_.find(k);
    if (it == map_.end()) return;  // evicted meanwhile
    it->second.done = true;
    it->second.reply = reply;
}

void ReplyCache::abandon(const Key& k) {
    std::lock_guard lock(mu_);
    auto it = map_.find(k);
    if (it == map_.end()) return;
    lru_.erase(it->second.lru);
    map_.erase(it);
}

size_t ReplyCache::size() const {
    std::lock_guard lock(mu_);
    return map_.size();
}

void ReplyCache::evict_locked() {
    // Evict the oldest finished entries; entries in progress stay (they are few).
    auto it = lru_.end();
    while (map_.size() > capacity_ && it != lru_.begin()) {
        --it;
        auto m = map_.find(*it);
        if (m->second.done) {
            auto victim = it++;
            map_.erase(m);
            lru_.erase(victim);
        }
    }
}

}  // namespace nfsrdmad::rpc
