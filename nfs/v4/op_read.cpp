// READ (RFC 8881 §18.22). The file is read straight into the transport's payload
// buffer (or spliced into its pipe on TCP), which the reply sends without copying: on
// RPC-over-RDMA the data is DDP-eligible (RFC 8267 §4) and goes by the READ's write
// chunk. As NFSv3's READ (nfs/v3/proc_read.cpp).
#include <algorithm>
#include <cerrno>

#include "nfs/v4/io_file.h"
#include "nfs/v4/ops.h"
#include "nfs/v4/request.h"
#include "nfs/v4/stateids.h"
#include "nfs/vfs/io.h"

namespace nfsrdmad::nfs::v4 {

namespace {
constexpr uint32_t kMaxRead = 1u << 20;  // maxread (object_attrs.cpp)
}

// Nowait pre-flight (OpEntry::may_nowait): a large READ (vfs::kNowaitReadMax) and one
// through a special stateid (io_file) are a worker's whatever else holds.
bool read_may_nowait(Compound& c, xdr::Decoder args) {
    x4::READ4args a;
    if (!c.rq->decode(args, a)) return true;  // BADXDR, answered where it runs
    if (a.count > vfs::kNowaitReadMax) return false;
    const auto special = state::classify(from_wire(a.stateid));
    return special != state::Special::Anonymous && special != state::Special::ReadBypass;
}

OpResult op_read(Compound& c, xdr::Decoder& args, xdr::Encoder& res) {
    Request& rq = *c.rq;
    x4::READ4args a;
    if (!rq.decode(args, a)) return OpResult::bad_xdr();
    if (rq.ctx.nowait && a.count > vfs::kNowaitReadMax)
        return {rq.block()};  // a large copy: a worker's, beside the others' (vfs/io.h)
    std::shared_ptr<const vfs::OpenFile> file;
    Caller who;
    vfs::Unlinked unlinked;
    x4::nfsstat4 st = io_file(c, a.stateid, false, file, who, &unlinked);
    if (st != x4::NFS4_OK) {
        encode_status_only(res, st);
        return {st};
    }
    const uint32_t count = std::min(a.count, kMaxRead);
    rpc::PayloadBuffer* buf = count ? rq.ctx.payload_buffer(count) : nullptr;
    // Nowait (Compound::nowait): no buffer free this instant, or one with a pipe to splice
    // into: a worker's READ, as NFSv3's (nfs/v3/proc_read.cpp).
    if (rq.ctx.nowait && count && (!buf || buf->splice_fd() >= 0)) {
        const x4::nfsstat4 blocked = rq.block();
        encode_status_only(res, blocked);
        return {blocked};
    }
    if (count && !buf) {
        // Every payload buffer is in flight (RDMA's registered pool is bounded).
        encode_status_only(res, x4::NFS4ERR_DELAY);
        return {x4::NFS4ERR_DELAY};
    }
    vfs::Result<vfs::ReadResult> r = vfs::ReadResult{0, false};
    if (count && rq.ctx.nowait) {
        r = vfs::read_nowait(*file, a.offset, count, buf->data(), who.id, unlinked);
        if (!r && r.error() == EWOULDBLOCK) {
            const x4::nfsstat4 blocked = rq.block();
            encode_status_only(res, blocked);
            return {blocked};
        }
    } else if (count) {
        r = vfs::fail(EINVAL);
        if (int pipe = buf->splice_fd(); pipe >= 0) {
            r = vfs::read_to_pipe(*file, a.offset, count, pipe, who.id, unlinked);
            if (r) buf->set_spliced(r->count);
            if (r && !r->eof && r->count < count) {
                auto rest = vfs::read(*file, a.offset + r->count, count - r->count,
                                      buf->data() + r->count, who.id, unlinked);
                if (rest) {
                    r->count += rest->count;
                    r->eof = rest->eof;
                }
            }
        }
        if (!r && r.error() == EINVAL)
            r = vfs::read(*file, a.offset, count, buf->data(), who.id, unlinked);
    } else {
        // A zero-byte READ still says whether the offset is at or past the end.
        auto at = vfs::getattr(*file);
        if (at) r->eof = a.offset >= at->stx_size;
    }
    if (!r) {
        st = to_nfsstat4(r.error());
        encode_status_only(res, st);
        return {st};
    }
    x4::READ4res out(x4::NFS4_OK);
    out.resok4().eof = r->eof;
    rq.ctx.report.bytes_read += r->count;
    if (r->count) {
        out.resok4().data = {buf->data(), r->count};
        res.add_external(out.resok4().data);
    }
    x4::xdr_encode(res, out);
    return {};
}

}  // namespace nfsrdmad::nfs::v4
