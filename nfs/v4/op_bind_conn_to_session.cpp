// BIND_CONN_TO_SESSION (RFC 8881 §18.34): binds the connection the request came on to a
// session, for the fore channel, the backchannel or both; alone in its COMPOUND
// (NOT_ONLY_OP otherwise). The client table keeps the binding
// (state/session_ops.cpp): BADSESSION for an unknown session, WRONG_CRED when SP4_MACH_CRED
// enforces it for another principal.
//
// Directions (§18.34.3): CDFC4_FORE → CDFS4_FORE and CDFC4_BACK → CDFS4_BACK, as the RFC
// requires; for CDFC4_FORE_OR_BOTH and CDFC4_BACK_OR_BOTH the server may pick, and grants
// CDFS4_BOTH. A connection bound already keeps its binding, answered back, or is
// NFS4ERR_INVAL when the request would change it (Session::bind; a FORE_OR_BOTH on a
// fore-only connection adds the back channel, as the Linux server does). A connection
// bound for the backchannel of a session that has one
// (CONN_BACK_CHAN) becomes the client's callback path, probed with CB_NULL unless a path
// is up already (callback/path.h): this is how a client answers SEQ4_STATUS_CB_PATH_DOWN.
//
// "RDMA mode" (the step-up of a stream connection to RPC-over-RDMA) is not offered:
// bctsr_use_conn_in_rdma_mode is always false, which the RFC allows.
#include "nfs/v4/ops.h"
#include "nfs/v4/request.h"

namespace nfsrdmad::nfs::v4 {

OpResult op_bind_conn_to_session(Compound& c, xdr::Decoder& args, xdr::Encoder& res) {
    Request& rq = *c.rq;
    x4::BIND_CONN_TO_SESSION4args a;
    if (!rq.decode(args, a)) return OpResult::bad_xdr();
    // §18.34.3: the only operation, also after a SEQUENCE (the engine catches it first).
    if (c.op_count > 1) {
        encode_status_only(res, x4::NFS4ERR_NOT_ONLY_OP);
        return {x4::NFS4ERR_NOT_ONLY_OP};
    }
    auto r =
        rq.svc.clients.bind_conn_to_session(a.bctsa_sessid, rq.conn(), a.bctsa_dir, rq.principal());
    x4::BIND_CONN_TO_SESSION4res out(r.status);
    if (r.status == x4::NFS4_OK) {
        auto& ok = out.bctsr_resok4();
        ok.bctsr_sessid = a.bctsa_sessid;
        ok.bctsr_dir = r.dir;
        ok.bctsr_use_conn_in_rdma_mode = false;
        const rpc::Peer* peer = rq.ctx.header.peer;
        if (r.dir != x4::CDFS4_FORE && peer)
            if (auto cb = rq.svc.clients.callback_of(a.bctsa_sessid))
                if (auto client = rq.svc.clients.client_of(a.bctsa_sessid))
                    rq.svc.callbacks.bound(*client, rq.conn(), *cb);
    }
    x4::xdr_encode(res, out);
    return {r.status};
}

}  // namespace nfsrdmad::nfs::v4
