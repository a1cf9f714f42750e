#include "nfs/common/hostname_cache.h"

#include "nfs/common/authorize.h"

namespace nfsrdmad::nfs {

HostnameCache::HostnameCache(Resolver resolver, size_t capacity, size_t max_resolving,
                             Clock::duration ttl)
    : resolver_(std::move(resolver)),
      capacity_(capacity > 0 ? capacity : 1),
      max_resolving_(max_resolving),
      ttl_(ttl) {}

std::string HostnameCache::lookup(const rpc::Peer& peer) {
    std::string key = peer_host(peer);
    {
        std::lock_guard lock(mu_);
        if (auto it = index_.find(key); it != index_.end()) {
            if (it->second->expires > Clock::now()) {
                lru_.splice(lru_.begin(), lru_, it->second);
                return it->second->name;
            }
        }
        // Being looked up by another worker, or enough lookups running: no name yet.
        if (resolving_.contains(key) || resolving_.size() >= max_resolving_) return {};
        resolving_.insert(key);
    }
    std::string name = resolver_(peer);  // may block: only max_resolving_ callers get here
    std::lock_guard lock(mu_);
    resolving_.erase(key);
    if (auto it = index_.find(key); it != index_.end()) {
        lru_.erase(it->second);
        index_.erase(it);
    }
    lru_.push_front({key, name, Clock::now() + ttl_});
    index_[key] = lru_.begin();
    while (lru_.size() > capacity_) {
        index_.erase(lru_.back().key);
        lru_.pop_back();
    }
    return name;
}

size_t HostnameCache::size() const {
    std::lock_guard lock(mu_);
    return lru_.size();
}

}  // namespace nfsrdmad::nfs
