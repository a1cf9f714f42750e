// acl.h — the acl and aclsupport attributes (RFC 8881 §6) over file systems that keep only
// mode bits: the ACL of an object is the one its mode says, and an ACL a client sets comes
// down to mode bits.
//
// Out (§6.4.2: "the ACL returned SHOULD represent the nine low-order bits of the mode"), in
// the Linux server's form for a file without a POSIX ACL, so clients see what they see
// there:
//   OWNER@    DENY   what the owner lacks and group or other have (only if any)
//   OWNER@    ALLOW  the owner's bits + WRITE_ATTRIBUTES|WRITE_ACL + the "anyone" bits
//   GROUP@    ALLOW  the group's bits + the anyone bits
//   GROUP@    DENY   what the group lacks and other has (only if any)
//   EVERYONE@ ALLOW  other's bits + the anyone bits
// where r = READ_DATA, w = WRITE_DATA|APPEND_DATA (+ DELETE_CHILD on a directory),
// x = EXECUTE, and anyone = READ_ATTRIBUTES|READ_ACL|SYNCHRONIZE. Computing a mode from
// it by §6.3.2 gives the mode back.
//
// In (§6.4.1.2: the nine low mode bits "MUST be modified to match the result of the method
// in Section 6.3.2"): only what a mode can hold is accepted. An ACE this server cannot
// store — a named user or group, AUDIT/ALARM, inheritance flags — "MUST" be rejected with
// NFS4ERR_ATTRNOTSUPP (§6.2.1.2), and so is one it could store but not enforce: a DENY of
// reading attributes or the ACL (§6.2.1), or of the owner's WRITE_ATTRIBUTES/WRITE_ACL
// (the owner can always chmod).
#pragma once

#include <cstdint>
#include <span>

#include "xdr/nfs4_prot.h"
#include "xdr/runtime/xdr.h"

namespace nfsrdmad::nfs::v4 {

namespace x4 = xdr::nfs4;

// aclsupport (§6.2.1.2): ALLOW and DENY ACEs.
constexpr uint32_t kAclSupport = x4::ACL4_SUPPORT_ALLOW_ACL | x4::ACL4_SUPPORT_DENY_ACL;

// fattr4_acl (nfsace4<>) of an object with `mode` (its S_IFMT bits say whether a directory).
void encode_mode_acl(uint32_t mode, xdr::Encoder& e);

// The nine low mode bits `acl` comes to (§6.3.2), or NFS4ERR_ATTRNOTSUPP for an ACL a mode
// cannot hold (above).
x4::nfsstat4 mode_bits_of_acl(std::span<const x4::nfsace4> acl, uint32_t& bits);

}  // namespace nfsrdmad::nfs::v4
