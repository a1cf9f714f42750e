// ACCESS (RFC 8881 §18.1): the access bits are NFSv3's (vfs::access_from_mode);
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
        if (!attr) {
            st = to_nfsstat4(attr.error());
        } else {
            granted = a.access & vfs::access_from_mode(*attr, t->who.id);
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
