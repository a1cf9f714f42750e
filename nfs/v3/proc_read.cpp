// NFSPROC3_READ (RFC 1813 §3.3.6). The file is read straight into the transport's
// payload buffer, which the reply then sends without copying (xdr::Encoder's
// external segment: an RDMA Write chunk on RDMA). Where the transport offers a pipe
// (TCP), the file's page-cache pages are spliced into it instead and never enter
// userspace at all; the payload buffer is then only what the encoding points at.
#include "nfs/v3/request.h"
#include "nfs/vfs/io.h"

namespace nfsrdmad::nfs::v3 {

rpc::Outcome proc_read(Request& rq) {
    x::READ3args a;
    if (!rq.decode(a)) return rpc::Outcome::garbage();
    x::READ3res res;
    if (rq.ctx.nowait && a.count > vfs::kNowaitReadMax) {
        rq.decline();  // a large copy: a worker's (vfs/io.h)
        return rq.reply(res);
    }
    std::shared_ptr<const vfs::OpenFile> file;
    Caller who;
    res.set_status(rq.open(a.file, vfs::OpenFor::Read, file, who));
    if (res.status() != x::NFS3_OK) return rq.reply(res);
    uint32_t count = std::min(a.count, kMaxTransfer);
    rpc::PayloadBuffer* buf = rq.ctx.payload_buffer(count);
    if (!buf && rq.ctx.nowait) {
        // None free this instant: a worker waits a little for one (as the transport's).
        rq.block();
        return rq.reply(res);
    }
    if (!buf) {
        // Every payload buffer is in flight (RDMA's registered pool is bounded): the
        // client retries later (RFC 1813 §2.6 NFS3ERR_JUKEBOX).
        res.set_status(x::NFS3ERR_JUKEBOX);
        return rq.reply(res);
    }
    vfs::Result<vfs::ReadResult> r = vfs::fail(EINVAL);
    if (rq.ctx.nowait) {
        // From the page cache, into memory. A buffer with a pipe (a transport that splices
        // what a worker reads) is a worker's READ: the loop lends TCP's without one.
        if (buf->splice_fd() < 0) r = vfs::read_nowait(*file, a.offset, count, buf->data(), who.id);
        if (buf->splice_fd() >= 0 || (!r && r.error() == EWOULDBLOCK)) {
            rq.block();
            return rq.reply(res);
        }
    } else if (int pipe = buf->splice_fd(); pipe >= 0) {
        r = vfs::read_to_pipe(*file, a.offset, count, pipe, who.id);
        if (r) buf->set_spliced(r->count);
        if (r && !r->eof && r->count < count) {
            // The pipe filled (an unaligned 1 MiB read touches 257 pages; a pipe may be
            // only 1 MiB): the rest goes into memory, behind the spliced part.
            auto rest = vfs::read(*file, a.offset + r->count, count - r->count,
                                  buf->data() + r->count, who.id);
            if (rest) {
                r->count += rest->count;
                r->eof = rest->eof;
            }
        }
    }
    if (!r && r.error() == EINVAL)  // no pipe, or a file system that cannot splice
        r = vfs::read(*file, a.offset, count, buf->data(), who.id);
    // Those the read was checked against (vfs::ReadResult::attrs): one statx, not two.
    auto st = r ? vfs::Result<struct statx>(r->attrs) : vfs::getattr(*file);
    x::post_op_attr attrs = st ? post_op(*st, file->exp->fsid()) : x::post_op_attr{};
    if (!r) {
        res.set_status(to_nfsstat3(r.error()));
        res.resfail().file_attributes = attrs;
        return rq.reply(res);
    }
    res.resok().file_attributes = attrs;
    res.resok().count = r->count;
    res.resok().eof = r->eof;
    rq.ctx.report.bytes_read += r->count;
    res.resok().data = {buf->data(), r->count};
    rq.ctx.res.add_external(res.resok().data);
    return rq.reply(res);
}

}  // namespace nfsrdmad::nfs::v3
