// ACCESS (RFC 8881 §18.1): the access bits are NFSv3's (vfs::access_of);
// unknown bits are NFS4ERR_INVAL, as the Linux server answers. A read-only export
// grants no MODIFY, EXTEND or DELETE; a pseudo directory only READ and LOOKUP.
#include "nfs/v4/ops.h"
#include "nfs/v4/request.h"
#include "nfs/vfs/attrs.h"

namespace nfsrdmad::nfs::v4 {

OpResult op_access(Compound& c, xdr::Decoder& args, xdr::Encoder& res) {
    Request& rq = *c.rq;
    x4::ACCESS4args a;
    if (!rq.decode(args, a)) return OpResult::bad_xdr();
    constexpr uint32_t kAll = x4::ACCESS4_READ | x4::ACCESS4_LOOKUP | x4::ACCESS4_MODIFY |
                              x4::ACCESS4_EXTEND | x4::ACCESS4_DELETE | x4::ACCESS4_EXECUTE;
    x4::nfsstat4 st = (a.access & ~kAll) ? x4::NFS4ERR_INVAL : x4::NFS4_OK;
    Target* t = nullptr;
    if (st == x4::NFS4_OK) st = rq.current(t);
    uint32_t granted = 0;
    if (st == x4::NFS4_OK && t->pseudo) {
        granted = a.access & (x4::ACCESS4_READ | x4::ACCESS4_LOOKUP);
    } else if (st == x4::NFS4_OK) {
        const struct statx* known = rq.attrs_read_now();
        auto attr = known ? vfs::Result<struct statx>(*known) : vfs::getattr(t->node);
        // POSIX ACLs count (vfs::access_of); one to read as the caller is a worker's.
        auto access =
            attr ? vfs::access_of(t->node.fd.get(), *attr, t->who.id, a.access, !rq.ctx.nowait)
                 : vfs::Result<uint32_t>(attr.failure());
        if (!access && access.error() == EWOULDBLOCK && rq.ctx.nowait) return {rq.block()};
        if (!access) {
            st = to_nfsstat4(access.error());
        } else {
            granted = *access;
            if (!t->who.read_write)
                granted &= ~(vfs::kAccessModify | vfs::kAccessExtend | vfs::kAccessDelete);
        }
    }
    x4::ACCESS4res r(st);
    if (st == x4::NFS4_OK) {
        r.resok4().supported = a.access;
        r.resok4().access = granted;
    }
    x4::xdr_encode(res, r);
    return {st};
}

}  // namespace nfsrdmad::nfs::v4
