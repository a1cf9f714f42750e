#include "nfs/v4/open_state.h"

#include <algorithm>

namespace nfsrdmad::nfs::v4 {

OpenTable::FileKey OpenTable::key_of(const vfs::FileHandle& f) {
    auto d = f.data();
    return FileKey(d.begin(), d.end());
}

template <class Fn>
void OpenTable::each_of_file(const vfs::FileHandle& file, Fn&& fn) const {
    auto it = by_file_.find(key_of(file));
    if (it == by_file_.end()) return;
    for (const Other& other : it->second) fn(other, opens_.at(other));
}

void OpenTable::unindex(const Open& o) {
    auto it = by_file_.find(key_of(o.file));
    if (it == by_file_.end()) return;
    std::erase(it->second, o.stateid.other);
    if (it->second.empty()) by_file_.erase(it);
}

x4::nfsstat4 OpenTable::check_share(const vfs::FileHandle& file, uint32_t access, uint32_t deny,
                                    const std::optional<Other>& self) const {
    std::lock_guard lock(mu_);
    bool denied = false;
    each_of_file(file, [&](const Other& other, const Open& o) {
        if (self && other == *self) return;
        if ((o.deny & access) || (o.access & deny)) denied = true;
    });
    return denied ? x4::NFS4ERR_SHARE_DENIED : x4::NFS4_OK;
}

std::vector<state::ClientId> OpenTable::conflicting_clients(const vfs::FileHandle& file,
                                                           uint32_t access, uint32_t deny,
                                                           const std::optional<Other>& self) const {
    std::vector<state::ClientId> out;
    {
        std::lock_guard lock(mu_);
        each_of_file(file, [&](const Other& other, const Open& o) {
            if (self && other == *self) return;
            if ((o.deny & access) || (o.access & deny)) out.push_back(o.client);
        });
    }
    std::sort(out.begin(), out.end());
    out.erase(std::unique(out.begin(), out.end()), out.end());
    return out;
}

OpenTable::Shares OpenTable::share_except(const vfs::FileHandle& file, const Other& self) const {
    std::lock_guard lock(mu_);
    Shares out;
    each_of_file(file, [&](const Other& other, const Open& o) {
        if (other == self) return;
        out.access |= o.access;
        out.deny |= o.deny;
        ++out.count;
    });
    return out;
}

std::optional<Open> OpenTable::find_owner(state::ClientId client, std::span<const uint8_t> owner,
                                          const vfs::FileHandle& file) const {
    std::lock_guard lock(mu_);
    std::optional<Open> found;
    each_of_file(file, [&](const Other&, const Open& o) {
        if (!found && o.client == client &&
            std::equal(o.owner.begin(), o.owner.end(), owner.begin(), owner.end()))
            found = o;
    });
    return found;
}

std::optional<Open> OpenTable::find(const Other& other) const {
    std::lock_guard lock(mu_);
    auto it = opens_.find(other);
    if (it == opens_.end()) return std::nullopt;
    return it->second;
}

void OpenTable::put(const Open& o) {
    std::lock_guard lock(mu_);
    auto [it, inserted] = opens_.try_emplace(o.stateid.other, o);
    if (!inserted) {
        unindex(it->second);
        it->second = o;
    }
    by_file_[key_of(o.file)].push_back(o.stateid.other);
}

void OpenTable::erase(const Other& other) {
    std::lock_guard lock(mu_);
    auto it = opens_.find(other);
    if (it == opens_.end()) return;
    unindex(it->second);
    opens_.erase(it);
}

size_t OpenTable::forget_client(state::ClientId client) {
    std::lock_guard lock(mu_);
    return std::erase_if(opens_, [&](const auto& kv) {
        if (kv.second.client != client) return false;
        unindex(kv.second);
        return true;
    });
}

std::mutex& OpenTable::admission(const vfs::FileHandle& file) {
    return admission_[std::hash<FileKey>{}(key_of(file)) % admission_.size()];
}

size_t OpenTable::size() const {
    std::lock_guard lock(mu_);
    return opens_.size();
}

}  // namespace nfsrdmad::nfs::v4
