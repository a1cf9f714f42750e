// NFSPROC3_WRITE (RFC 1813 §3.3.7). The data is written from where the transport
// received it (the TCP record, or the RDMA Read target), never copied first.
#include "nfs/v3/request.h"
#include "nfs/vfs/io.h"

namespace nfsrdmad::nfs::v3 {

rpc::Outcome proc_write(Request& rq) {
    x::WRITE3args a;
    if (!rq.decode(a)) return rpc::Outcome::garbage();
    x::WRITE3res res;
    // RFC 1813 §3.3.7: count bytes of data; the opaque must hold at least that many.
    if (a.data.size() < a.count) return rpc::Outcome::garbage();
    std::shared_ptr<const vfs::OpenFile> file;
    Caller who;
    std::optional<struct statx> read_now;
    res.set_status(rq.open(a.file, vfs::OpenFor::Write, file, who, &read_now));
    if (res.status() != x::NFS3_OK) return rq.reply(res);
    // The pre-op attributes: what the descriptor cache read a moment ago when it opened the
    // file for this call (the first WRITE of a new file: a statx fewer), else read here.
    auto before = read_now ? vfs::Result<struct statx>(*read_now) : vfs::getattr(*file);
    x::wcc_data w;
    if (before) w.before = pre_op(*before);
    if (!who.read_write) {
        res.set_status(x::NFS3ERR_ROFS);
    } else {
        // The pre-op attributes, read a moment ago, serve the permission check too.
        auto r = vfs::write(*file, a.offset, a.data.first(a.count),
                            static_cast<vfs::StableHow>(a.stable), who.id, vfs::Unlinked::Stale,
                            before ? &*before : nullptr);
        if (r) {
            res.resok().count = r->count;
            rq.ctx.report.bytes_written += r->count;
            res.resok().committed = static_cast<x::stable_how>(r->committed);
            put_write_verifier(res.resok().verf);
        } else {
            res.set_status(to_nfsstat3(r.error()));
        }
    }
    if (auto after = vfs::getattr(*file)) w.after = post_op(*after, file->exp->fsid());
    if (res.status() == x::NFS3_OK)
        res.resok().file_wcc = w;
    else
        res.resfail().file_wcc = w;
    return rq.reply(res);
}

}  // namespace nfsrdmad::nfs::v3
