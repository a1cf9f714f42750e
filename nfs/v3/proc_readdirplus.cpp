// NFSPROC3_READDIRPLUS (RFC 1813 §3.3.17): READDIR plus each entry's handle and
// attributes, up to `maxcount` bytes in all and `dircount` bytes of names and cookies.
#include <cerrno>
#include <deque>

#include "nfs/v3/directory_listing.h"
#include "nfs/vfs/lookup.h"
#include "nfs/vfs/readdir.h"

namespace nfsrdmad::nfs::v3 {

rpc::Outcome proc_readdirplus(Request& rq) {
    x::READDIRPLUS3args a;
    if (!rq.decode(a)) return rpc::Outcome::garbage();
    x::READDIRPLUS3res res;
    Listing l;
    res.status = open_listing(rq, a.dir, a.cookie, a.cookieverf, l);
    if (res.status != x::NFS3_OK) {
        if (l.dir.node.exp) res.resfail.dir_attributes = post_op(l.dir.node);
        return rq.reply(res);
    }
    std::deque<std::string> names;           // the reply's views point here
    std::deque<vfs::FileHandle> handles;     // and here
    size_t used = kDirReplyOverhead, dir_bytes = 0;
    auto& entries = res.resok.reply.entries;
    auto r = vfs::readdir(
        l.dir.node, a.cookie,
        [&](const vfs::DirEntry& e) {
            x::entryplus3 ep;
            ep.fileid = l.fileid(e.name, e.ino);
            ep.cookie = e.cookie;
            size_t need = entry_size(e.name) + 4 + 4;  // + the two "follows" flags
            if (auto found = vfs::lookup(l.dir.node, e.name, l.dir.who.id)) {
                const auto& h = handles.emplace_back(found->node.handle);
                ep.name_attributes = post_op(found->attr, found->node.fsid());
                ep.name_handle.handle_follows = true;
                ep.name_handle.handle.data = h.data();
                need += 84 + 4 + h.size + xdr::pad4(h.size);
            }
            // dircount limits the READDIR part of the reply (fileid, name, cookie).
            size_t dir_need = entry_size(e.name);
            if (used + need > a.maxcount || (a.dircount && dir_bytes + dir_need > a.dircount)) {
                if (ep.name_handle.handle_follows) handles.pop_back();
                return false;
            }
            used += need;
            dir_bytes += dir_need;
            ep.name = names.emplace_back(e.name);
            entries.push_back(std::move(ep));
            return true;
        },
        l.dir.who.id);
    x::post_op_attr dir_attrs = post_op(l.dir.node);
    if (!r) {
        res.status = r.error() == EINVAL ? x::NFS3ERR_BAD_COOKIE : to_nfsstat3(r.error());
    } else if (entries.empty() && !r->eof) {
        res.status = x::NFS3ERR_TOOSMALL;
    }
    if (res.status != x::NFS3_OK) {
        res.resfail.dir_attributes = dir_attrs;
        return rq.reply(res);
    }
    res.resok.dir_attributes = dir_attrs;
    res.resok.cookieverf = to_cookieverf(l.verifier);
    res.resok.reply.eof = r->eof;
    return rq.reply(res);
}

}  // namespace nfsrdmad::nfs::v3
