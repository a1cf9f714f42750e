// WRITE (RFC 8881 §18.32) and COMMIT (§18.3). WRITE's data is written from where the
// transport received it (the TCP record, or the RDMA Read target: DDP-eligible, RFC
// 8267 §4), never copied first; writeverf is this daemon run's write verifier.
#include <cerrno>

#include "nfs/v4/io_file.h"
#include "nfs/v4/lookup.h"
#include "nfs/v4/ops.h"
#include "nfs/v4/request.h"
#include "nfs/vfs/io.h"
#include "nfs/vfs/secret.h"

namespace nfsrdmad::nfs::v4 {

namespace {

x4::verifier4 write_verifier() {
    uint64_t v = vfs::write_verifier();
    x4::verifier4 out;
    for (int i = 7; i >= 0; --i, v >>= 8) out[i] = static_cast<uint8_t>(v);
    return out;
}

}  // namespace

OpResult op_write(Compound& c, xdr::Decoder& args, xdr::Encoder& res) {
    Request& rq = *c.rq;
    x4::WRITE4args a;
    if (!rq.decode(args, a)) return OpResult::bad_xdr();
    std::shared_ptr<const vfs::OpenFile> file;
    Caller who;
    vfs::Unlinked unlinked;
    x4::nfsstat4 st = io_file(c, a.stateid, true, file, who, &unlinked);
    if (st == x4::NFS4_OK && a.stable > x4::FILE_SYNC4) st = x4::NFS4ERR_INVAL;
    if (st != x4::NFS4_OK) {
        encode_status_only(res, st);
        return {st};
    }
    auto r = vfs::write(*file, a.offset, a.data, static_cast<vfs::StableHow>(a.stable), who.id,
                        unlinked);
    if (!r) {
        st = to_nfsstat4(r.error());
        encode_status_only(res, st);
        return {st};
    }
    x4::WRITE4res out(x4::NFS4_OK);
    out.resok4().count = r->count;
    rq.ctx.report.bytes_written += r->count;
    out.resok4().committed = static_cast<x4::stable_how4>(r->committed);
    out.resok4().writeverf = write_verifier();
    x4::xdr_encode(res, out);
    return {};
}

OpResult op_commit(Compound& c, xdr::Decoder& args, xdr::Encoder& res) {
    Request& rq = *c.rq;
    x4::COMMIT4args a;
    if (!rq.decode(args, a)) return OpResult::bad_xdr();
    Target* cur;
    x4::nfsstat4 st = rq.current(cur);
    if (st == x4::NFS4_OK && cur->pseudo) st = x4::NFS4ERR_ISDIR;
    // §18.3.3: offset + count past 2^64 is INVAL.
    if (st == x4::NFS4_OK && a.count && a.offset + a.count < a.offset) st = x4::NFS4ERR_INVAL;
    std::shared_ptr<const vfs::OpenFile> file;
    if (st == x4::NFS4_OK) {
        auto f = rq.svc.open_file(cur->node, vfs::OpenFor::Read);
        if (!f)
            st = f.error() == EINVAL ? must_be_file(*cur) : to_nfsstat4(f.error());
        else
            file = std::move(*f);
    }
    if (st == x4::NFS4_OK)
        if (auto r = vfs::commit(*file, a.offset, a.count); !r) st = to_nfsstat4(r.error());
    x4::COMMIT4res out(st);
    if (st == x4::NFS4_OK) out.resok4().writeverf = write_verifier();
    x4::xdr_encode(res, out);
    return {st};
}

}  // namespace nfsrdmad::nfs::v4
