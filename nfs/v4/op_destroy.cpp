// DESTROY_SESSION (RFC 8881 §18.37) and DESTROY_CLIENTID (§18.50): the client table
// decides (bound connection, requests in progress, state still held); a destroyed
// client's opens go with it, and delegations of files removed since do not hold it.
#include "nfs/v4/ops.h"
#include "nfs/v4/request.h"

namespace nfsrdmad::nfs::v4 {

OpResult op_destroy_session(Compound& c, xdr::Decoder& args, xdr::Encoder& res) {
    Request& rq = *c.rq;
    x4::DESTROY_SESSION4args a;
    if (!rq.decode(args, a)) return OpResult::bad_xdr();
    // The COMPOUND's own slot, when its SEQUENCE named this session, is not "another
    // request in progress" (§18.37.3).
    std::optional<uint32_t> own;
    if (rq.session && rq.session->id() == a.dsa_sessionid) {
        // §18.37.3: after a SEQUENCE naming the same session, DESTROY_SESSION "MUST be the
        // final operation in the COMPOUND request" (NOT_ONLY_OP, as the Linux server answers).
        if (c.op_index + 1 != c.op_count) {
            encode_status_only(res, x4::NFS4ERR_NOT_ONLY_OP);
            return {x4::NFS4ERR_NOT_ONLY_OP};
        }
        own = rq.slot;
    }
    // Whose session it was: asked before it goes.
    auto client = rq.svc.clients.client_of(a.dsa_sessionid);
    x4::nfsstat4 st =
        rq.svc.clients.destroy_session(a.dsa_sessionid, rq.conn(), rq.principal(), own);
    if (st == x4::NFS4_OK && client) rq.svc.callbacks.session_destroyed(*client, a.dsa_sessionid);
    encode_status_only(res, st);
    return {st};
}

OpResult op_destroy_clientid(Compound& c, xdr::Decoder& args, xdr::Encoder& res) {
    Request& rq = *c.rq;
    x4::DESTROY_CLIENTID4args a;
    if (!rq.decode(args, a)) return OpResult::bad_xdr();
    auto owner = rq.svc.clients.ownerid(a.dca_clientid);
    x4::nfsstat4 st = rq.svc.clients.destroy_clientid(a.dca_clientid, rq.principal());
    // A delegation of a file removed on the server cannot be returned: the GETATTR the
    // Linux client asks before DELEGRETURN is NFS4ERR_STALE. It ends with its file, and so
    // does not keep the client ID busy (§18.50.3); the client would ask again once a second,
    // ten times, at umount. Asked again whatever it ended: the file watch or the sweep
    // may have been ending one meanwhile (forget_removed_delegations waits for that).
    if (st == x4::NFS4ERR_CLIENTID_BUSY) {
        rq.svc.forget_removed_delegations(a.dca_clientid);
        st = rq.svc.clients.destroy_clientid(a.dca_clientid, rq.principal());
    }
    if (st == x4::NFS4_OK) {
        rq.svc.forget_client(a.dca_clientid);
        if (owner) rq.svc.recovery.destroyed(*owner);
    }
    encode_status_only(res, st);
    return {st};
}

}  // namespace nfsrdmad::nfs::v4
