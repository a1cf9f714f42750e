#include "nfs/v4/lock_state.h"

#include "nfs/v4/lookup.h"
#include "nfs/v4/request.h"

namespace nfsrdmad::nfs::v4 {

size_t LockStateTable::OwnerFileHash::operator()(const OwnerFile& k) const {
    const size_t a = vfs::state::StateOwnerHash{}(k.owner);
    const size_t b = vfs::state::FileKeyHash{}(k.file);
    return a ^ (b + 0x9e3779b97f4a7c15ULL + (a << 6) + (a >> 2));
}

std::optional<LockState> LockStateTable::find(const Other& other) const {
    std::lock_guard lock(mu_);
    auto it = states_.find(other);
    if (it == states_.end()) return std::nullopt;
    return it->second;
}

std::optional<LockState> LockStateTable::find_owner(const vfs::state::StateOwner& owner,
                                                    const vfs::state::FileKey& file) const {
    std::lock_guard lock(mu_);
    auto it = by_owner_.find(OwnerFile{owner, file});
    if (it == by_owner_.end()) return std::nullopt;
    return states_.at(it->second);
}

std::vector<LockState> LockStateTable::of_open(const Other& open) const {
    std::lock_guard lock(mu_);
    std::vector<LockState> out;
    auto [b, e] = by_open_.equal_range(open);
    for (auto it = b; it != e; ++it) out.push_back(states_.at(it->second));
    return out;
}

std::optional<LockState> LockStateTable::insert(const LockState& s) {
    std::lock_guard lock(mu_);
    auto [it, fresh] = by_owner_.try_emplace(OwnerFile{s.owner, s.file}, s.stateid.other);
    if (!fresh) return states_.at(it->second);
    states_.insert_or_assign(s.stateid.other, s);
    by_open_.emplace(s.open, s.stateid.other);
    return std::nullopt;
}

bool LockStateTable::update(const LockState& s) {
    std::lock_guard lock(mu_);
    auto it = states_.find(s.stateid.other);
    if (it == states_.end()) return false;
    it->second.stateid = s.stateid;  // owner, file and open never change
    return true;
}

void LockStateTable::erase_locked(std::map<Other, LockState>::iterator it) {
    by_owner_.erase(OwnerFile{it->second.owner, it->second.file});
    auto [b, e] = by_open_.equal_range(it->second.open);
    for (auto o = b; o != e; ++o)
        if (o->second == it->first) {
            by_open_.erase(o);
            break;
        }
    states_.erase(it);
}

void LockStateTable::erase(const Other& other) {
    std::lock_guard lock(mu_);
    if (auto it = states_.find(other); it != states_.end()) erase_locked(it);
}

std::vector<LockState> LockStateTable::forget_client(state::ClientId client) {
    std::lock_guard lock(mu_);
    std::vector<LockState> out;
    for (auto it = states_.begin(); it != states_.end();) {
        auto next = std::next(it);
        if (it->second.client == client) {
            out.push_back(it->second);
            erase_locked(it);
        }
        it = next;
    }
    return out;
}

size_t LockStateTable::size() const {
    std::lock_guard lock(mu_);
    return states_.size();
}

}  // namespace nfsrdmad::nfs::v4

namespace nfsrdmad::nfs::v4 {

x4::nfsstat4 lock_file_key(const Target& t, vfs::state::FileKey& out) {
    if (auto st = must_be_file(t); st != x4::NFS4_OK) return st;
    auto d = vfs::decode_handle(t.node.exp->key(), t.node.handle.data());
    if (!d) return x4::NFS4ERR_BADHANDLE;
    out = vfs::state::FileKey::of(*d);
    return x4::NFS4_OK;
}

x4::nfsstat4 lock_type_of(x4::nfs_lock_type4 t, vfs::state::LockType& out) {
    switch (t) {
        case x4::READ_LT:
        case x4::READW_LT:
            out = vfs::state::LockType::Read;
            return x4::NFS4_OK;
        case x4::WRITE_LT:
        case x4::WRITEW_LT:
            out = vfs::state::LockType::Write;
            return x4::NFS4_OK;
    }
    return x4::NFS4ERR_INVAL;
}

x4::nfsstat4 lock_range_of(uint64_t offset, uint64_t length, vfs::state::ByteRange& out) {
    if (length != vfs::state::kToEof && length > vfs::state::kToEof - offset)
        return x4::NFS4ERR_INVAL;
    auto r = vfs::state::ByteRange::from_nfs4(offset, length);
    if (!r) return x4::NFS4ERR_INVAL;
    out = *r;
    return x4::NFS4_OK;
}

x4::LOCK4denied denied_of(const vfs::state::Conflict& c) {
    x4::LOCK4denied d;
    d.offset = c.lock.range.first;
    d.length = c.lock.range.nfs4_length();
    d.locktype = c.lock.type == vfs::state::LockType::Write ? x4::WRITE_LT : x4::READ_LT;
    if (c.owner) {
        d.owner.clientid = c.owner->client().id;
        const std::string& b = c.owner->bytes();
        d.owner.owner = {reinterpret_cast<const uint8_t*>(b.data()), b.size()};
    }
    return d;
}

}  // namespace nfsrdmad::nfs::v4
