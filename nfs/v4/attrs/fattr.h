// fattr.h — NFSv4.1 attributes of a file system object, encoded as fattr4 (RFC 8881
// §5: bitmap4 of what is returned, then the values in attribute-number order as one
// opaque attrlist4).
//
// What is supported: every REQUIRED attribute (§5.6) and the RECOMMENDED ones (§5.7)
// the Linux client asks for — mode, owner and owner_group, numlinks, space_used, the
// times, fileid and mounted_on_fileid, the file system's sizes and limits — and acl and
// aclsupport, the ACL mapped from the mode (acl.h). Not (yet): fs_locations,
// time_create, quotas, the pNFS and retention ones.
// Unsupported attributes a client asks for are left out of the reply's bitmap, which
// is how a client learns they are missing (§5.2).
#pragma once

#include <sys/stat.h>

#include <cstdint>
#include <span>
#include <string>
#include <string_view>

#include "nfs/v4/attrs/attr_mask.h"
#include "xdr/nfs4_prot.h"
#include "xdr/runtime/xdr.h"

namespace nfsrdmad::nfs::v4 {

// Per file system: the same for every object of one export.
struct FsAttrs {
    x4::fsid4 fsid;
    uint64_t space_total = 0, space_free = 0, space_avail = 0;
    uint64_t files_total = 0, files_free = 0, files_avail = 0;
    uint64_t maxfilesize = 0;
    uint32_t maxname = 255;
    uint32_t maxlink = 65000;
    uint64_t maxread = 0, maxwrite = 0;
    uint32_t lease_time = 90;
};

// One object, as the back end found it.
struct ObjectAttrs {
    // Not zeroed here (256 bytes on every GETATTR): whoever fills ObjectAttrs sets it
    // whole, or value-initializes it (`ObjectAttrs o{}`).
    struct statx st;
    uint64_t change = 0;             // the change attribute (§5.8.1.4)
    std::span<const uint8_t> fh;     // its NFSv4 filehandle
    // Already mapped to "name@domain" or numbers; the caller keeps the bytes.
    std::string_view owner, owner_group;
    uint64_t mounted_on_fileid = 0;  // fileid, or what it covers at a mount point
    const FsAttrs* fs = nullptr;
};

// The attributes GETATTR and READDIR can return.
AttrMask supported_attrs();
// Those only SETATTR and OPEN/CREATE may carry: reading them is NFS4ERR_INVAL
// (§18.7.3): time_access_set, time_modify_set.
AttrMask write_only_attrs();
// What EXCLUSIVE4_1 creation accepts alongside its verifier (§5.8.1.14).
AttrMask exclcreat_attrs();

// Appends fattr4 with `requested` ∩ supported_attrs() of `o`. NFS4ERR_INVAL, and
// nothing appended, when `requested` names a write-only attribute.
x4::nfsstat4 encode_fattr(const AttrMask& requested, const ObjectAttrs& o, xdr::Encoder& e);

// Whether `vals` is exactly one well-formed XDR value of each attribute of `m`, in
// attribute-number order (attrlist4, §3.3.7). Every attribute of `m` must be in
// supported_attrs(): the caller answers the others first.
bool attrlist_well_formed(const AttrMask& m, std::span<const uint8_t> vals);

// §5.8.1.1 type, from the mode's file type bits.
x4::nfs_ftype4 file_type(uint32_t mode);

}  // namespace nfsrdmad::nfs::v4
