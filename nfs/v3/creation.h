// What CREATE, MKDIR, SYMLINK and MKNOD share (RFC 1813 §3.3.8-§3.3.11): they all
// answer with the new object's handle and attributes plus the directory's wcc_data.
#pragma once

#include "nfs/v3/names.h"
#include "nfs/v3/request.h"
#include "nfs/vfs/node.h"

namespace nfsrdmad::nfs::v3 {

// After a new object exists: the sattr3 fields other than mode (which creation itself
// applied): owner, size, times. Best effort. False when s sets none of them (the entry's
// attributes are then still the object's).
bool apply_remaining_attrs(const vfs::Entry& e, const x::sattr3& s, const vfs::Identity& id);

// CREATE UNCHECKED that found a regular file of that name (RFC 1813 §3.3.8: "created
// without checking for the existence of a duplicate file"): of the sattr3, only the size
// applies (the Linux server keeps ATTR_SIZE alone, so an O_TRUNC open truncates and
// nothing else of the file changes), and a failure is the call's (NFS3ERR_ACCES for a
// caller who may not truncate it). `changed`: a size was set.
vfs::Result<void> apply_size_to_existing(const vfs::Entry& e, const x::sattr3& s,
                                         const vfs::Identity& id, bool& changed);

// Resolves the directory, checks the export is writable, runs `make` (Target& dir,
// vfs::DirChange*: the directory's attributes around the change, for wcc_data) and fills
// `res`. `make` returns Result<vfs::Entry>. `made` (CREATE UNCHECKED): set by `make`, false
// when it found the file already there (apply_size_to_existing).
template <class Make>
rpc::Outcome create_object(Request& rq, const x::diropargs3& where, const x::sattr3* extra,
                           Make make, const bool* made = nullptr) {
    x::CREATE3res res;
    Target dir;
    res.set_status(rq.resolve_for_change(where.dir, dir));
    if (res.status() != x::NFS3_OK) return rq.reply(res);
    const x::pre_op_attr before;  // none for a failure before the change (resolve_for_change)
    vfs::DirChange change;
    if (const x::nfsstat3 bad = check_name(where.name, NameUse::Create); bad != x::NFS3_OK) {
        res.set_status(bad);
    } else if (!dir.who.read_write) {
        res.set_status(x::NFS3ERR_ROFS);
    } else {
        auto e = make(dir, &change);
        if (!e) {
            res.set_status(to_nfsstat3(e.error()));
        } else {
            bool changed = false;
            if (extra && made && !*made) {
                if (auto r = apply_size_to_existing(*e, *extra, dir.who.id, changed); !r) {
                    res.set_status(to_nfsstat3(r.error()));
                    res.resfail().dir_wcc = wcc(change, before, dir.node);
                    return rq.reply(res);
                }
            } else {
                changed = extra && apply_remaining_attrs(*e, *extra, dir.who.id);
            }
            res.resok().obj = post_op_fh(e->node);
            // Read when the object was picked up; again only if attributes were set since.
            res.resok().obj_attributes =
                changed ? post_op(e->node) : post_op(e->attr, e->node.fsid());
            // The handle's bytes live in e->node; encode before it goes away.
            res.resok().dir_wcc = wcc(change, before, dir.node);
            return rq.reply(res);
        }
    }
    res.resfail().dir_wcc = wcc(change, before, dir.node);
    return rq.reply(res);
}

}  // namespace nfsrdmad::nfs::v3
