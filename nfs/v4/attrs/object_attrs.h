// object_attrs.h — the attributes of what a filehandle names (request.h Target), as
// GETATTR, READDIR and VERIFY return them: real objects from statx and statfs, pseudo
// directories synthesized (RFC 8881 §7.3).
//
// Owner strings: for AUTH_SYS and AUTH_NONE callers they are the numeric ids ("1000"),
// as the Linux server sends by default (nfs4_disable_idmapping) and the Linux client
// expects for sec=sys; other flavors get name@domain from the IdMap (§5.9).
//
// fsid: an export's is {major: its fsid, minor: 0}; the pseudo file system's is
// {major: 0, minor: 1}, which no export can have (§7.5: a client sees the fsid change
// where an export begins and makes it a submount).
#pragma once

#include <cstdint>
#include <optional>

#include "nfs/v4/attrs/attr_mask.h"
#include "nfs/v4/request.h"
#include "xdr/runtime/xdr.h"

namespace nfsrdmad::nfs::v4 {

inline constexpr x4::fsid4 kPseudoFsid{0, 1};

// The attributes read from the object's file system (statfs: space_*, files_*), not
// from the object's own statx.
const AttrMask& fs_count_attrs();

// Appends fattr4 with `want` of `t`; NFS4ERR_INVAL for a write-only attribute, the
// errno mapped when the object cannot be read (nothing appended then). `size`: reported
// instead of the file's (a write delegation's holder answered CB_GETATTR with it).
// `read_now`: the object's attributes, read in this operation (Request::attrs_read_now);
// nullptr: read here.
x4::nfsstat4 encode_attrs_of(Request& rq, const Target& t, const AttrMask& want, xdr::Encoder& e,
                             std::optional<uint64_t> size = std::nullopt,
                             const struct statx* read_now = nullptr);

// VERIFY (§18.31) and NVERIFY (§18.15): whether `given` holds exactly the values GETATTR
// would return for `t`: the attr_vals bytes are compared with GETATTR's encoding of the
// same bitmap (as the Linux server does). NFS4_OK with `same` set, or
// the operation's error: NFS4ERR_ATTRNOTSUPP for an attribute this server does not
// support, NFS4ERR_INVAL for rdattr_error or a write-only attribute (time_access_set,
// time_modify_set), NFS4ERR_BADXDR when attr_vals is not one value per attribute of the
// bitmap, or the errno mapped when the object cannot be read.
x4::nfsstat4 compare_attrs(Request& rq, const Target& t, const x4::fattr4& given, bool& same);

}  // namespace nfsrdmad::nfs::v4
