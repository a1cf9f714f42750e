// lookup.h — one name in a directory, pseudo or real (op_lookup.cpp): what LOOKUP,
// SECINFO, READDIR (an entry's attributes) and OPEN's CLAIM_NULL share.
#pragma once

#include <sys/stat.h>

#include <optional>
#include <string_view>

#include "nfs/v4/request.h"

namespace nfsrdmad::nfs::v4 {

// NFS4_OK if `t` is a directory; NOTDIR, or SYMLINK for a symlink (§18.15.3).
x4::nfsstat4 must_be_dir(const Target& t);
// NFS4_OK if `t` is a regular file; otherwise what READ, WRITE and LOCK answer (§18.22.3,
// §18.32.4, §18.10.4): ISDIR for a directory, SYMLINK for a symlink, WRONG_TYPE for the rest.
x4::nfsstat4 must_be_file(const Target& t);
// must_be_dir, then lookup_entry.
x4::nfsstat4 lookup_name(Request& rq, const Target& dir, std::string_view name, Target& out,
                         std::optional<struct statx>* attrs = nullptr);
// `name` in `dir`, which is known to be a directory: a pseudo entry (an export root is
// admitted with its export's rules), or the caller's lookup: vfs::lookup_as (the caller's
// search permission on dir, then the name as the server), vfs::lookup_cached in a nowait
// COMPOUND. `attrs`: set to the object's attributes when the lookup read them.
// `searched`: the caller's search permission on dir was found already (vfs::may_search;
// READDIR, for every entry of one directory): vfs::lookup_permitted, no identity switch.
x4::nfsstat4 lookup_entry(Request& rq, const Target& dir, std::string_view name, Target& out,
                          std::optional<struct statx>* attrs = nullptr, bool searched = false);

// LOOKUPP's answer (§18.14): the parent of directory `dir`; an export's root goes up
// into the pseudo file system, the pseudo root has none (NOENT). SECINFO_NO_NAME's
// SECINFO_STYLE4_PARENT asks the same.
x4::nfsstat4 parent_of(Request& rq, const Target& dir, Target& out);

}  // namespace nfsrdmad::nfs::v4
