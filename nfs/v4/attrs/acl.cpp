#include "nfs/v4/attrs/acl.h"

#include <sys/stat.h>

#include <string_view>

namespace nfsrdmad::nfs::v4 {

namespace {

constexpr uint32_t kRead = x4::ACE4_READ_DATA;
constexpr uint32_t kWrite = x4::ACE4_WRITE_DATA | x4::ACE4_APPEND_DATA;
constexpr uint32_t kExecute = x4::ACE4_EXECUTE;
constexpr uint32_t kAnyone = x4::ACE4_READ_ATTRIBUTES | x4::ACE4_READ_ACL | x4::ACE4_SYNCHRONIZE;
constexpr uint32_t kOwnerOnly = x4::ACE4_WRITE_ATTRIBUTES | x4::ACE4_WRITE_ACL;

constexpr std::string_view kOwner = "OWNER@", kGroup = "GROUP@", kEveryone = "EVERYONE@";

// rwx (three mode bits) as an access mask.
uint32_t mask_of(uint32_t rwx, bool dir) {
    uint32_t m = 0;
    if (rwx & 4) m |= kRead;
    if (rwx & 2) m |= kWrite | (dir ? x4::ACE4_DELETE_CHILD : 0);
    if (rwx & 1) m |= kExecute;
    return m;
}

void put_ace(xdr::Encoder& e, uint32_t type, uint32_t flag, uint32_t mask, std::string_view who) {
    e.put_u32(type);
    e.put_u32(flag);
    e.put_u32(mask);
    e.put_string(who);
}

enum class Who { Owner, Group, Everyone, Other };

Who who_of(const x4::nfsace4& a) {
    std::string_view w(reinterpret_cast<const char*>(a.who.data()), a.who.size());
    if (w == kOwner) return Who::Owner;
    if (w == kGroup) return Who::Group;
    if (w == kEveryone) return Who::Everyone;
    return Who::Other;
}

// §6.3.2: the ACL evaluated in order for `who`, "considering only ALLOW and DENY ACEs for
// the identifier EVERYONE@ and for the identifier under consideration"; the first ACE to
// allow or deny a bit decides it. The mode's rwx from the allowed mask: read iff READ_DATA,
// write iff WRITE_DATA and APPEND_DATA, execute iff EXECUTE.
uint32_t rwx_for(std::span<const x4::nfsace4> acl, Who who) {
    uint32_t allowed = 0, decided = 0;
    for (const auto& a : acl) {
        const Who w = who_of(a);
        if (w != who && w != Who::Everyone) continue;
        const uint32_t fresh = a.access_mask & ~decided;
        if (a.type == x4::ACE4_ACCESS_ALLOWED_ACE_TYPE) allowed |= fresh;
        decided |= fresh;
    }
    uint32_t rwx = 0;
    if (allowed & kRead) rwx |= 4;
    if ((allowed & kWrite) == kWrite) rwx |= 2;
    if (allowed & kExecute) rwx |= 1;
    return rwx;
}

}  // namespace

void encode_mode_acl(uint32_t mode, xdr::Encoder& e) {
    const bool dir = S_ISDIR(mode);
    const uint32_t owner = (mode >> 6) & 7, group = (mode >> 3) & 7, other = mode & 7;
    const uint32_t owner_deny = mask_of(~owner & (group | other) & 7, dir);
    const uint32_t group_deny = mask_of(~group & other & 7, dir);
    const uint32_t allow = x4::ACE4_ACCESS_ALLOWED_ACE_TYPE, deny = x4::ACE4_ACCESS_DENIED_ACE_TYPE;
    const uint32_t group_flag = x4::ACE4_IDENTIFIER_GROUP;
    e.put_u32(3 + (owner_deny != 0) + (group_deny != 0));
    if (owner_deny) put_ace(e, deny, 0, owner_deny, kOwner);
    put_ace(e, allow, 0, mask_of(owner, dir) | kOwnerOnly | kAnyone, kOwner);
    put_ace(e, allow, group_flag, mask_of(group, dir) | kAnyone, kGroup);
    if (group_deny) put_ace(e, deny, group_flag, group_deny, kGroup);
    put_ace(e, allow, 0, mask_of(other, dir) | kAnyone, kEveryone);
}

x4::nfsstat4 mode_bits_of_acl(std::span<const x4::nfsace4> acl, uint32_t& bits) {
    // Flags a mode cannot hold: inheritance (§6.2.1.4) and the audit/alarm ones.
    constexpr uint32_t kUnstorableFlags =
        x4::ACE4_FILE_INHERIT_ACE | x4::ACE4_DIRECTORY_INHERIT_ACE |
        x4::ACE4_NO_PROPAGATE_INHERIT_ACE | x4::ACE4_INHERIT_ONLY_ACE |
        x4::ACE4_SUCCESSFUL_ACCESS_ACE_FLAG | x4::ACE4_FAILED_ACCESS_ACE_FLAG;
    for (const auto& a : acl) {
        if (a.type != x4::ACE4_ACCESS_ALLOWED_ACE_TYPE && a.type != x4::ACE4_ACCESS_DENIED_ACE_TYPE)
            return x4::NFS4ERR_ATTRNOTSUPP;
        const Who w = who_of(a);
        if (w == Who::Other || (a.flag & kUnstorableFlags)) return x4::NFS4ERR_ATTRNOTSUPP;
        if (a.type == x4::ACE4_ACCESS_DENIED_ACE_TYPE) {
            if (a.access_mask & (x4::ACE4_READ_ATTRIBUTES | x4::ACE4_READ_ACL))
                return x4::NFS4ERR_ATTRNOTSUPP;
            if ((w == Who::Owner || w == Who::Everyone) && (a.access_mask & kOwnerOnly))
                return x4::NFS4ERR_ATTRNOTSUPP;
        }
    }
    bits =
        rwx_for(acl, Who::Owner) << 6 | rwx_for(acl, Who::Group) << 3 | rwx_for(acl, Who::Everyone);
    return x4::NFS4_OK;
}

}  // namespace nfsrdmad::nfs::v4
