// NFSPROC3_READDIR (RFC 1813 §3.3.16): names and cookies, up to `count` bytes.
#include <deque>

#include "nfs/v3/directory_listing.h"

namespace nfsrdmad::nfs::v3 {

rpc::Outcome proc_readdir(Request& rq) {
    x::READDIR3args a;
    if (!rq.decode(a)) return rpc::Outcome::garbage();
    x::READDIR3res res;
    Listing l;
    res.set_status(open_listing(rq, a.dir, a.cookie, a.cookieverf, l));
    if (res.status() != x::NFS3_OK) return refuse_listing(rq, res, l);
    std::deque<std::string> names;  // the reply's views point here
    const size_t limit = reply_limit(a.count);
    size_t used = kDirReplyOverhead;
    auto& entries = res.resok().reply.entries;
    auto r = vfs::readdir(
        l.dir.node, a.cookie,
        [&](const vfs::DirEntry& e) {
            size_t need = entry_size(e.name);
            if (used + need > limit) return false;
            used += need;
            entries.push_back({l.fileid(e.name, e.ino), names.emplace_back(e.name), e.cookie});
            return true;
        },
        l.dir.who.id);
    return finish_listing(rq, res, l, r);
}

}  // namespace nfsrdmad::nfs::v3
