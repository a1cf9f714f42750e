// NFSPROC3_COMMIT (RFC 1813 §3.3.21): makes UNSTABLE writes durable; the verifier
// tells the client whether the server restarted since it wrote.
#include "nfs/v3/request.h"
#include "nfs/vfs/io.h"

namespace nfsrdmad::nfs::v3 {

rpc::Outcome proc_commit(Request& rq) {
    x::COMMIT3args a;
    if (!rq.decode(a)) return rpc::Outcome::garbage();
    x::COMMIT3res res;
    std::shared_ptr<const vfs::OpenFile> file;
    Caller who;
    res.set_status(rq.open(a.file, vfs::OpenFor::Read, file, who));
    if (res.status() != x::NFS3_OK) return rq.reply(res);
    x::wcc_data w;
    if (auto before = vfs::getattr(*file)) w.before = pre_op(*before);
    if (auto r = vfs::commit(*file, a.offset, a.count); !r) res.set_status(to_nfsstat3(r.error()));
    if (auto after = vfs::getattr(*file)) w.after = post_op(*after, file->exp->fsid());
    if (res.status() != x::NFS3_OK) {
        res.resfail().file_wcc = w;
        return rq.reply(res);
    }
    res.resok().file_wcc = w;
    put_write_verifier(res.resok().verf);
    return rq.reply(res);
}

}  // namespace nfsrdmad::nfs::v3
