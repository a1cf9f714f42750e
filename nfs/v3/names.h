// names.h — filename3 checks shared by the procedures that take a name, with the status
// RFC 1813 gives each case (the vfs layer checks again, with errno values; these come
// first so that the status is the RFC's):
//
// - §3.2 item 1: an empty name is NFS3ERR_ACCES.
// - §3.2 item 5: a name with characters the server cannot handle ('/' would walk a second
//   level, NUL would cut the name short) is NFS3ERR_ACCES.
// - §3.2 item 4: longer than name_max (255; PATHCONF says no_trunc) is NFS3ERR_NAMETOOLONG.
// - "." and "..", by procedure:
//   - LOOKUP resolves them (§3.2 items 2 and 3).
//   - CREATE, MKDIR, SYMLINK, MKNOD: they always exist, NFS3ERR_EXIST.
//   - REMOVE: NFS3ERR_INVAL (they are not files to remove).
//   - RMDIR: "." is NFS3ERR_INVAL and ".." NFS3ERR_EXIST (§3.3.13, IMPLEMENTATION).
//   - RENAME, as either name: NFS3ERR_INVAL (§3.3.14, IMPLEMENTATION).
//   - LINK's new name: NFS3ERR_INVAL (§3.3.15: RENAME's comments on the target name apply).
#pragma once

#include <string_view>

#include "nfs/vfs/names.h"
#include "xdr/nfs3_prot.h"

namespace nfsrdmad::nfs::v3 {

enum class NameUse { Lookup, Create, Remove, RemoveDir, Rename, Link };

inline xdr::nfs3::nfsstat3 check_name(std::string_view name, NameUse use) {
    namespace x = xdr::nfs3;
    if (name.empty() || name.find_first_of(std::string_view("/\0", 2)) != name.npos)
        return x::NFS3ERR_ACCES;
    if (name.size() > vfs::kNameMax) return x::NFS3ERR_NAMETOOLONG;
    if (name != "." && name != "..") return x::NFS3_OK;
    switch (use) {
        case NameUse::Lookup:
            return x::NFS3_OK;
        case NameUse::Create:
            return x::NFS3ERR_EXIST;
        case NameUse::RemoveDir:
            return name == "." ? x::NFS3ERR_INVAL : x::NFS3ERR_EXIST;
        case NameUse::Remove:
        case NameUse::Rename:
        case NameUse::Link:
            return x::NFS3ERR_INVAL;
    }
    return x::NFS3ERR_INVAL;
}

}  // namespace nfsrdmad::nfs::v3
