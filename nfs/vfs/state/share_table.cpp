#include "nfs/vfs/state/share_table.h"

#include <algorithm>
#include <cassert>
#include <cerrno>

namespace nfsrdmad::vfs::state {
namespace {

bool valid(ShareBits b) {
    return b.access <= kShareBoth && b.deny <= kShareBoth;
}

bool subset(ShareBits small, ShareBits big) {
    return (small.access & ~big.access) == 0 && (small.deny & ~big.deny) == 0;
}

}  // namespace

// RFC 8881 §9.7: access against their deny, deny against their access.
std::optional<ShareConflict> ShareTable::conflict(const FileState& fs, const StateOwner& owner,
                                                  ShareBits want) {
    for (const Entry& e : fs.owners) {
        if (e.owner == owner) continue;
        if (want.access & e.bits.deny)
            return ShareConflict{ShareConflict::AccessDenied, e.owner, e.bits};
        if (want.deny & e.bits.access)
            return ShareConflict{ShareConflict::DenyConflicts, e.owner, e.bits};
    }
    return std::nullopt;
}

bool ShareTable::adjust(const ClientKey& client, ptrdiff_t delta) {
    std::lock_guard lock(count_mu_);
    auto it = per_client_.find(client);
    const size_t n = it == per_client_.end() ? 0 : it->second;
    if (delta > 0 && n + static_cast<size_t>(delta) > shares_per_client_) return false;
    assert(delta >= 0 || n >= static_cast<size_t>(-delta));
    const size_t next = n + delta;
    if (next == 0) {
        per_client_.erase(client);
    } else {
        per_client_[client] = next;
    }
    return true;
}

Result<ShareReply> ShareTable::open(const FileKey& file, const StateOwner& owner, ShareBits want) {
    if (!valid(want)) return fail(EINVAL);
    auto& sh = shards_.of(file);
    std::lock_guard guard(sh.mu);
    FileState& fs = sh.files[file];
    auto self = std::find_if(fs.owners.begin(), fs.owners.end(),
                             [&](const Entry& e) { return e.owner == owner; });
    ShareBits next = want;
    if (self != fs.owners.end()) {  // re-open: the union of both (§18.16.3)
        next.access |= self->bits.access;
        next.deny |= self->bits.deny;
    }
    ShareReply reply;
    if (auto c = conflict(fs, owner, next)) {
        reply.denied = std::move(c);
        if (self != fs.owners.end()) reply.held = self->bits;
        sh.erase_if_empty(file);
        return reply;
    }
    if (self != fs.owners.end()) {
        self->bits = next;
    } else {
        if (!adjust(owner.client(), 1)) {
            sh.erase_if_empty(file);
            return fail(ENOLCK);
        }
        fs.owners.push_back(Entry{owner, next});
    }
    reply.held = next;
    return reply;
}

std::optional<ShareConflict> ShareTable::check(const FileKey& file, const StateOwner& owner,
                                               ShareBits want) const {
    auto& sh = shards_.of(file);
    std::lock_guard guard(sh.mu);
    auto f = sh.files.find(file);
    if (f == sh.files.end()) return std::nullopt;
    return conflict(f->second, owner, want);
}

Result<void> ShareTable::downgrade(const FileKey& file, const StateOwner& owner, ShareBits to) {
    if (!valid(to) || to.access == kShareNone) return fail(EINVAL);
    auto& sh = shards_.of(file);
    std::lock_guard guard(sh.mu);
    auto f = sh.files.find(file);
    if (f == sh.files.end()) return fail(ENOENT);
    for (Entry& e : f->second.owners) {
        if (!(e.owner == owner)) continue;
        if (!subset(to, e.bits)) return fail(EINVAL);
        e.bits = to;  // fewer bits never conflict with anyone
        return {};
    }
    return fail(ENOENT);
}

bool ShareTable::close(const FileKey& file, const StateOwner& owner) {
    auto& sh = shards_.of(file);
    std::lock_guard guard(sh.mu);
    auto f = sh.files.find(file);
    if (f == sh.files.end()) return false;
    auto& v = f->second.owners;
    auto it = std::find_if(v.begin(), v.end(), [&](const Entry& e) { return e.owner == owner; });
    if (it == v.end()) return false;
    v.erase(it);
    adjust(owner.client(), -1);
    sh.erase_if_empty(file);
    return true;
}

size_t ShareTable::release_client(const ClientKey& client) {
    size_t dropped = 0;
    for (auto& sh : shards_.all()) {
        std::lock_guard guard(sh.mu);
        for (auto f = sh.files.begin(); f != sh.files.end();) {
            auto& v = f->second.owners;
            const size_t before = v.size();
            std::erase_if(v, [&](const Entry& e) { return e.owner.client() == client; });
            dropped += before - v.size();
            f = v.empty() ? sh.files.erase(f) : std::next(f);
        }
    }
    adjust(client, -static_cast<ptrdiff_t>(dropped));
    return dropped;
}

size_t ShareTable::release_file(const FileKey& file) {
    auto& sh = shards_.of(file);
    std::lock_guard guard(sh.mu);
    auto f = sh.files.find(file);
    if (f == sh.files.end()) return 0;
    const size_t n = f->second.owners.size();
    for (const Entry& e : f->second.owners) adjust(e.owner.client(), -1);
    sh.files.erase(f);
    return n;
}

std::optional<ShareBits> ShareTable::held(const FileKey& file, const StateOwner& owner) const {
    auto& sh = shards_.of(file);
    std::lock_guard guard(sh.mu);
    auto f = sh.files.find(file);
    if (f == sh.files.end()) return std::nullopt;
    for (const Entry& e : f->second.owners) {
        if (e.owner == owner) return e.bits;
    }
    return std::nullopt;
}

size_t ShareTable::share_count(const ClientKey& client) const {
    std::lock_guard lock(count_mu_);
    auto it = per_client_.find(client);
    return it == per_client_.end() ? 0 : it->second;
}

}  // namespace nfsrdmad::vfs::state
