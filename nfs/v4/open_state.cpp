#include "nfs/v4/open_state.h"

#include <algorithm>

namespace nfsrdmad::nfs::v4 {

x4::nfsstat4 OpenTable::check_share(const vfs::FileHandle& file, uint32_t access, uint32_t deny,
                                    const std::optional<Other>& self) const {
    std::lock_guard lock(mu_);
    for (const auto& [other, o] : opens_) {
        if (self && other == *self) continue;
        if (!(o.file == file)) continue;
        if ((o.deny & access) || (o.access & deny)) return x4::NFS4ERR_SHARE_DENIED;
    }
    return x4::NFS4_OK;
}

std::vector<state::ClientId> OpenTable::conflicting_clients(const vfs::FileHandle& file,
                                                           uint32_t access, uint32_t deny,
                                                           const std::optional<Other>& self) const {
    std::vector<state::ClientId> out;
    {
        std::lock_guard lock(mu_);
        for (const auto& [other, o] : opens_) {
            if (self && other == *self) continue;
            if (!(o.file == file)) continue;
            if ((o.deny & access) || (o.access & deny)) out.push_back(o.client);
        }
    }
    std::sort(out.begin(), out.end());
    out.erase(std::unique(out.begin(), out.end()), out.end());
    return out;
}

std::optional<Open> OpenTable::find_owner(state::ClientId client, std::span<const uint8_t> owner,
                                          const vfs::FileHandle& file) const {
    std::lock_guard lock(mu_);
    for (const auto& [other, o] : opens_)
        if (o.client == client && o.file == file &&
            std::equal(o.owner.begin(), o.owner.end(), owner.begin(), owner.end()))
            return o;
    return std::nullopt;
}

std::optional<Open> OpenTable::find(const Other& other) const {
    std::lock_guard lock(mu_);
    auto it = opens_.find(other);
    if (it == opens_.end()) return std::nullopt;
    return it->second;
}

void OpenTable::put(const Open& o) {
    std::lock_guard lock(mu_);
    opens_[o.stateid.other] = o;
}

void OpenTable::erase(const Other& other) {
    std::lock_guard lock(mu_);
    opens_.erase(other);
}

size_t OpenTable::forget_client(state::ClientId client) {
    std::lock_guard lock(mu_);
    return std::erase_if(opens_, [&](const auto& kv) { return kv.second.client == client; });
}

size_t OpenTable::size() const {
    std::lock_guard lock(mu_);
    return opens_.size();
}

}  // namespace nfsrdmad::nfs::v4
