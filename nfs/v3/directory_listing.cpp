#include "nfs/v3/directory_listing.h"

#include "nfs/vfs/readdir.h"

namespace nfsrdmad::nfs::v3 {

x::nfsstat3 open_listing(Request& rq, const x::nfs_fh3& fh, uint64_t cookie,
                         const x::cookieverf3& verf, Listing& out) {
    x::nfsstat3 s = rq.resolve(fh, out.dir, &out.attrs);
    if (s != x::NFS3_OK) return s;
    auto v = vfs::cookie_verifier(out.dir.node);
    if (!v) return to_nfsstat3(v.error());
    out.verifier = *v;
    out.is_export_root = out.dir.node.handle == out.dir.node.exp->root_handle();
    // A zero verifier is what a client sends before it has one; accept it with any
    // cookie, as the Linux server does.
    uint64_t theirs = from_cookieverf(verf);
    if (cookie != 0 && theirs != 0 && theirs != out.verifier) return x::NFS3ERR_BAD_COOKIE;
    return x::NFS3_OK;
}

}  // namespace nfsrdmad::nfs::v3
