// NFSPROC3_READDIR (RFC 1813 §3.3.16): names and cookies, up to `count` bytes.
#include <cerrno>
#include <deque>

#include "nfs/v3/directory_listing.h"
#include "nfs/vfs/readdir.h"

namespace nfsrdmad::nfs::v3 {

rpc::Outcome proc_readdir(Request& rq) {
    x::READDIR3args a;
    if (!rq.decode(a)) return rpc::Outcome::garbage();
    x::READDIR3res res;
    Listing l;
    res.status = open_listing(rq, a.dir, a.cookie, a.cookieverf, l);
    if (res.status != x::NFS3_OK) {
        if (l.dir.node.exp) res.resfail.dir_attributes = post_op(l.dir.node);
        return rq.reply(res);
    }
    std::deque<std::string> names;  // the reply's views point here
    size_t used = kDirReplyOverhead;
    auto& entries = res.resok.reply.entries;
    auto r = vfs::readdir(
        l.dir.node, a.cookie,
        [&](const vfs::DirEntry& e) {
            size_t need = entry_size(e.name);
            if (used + need > a.count) return false;
            used += need;
            entries.push_back({l.fileid(e.name, e.ino), names.emplace_back(e.name), e.cookie});
            return true;
        },
        l.dir.who.id);
    x::post_op_attr dir_attrs = post_op(l.dir.node);
    if (!r) {
        res.status = r.error() == EINVAL ? x::NFS3ERR_BAD_COOKIE : to_nfsstat3(r.error());
    } else if (entries.empty() && !r->eof) {
        res.status = x::NFS3ERR_TOOSMALL;  // not even one entry fits in `count`
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
