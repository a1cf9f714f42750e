// set_attrs.h — fattr4 a client sends to change an object (SETATTR §18.30, the
// createattrs of OPEN §18.16 and CREATE §18.4) -> vfs::SetAttrs.
//
// Settable and supported: acl (as the nine mode bits it comes to, acl.h: SETATTR keeps the
// high mode bits), size, mode, owner, owner_group, time_access_set, time_modify_set. A
// settable attribute this server does not support (hidden, time_create ...) is
// NFS4ERR_ATTRNOTSUPP, and so is an ACL a mode cannot hold; an attribute that cannot be set at all
// (type, fileid, change ...) is NFS4ERR_INVAL (§18.30.3); values that do not decode,
// or bytes left over, NFS4ERR_BADXDR; an owner that does not map, NFS4ERR_BADOWNER
// (§5.9).
#pragma once

#include "nfs/v4/attrs/attr_mask.h"
#include "nfs/v4/id_map.h"
#include "nfs/vfs/attrs.h"
#include "xdr/nfs4_prot.h"

namespace nfsrdmad::nfs::v4 {

// The settable attributes decode_set_attrs accepts.
AttrMask settable_attrs();

// `set`: the attributes found (attrsset of a successful SETATTR, §18.30.4).
x4::nfsstat4 decode_set_attrs(const x4::fattr4& in, const IdMap& ids, vfs::SetAttrs& out,
                              AttrMask& set);

}  // namespace nfsrdmad::nfs::v4
