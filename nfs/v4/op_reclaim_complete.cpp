// RECLAIM_COMPLETE (RFC 8881 §18.51). rca_one_fs false: the client has reclaimed all
// its state (once; NFS4ERR_COMPLETE_ALREADY after). rca_one_fs true: for the file
// system of the current filehandle, which this server treats as nothing to record
// (§18.51.3: a server that does not support per-fs reclaim may do so); it needs a
// current filehandle.
#include "nfs/v4/ops.h"
#include "nfs/v4/request.h"

namespace nfsrdmad::nfs::v4 {

OpResult op_reclaim_complete(Compound& c, xdr::Decoder& args, xdr::Encoder& res) {
    Request& rq = *c.rq;
    x4::RECLAIM_COMPLETE4args a;
    if (!rq.decode(args, a)) return OpResult::bad_xdr();
    x4::nfsstat4 st = x4::NFS4_OK;
    if (a.rca_one_fs)
        st = c.current_fh ? x4::NFS4_OK : x4::NFS4ERR_NOFILEHANDLE;
    else
        st = rq.svc.clients.reclaim_complete(rq.clientid);
    if (st == x4::NFS4_OK && !a.rca_one_fs)
        if (auto owner = rq.svc.clients.ownerid(rq.clientid))
            rq.svc.recovery.reclaim_complete(*owner);  // may end grace (recovery.h)
    encode_status_only(res, st);
    return {st};
}

}  // namespace nfsrdmad::nfs::v4
