#include "nfs/nlm/hosts.h"

namespace nfsrdmad::nfs::nlm {

std::string HostTable::key(std::string_view name, std::string_view address) {
    std::string k;
    k.reserve(address.size() + 1 + name.size());
    k.append(address).push_back('\0');
    k.append(name);
    return k;
}

std::optional<uint64_t> HostTable::id(std::string_view name, std::string_view address,
                                      const Idle& idle, Clock::time_point now) {
    std::string k = key(name, address);
    std::lock_guard lock(mu_);
    if (auto it = hosts_.find(k); it != hosts_.end()) {
        ++it->second.pins;
        it->second.used = now;
        return it->second.id;
    }
    if (hosts_.size() >= max_) {
        for (auto it = hosts_.begin(); it != hosts_.end();) {
            auto next = std::next(it);
            if (it->second.pins == 0 && idle(it->second.id)) erase(it);
            it = next;
        }
        if (hosts_.size() >= max_) return std::nullopt;
    }
    const uint64_t id = next_++;
    keys_.emplace(id, k);
    hosts_.emplace(std::move(k),
                   Host{id, false, std::string(name), std::string(address), 1, now, std::nullopt});
    return id;
}

void HostTable::unpin(uint64_t id, Clock::time_point now) {
    std::lock_guard lock(mu_);
    auto k = keys_.find(id);
    if (k == keys_.end()) return;
    auto it = hosts_.find(k->second);
    if (it == hosts_.end() || it->second.pins == 0) return;
    --it->second.pins;
    it->second.used = now;
}

void HostTable::erase(Map::iterator it) {
    keys_.erase(it->second.id);
    hosts_.erase(it);
}

std::optional<uint64_t> HostTable::find(std::string_view name, std::string_view address) const {
    const std::string k = key(name, address);
    std::lock_guard lock(mu_);
    auto it = hosts_.find(k);
    if (it == hosts_.end()) return std::nullopt;
    return it->second.id;
}

std::vector<HostTable::Named> HostTable::at(std::string_view address) const {
    return matching([address](const Host& h) { return h.address == address; });
}

std::vector<HostTable::Named> HostTable::named(std::string_view name) const {
    return matching([name](const Host& h) { return h.name == name; });
}

std::vector<HostTable::Named> HostTable::matching(
    const std::function<bool(const Host&)>& pred) const {
    std::vector<Named> out;
    std::lock_guard lock(mu_);
    for (const auto& [k, h] : hosts_)
        if (pred(h)) out.push_back(Named{h.name, h.address});
    return out;
}

bool HostTable::mark_monitored(std::string_view name, std::string_view address) {
    const std::string k = key(name, address);
    std::lock_guard lock(mu_);
    auto it = hosts_.find(k);
    if (it == hosts_.end() || it->second.monitored) return false;
    const std::string_view mon = watch_of(name, address);
    bool before = false;
    for (const auto& [other, h] : hosts_)
        before |= h.monitored && watch_of(h.name, h.address) == mon;
    it->second.monitored = true;
    return !before;
}

bool HostTable::watched(std::string_view mon_name) const {
    std::lock_guard lock(mu_);
    for (const auto& [k, h] : hosts_)
        if (h.monitored && watch_of(h.name, h.address) == mon_name) return true;
    return false;
}

void HostTable::set_state(std::string_view name, std::string_view address, int32_t state) {
    const std::string k = key(name, address);
    std::lock_guard lock(mu_);
    if (auto it = hosts_.find(k); it != hosts_.end()) it->second.nsm_state = state;
}

std::optional<int32_t> HostTable::state(std::string_view name, std::string_view address) const {
    const std::string k = key(name, address);
    std::lock_guard lock(mu_);
    auto it = hosts_.find(k);
    return it == hosts_.end() ? std::nullopt : it->second.nsm_state;
}

std::optional<uint64_t> HostTable::forget(std::string_view name, std::string_view address) {
    const std::string k = key(name, address);
    std::lock_guard lock(mu_);
    auto it = hosts_.find(k);
    if (it == hosts_.end()) return std::nullopt;
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
    for (auto it = hosts_.begin(); it != hosts_.end();) {
        auto next = std::next(it);
        const Host& h = it->second;
        if (h.pins == 0 && h.used < unused_since && idle(h.id)) {
            gone.push_back(Gone{h.name, h.address, h.id, h.monitored});
            erase(it);
        }
        it = next;
    }
    return gone;
}

bool HostTable::address_in_use(std::string_view address) const {
    std::lock_guard lock(mu_);
    for (const auto& [k, h] : hosts_)
        if (h.address == address) return true;
    return false;
}

size_t HostTable::size() const {
    std::lock_guard lock(mu_);
    return hosts_.size();
}

}  // namespace nfsrdmad::nfs::nlm
