#include "nfs/nlm/hosts.h"

namespace nfsrdmad::nfs::nlm {

std::optional<uint64_t> HostTable::id(std::string_view name, const Idle& idle,
                                      std::string_view address, Clock::time_point now) {
    std::lock_guard lock(mu_);
    if (auto it = ids_.find(std::string(name)); it != ids_.end()) {
        if (!address.empty()) it->second.address = address;
        ++it->second.pins;
        it->second.used = now;
        return it->second.id;
    }
    if (ids_.size() >= max_) {
        for (auto it = ids_.begin(); it != ids_.end();) {
            auto next = std::next(it);
            if (it->second.pins == 0 && idle(it->second.id)) erase(it);
            it = next;
        }
        if (ids_.size() >= max_) return std::nullopt;
    }
    const uint64_t id = next_++;
    ids_.emplace(std::string(name), Host{id, false, std::string(address), 1, now, std::nullopt});
    names_.emplace(id, std::string(name));
    return id;
}

void HostTable::unpin(uint64_t id, Clock::time_point now) {
    std::lock_guard lock(mu_);
    auto n = names_.find(id);
    if (n == names_.end()) return;
    auto it = ids_.find(n->second);
    if (it == ids_.end() || it->second.pins == 0) return;
    --it->second.pins;
    it->second.used = now;
}

void HostTable::erase(Map::iterator it) {
    names_.erase(it->second.id);
    ids_.erase(it);
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

bool HostTable::monitored(std::string_view name) const {
    std::lock_guard lock(mu_);
    auto it = ids_.find(std::string(name));
    return it != ids_.end() && it->second.monitored;
}

void HostTable::set_state(std::string_view name, int32_t state) {
    std::lock_guard lock(mu_);
    if (auto it = ids_.find(std::string(name)); it != ids_.end()) it->second.nsm_state = state;
}

std::optional<int32_t> HostTable::state(std::string_view name) const {
    std::lock_guard lock(mu_);
    auto it = ids_.find(std::string(name));
    return it == ids_.end() ? std::nullopt : it->second.nsm_state;
}

std::optional<uint64_t> HostTable::forget(std::string_view name) {
    std::lock_guard lock(mu_);
    auto it = ids_.find(std::string(name));
    if (it == ids_.end()) return std::nullopt;
    const uint64_t id = it->second.id;
    if (it->second.pins > 0)
        it->second.monitored = false;
    else
        erase(it);
    return id;
}

std::vector<HostTable::Gone> HostTable::take_idle(const Idle& idle,
                                                  Clock::time_point unused_since) {
    std::lock_guard lock(mu_);
    std::vector<Gone> gone;
    for (auto it = ids_.begin(); it != ids_.end();) {
        auto next = std::next(it);
        const Host& h = it->second;
        if (h.pins == 0 && h.used < unused_since && idle(h.id)) {
            gone.push_back(Gone{it->first, h.address, h.id, h.monitored});
            erase(it);
        }
        it = next;
    }
    return gone;
}

bool HostTable::address_in_use(std::string_view address) const {
    std::lock_guard lock(mu_);
    for (const auto& [name, h] : ids_)
        if (h.address == address) return true;
    return false;
}

size_t HostTable::size() const {
    std::lock_guard lock(mu_);
    return ids_.size();
}

}  // namespace nfsrdmad::nfs::nlm
