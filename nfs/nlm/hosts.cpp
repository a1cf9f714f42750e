#include "nfs/nlm/hosts.h"

namespace nfsrdmad::nfs::nlm {

std::optional<uint64_t> HostTable::id(std::string_view name,
                                      const std::function<bool(uint64_t)>& idle,
                                      std::string_view address) {
    std::lock_guard lock(mu_);
    if (auto it = ids_.find(std::string(name)); it != ids_.end()) {
        if (!address.empty()) it->second.address = address;
        return it->second.id;
    }
    if (ids_.size() >= max_) {
        for (auto it = ids_.begin(); it != ids_.end();)
            it = idle(it->second.id) ? ids_.erase(it) : std::next(it);
        if (ids_.size() >= max_) return std::nullopt;
    }
    const uint64_t id = next_++;
    ids_.emplace(std::string(name), Host{id, false, std::string(address)});
    return id;
}

std::optional<uint64_t> HostTable::find(std::string_view name) const {
    std::lock_guard lock(mu_);
    auto it = ids_.find(std::string(name));
    if (it == ids_.end()) return std::nullopt;
    return it->second.id;
}

std::string HostTable::address(std::string_view name) const {
    std::lock_guard lock(mu_);
    auto it = ids_.find(std::string(name));
    return it == ids_.end() ? std::string() : it->second.address;
}

bool HostTable::mark_monitored(std::string_view name) {
    std::lock_guard lock(mu_);
    auto it = ids_.find(std::string(name));
    if (it == ids_.end() || it->second.monitored) return false;
    it->second.monitored = true;
    return true;
}

std::optional<uint64_t> HostTable::forget(std::string_view name) {
    std::lock_guard lock(mu_);
    auto it = ids_.find(std::string(name));
    if (it == ids_.end()) return std::nullopt;
    const uint64_t id = it->second.id;
    ids_.erase(it);
    return id;
}

size_t HostTable::size() const {
    std::lock_guard lock(mu_);
    return ids_.size();
}

}  // namespace nfsrdmad::nfs::nlm
