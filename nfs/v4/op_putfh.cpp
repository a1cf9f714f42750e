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
        st = !node                    ? x4::NFS4ERR_BADHANDLE
             : rq.pseudo().has(*node) ? x4::NFS4_OK
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

// Nowait pre-flight (OpEntry::may_nowait). GETATTR, ACCESS and LOOKUP after this PUTFH
// take its object from the descriptor cache (Request::resolve); one the cache does not
// hold (a file no one has open: `ls -l`) would give the COMPOUND up after SEQUENCE and
// PUTFH ran, so it is declined now. READ with an open's stateid reads through the open's
// own descriptor.
bool putfh_may_nowait(Compound& c, xdr::Decoder args) {
    bool needs_object = false;
    for (size_t i = c.op_index + 1; i < c.decoded_ops && !needs_object; ++i) {
        const uint32_t op = c.opnum_at[i];
        if (op == x4::OP_PUTFH || op == x4::OP_PUTROOTFH) break;
        // LOOKUP searches the object itself (a directory) before anything follows it.
        needs_object = op == x4::OP_GETATTR || op == x4::OP_ACCESS || op == x4::OP_LOOKUP;
    }
    if (!needs_object) return true;
    Request& rq = *c.rq;
    x4::PUTFH4args a;
    // A handle that is not ours, or a pseudo-fs one, is answered without blocking.
    if (!rq.decode(args, a) || a.object.size() > x4::NFS4_FHSIZE || is_pseudo_handle(a.object))
        return true;
    auto ref = rq.find_by_handle(a.object);  // remembered: PUTFH does not check it again
    return !ref || (!Request::leave_to_worker(**ref) && rq.held_in_cache(**ref));
}

}  // namespace nfsrdmad::nfs::v4
