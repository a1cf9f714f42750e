// BACKCHANNEL_CTL (RFC 8881 §18.33): replaces the session's callback program number and
// the security callbacks would use, as CREATE_SESSION's csa_cb_program and csa_sec_parms
// set them (§18.36.3). It needs a SEQUENCE (the engine answers OP_NOT_IN_SESSION
// otherwise), and it is accepted whether or not a connection is bound to the backchannel.
// RPCSEC_GSS handles cannot exist on this server: NFS4ERR_NOENT (§18.33.3).
#include "nfs/v4/ops.h"
#include "nfs/v4/request.h"

namespace nfsrdmad::nfs::v4 {

OpResult op_backchannel_ctl(Compound& c, xdr::Decoder& args, xdr::Encoder& res) {
    Request& rq = *c.rq;
    x4::BACKCHANNEL_CTL4args a;
    if (!rq.decode(args, a)) return OpResult::bad_xdr();
    state::CallbackParams cb{a.bca_cb_program};
    x4::nfsstat4 st = state::choose_callback_security(a.bca_sec_parms, cb);
    if (st == x4::NFS4_OK) {
        rq.session->set_callback(cb);
        rq.svc.callbacks.set_params(rq.session->client(), rq.session->id(), cb);
    }
    encode_status_only(res, st);
    return {st};
}

}  // namespace nfsrdmad::nfs::v4
