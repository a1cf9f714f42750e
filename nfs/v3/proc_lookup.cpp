// NFSPROC3_LOOKUP (RFC 1813 §3.3.3). Never leaves the export and never follows a
// symlink: vfs::lookup guarantees both.
#include <cerrno>

#include "nfs/v3/names.h"
#include "nfs/v3/request.h"
#include "nfs/vfs/lookup.h"

namespace nfsrdmad::nfs::v3 {

rpc::Outcome proc_lookup(Request& rq) {
    x::LOOKUP3args a;
    if (!rq.decode(a)) return rpc::Outcome::garbage();
    x::LOOKUP3res res;
    Target dir;
    // The directory's attributes as resolve reads them: a LOOKUP does not change the
    // directory, so they serve as its post-op attributes without a second statx.
    struct statx dir_attrs {};
    // Nowait (a reactor): a name the dentry cache holds, in a directory the descriptor
    // cache holds, answered without a worker; ".." (the export's edge to check) is not.
    if (rq.ctx.nowait && a.what.name == "..") {
        rq.decline();
        return rq.reply(res);
    }
    res.set_status(rq.resolve(a.what.dir, dir, &dir_attrs));
    if (res.status() != x::NFS3_OK) return rq.reply(res);
    if (const x::nfsstat3 bad = check_name(a.what.name, NameUse::Lookup); bad != x::NFS3_OK) {
        res.set_status(bad);
        res.resfail().dir_attributes = post_op(dir_attrs, dir.node.fsid());
        return rq.reply(res);
    }
    auto e = rq.ctx.nowait ? vfs::lookup_cached(dir.node, dir_attrs, a.what.name, dir.who.id)
                           : vfs::lookup_as(dir.node, dir_attrs, a.what.name, dir.who.id);
    if (!e && rq.ctx.nowait && e.error() == EWOULDBLOCK) {
        rq.block();
        return rq.reply(res);
    }
    if (!e) {
        // A mount point inside the export is not crossed (RFC 1813 §3.3.3: the server
        // need not cross it); say "no access" rather than "different device".
        res.set_status(e.error() == EXDEV ? x::NFS3ERR_ACCES : to_nfsstat3(e.error()));
        res.resfail().dir_attributes = post_op(dir_attrs, dir.node.fsid());
        return rq.reply(res);
    }
    // A write delegation of the object: its recall (below) is a worker's to start.
    if (rq.ctx.nowait && rq.stale_attributes(e->node.handle)) {
        rq.block();
        return rq.reply(res);
    }
    // Found by a worker: the file is held for a second or two (fd_cache.h), so that the
    // ACCESS and GETATTR an open sends next are answered where they arrive.
    if (!rq.ctx.nowait) rq.svc.files.hold(e->node, e->attr);
    res.resok().object.data = e->node.handle.data();
    // A file an NFSv4.1 client holds a write delegation of: its size and times here may be
    // behind the holder's; no attributes (the client asks GETATTR, answered once the
    // delegation, recalled now, is back).
    if (!rq.delegated(e->node.handle, false))
        res.resok().obj_attributes = post_op(e->attr, e->node.fsid());
    res.resok().dir_attributes = post_op(dir_attrs, dir.node.fsid());
    return rq.reply(res);
}

}  // namespace nfsrdmad::nfs::v3
