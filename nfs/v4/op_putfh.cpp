// PUTFH (RFC 8881 §18.19). The handle is checked now (BADHANDLE for one that is not
// ours, STALE for one that is gone) as knfsd does; WRONGSEC is left to the operation
// after it (§2.6.3.1.1.2: PUTFH followed by SECINFO_NO_NAME or LOOKUP ... must not
// fail with WRONGSEC), so an export's rules are not applied here.
#include "nfs/v4/ops.h"
#include "nfs/v4/pseudo_fs.h"
#include "nfs/v4/request.h"

namespace nfsrdmad::nfs::v4 {

OpResult op_putfh(Compound& c, xdr::Decoder& args, xdr::Encoder& res) {
    Request& rq = *c.rq;
    x4::PUTFH4args a;
    if (!rq.decode(args, a)) return OpResult::bad_xdr();
    x4::nfsstat4 st = x4::NFS4_OK;
    if (a.object.size() > x4::NFS4_FHSIZE) {
        st = x4::NFS4ERR_BADHANDLE;
    } else if (is_pseudo_handle(a.object)) {
        auto node = decode_pseudo_handle(rq.table->key(), a.object);
        st = !node                   ? x4::NFS4ERR_BADHANDLE
             : rq.pseudo->has(*node) ? x4::NFS4_OK
                                     : x4::NFS4ERR_STALE;
    } else if (auto ref = rq.find_by_handle(a.object); !ref) {
        st = to_nfsstat4(ref.error());
    }
    auto fh = WireHandle::from(a.object);  // fits: one of ours
    if (st == x4::NFS4_OK && !fh) st = x4::NFS4ERR_BADHANDLE;
    if (st == x4::NFS4_OK) {
        c.current_fh = *fh;
        c.current_stateid.reset();  // §16.2.3.1.2: a new current fh clears it
    }
    encode_status_only(res, st);
    return {st};
}

}  // namespace nfsrdmad::nfs::v4
