// NFSPROC3_READDIRPLUS (RFC 1813 §3.3.17): READDIR plus each entry's handle and
// attributes, up to `maxcount` bytes in all and `dircount` bytes of names and cookies.
#include <cerrno>
#include <deque>

#include "nfs/v3/directory_listing.h"
#include "nfs/vfs/lookup.h"

namespace nfsrdmad::nfs::v3 {

rpc::Outcome proc_readdirplus(Request& rq) {
    x::READDIRPLUS3args a;
    if (!rq.decode(a)) return rpc::Outcome::garbage();
    x::READDIRPLUS3res res;
    Listing l;
    res.set_status(open_listing(rq, a.dir, a.cookie, a.cookieverf, l));
    if (res.status() != x::NFS3_OK) return refuse_listing(rq, res, l);
    std::deque<std::string> names;        // the reply's views point here
    std::deque<vfs::FileHandle> handles;  // and here
    const size_t limit = reply_limit(a.maxcount);
    size_t used = kDirReplyOverhead, dir_bytes = 0;
    auto& entries = res.resok().reply.entries;
    // Each entry is looked up as the caller would look it up (RFC 1813 §3.3.17: a handle
    // and attributes where the server can give them). The one permission that takes is
    // search on this directory, the same for every name: asked once, and the lookups then
    // run without an identity switch each.
    auto search = vfs::may_search(l.dir.node, l.attrs, l.dir.who.id);
    const bool may_search = search && *search;
    auto r = vfs::readdir(
        l.dir.node, a.cookie,
        [&](const vfs::DirEntry& e) {
            x::entryplus3 ep;
            ep.fileid = l.fileid(e.name, e.ino);
            ep.cookie = e.cookie;
            size_t need = entry_size(e.name) + 4 + 4;  // + the two "follows" flags
            vfs::Result<vfs::Listed> found = vfs::fail(EACCES);
            if (may_search) found = vfs::lookup_listed(l.dir.node, e.name);
            if (found) {
                const auto& h = handles.emplace_back(found->handle);
                if (!rq.stale_attributes(found->handle))  // a write delegation is out
                    ep.name_attributes = post_op(found->attr, l.dir.node.fsid());
                ep.name_handle.set_handle_follows(true).handle().data = h.data();
                need += 84 + 4 + h.size + xdr::pad4(h.size);
            }
            // dircount limits the READDIR part of the reply (fileid, name, cookie).
            size_t dir_need = entry_size(e.name);
            if (used + need > limit || (a.dircount && dir_bytes + dir_need > a.dircount)) {
                if (ep.name_handle.handle_follows()) handles.pop_back();
                return false;
            }
            used += need;
            dir_bytes += dir_need;
            ep.name = names.emplace_back(e.name);
            entries.push_back(std::move(ep));
            return true;
        },
        l.dir.who.id);
    return finish_listing(rq, res, l, r);
}

}  // namespace nfsrdmad::nfs::v3
