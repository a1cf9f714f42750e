// CREATE_SESSION (RFC 8881 §18.36): confirms the client ID and makes a session. The
// rules (the one-slot reply cache of §18.36.4, clamping channel attributes) are the
// client table's (state/create_session.cpp).
//
// The backchannel (RFC 8881 §2.10.3.1): CONN_BACK_CHAN is granted on TCP and RDMA (RFC
// 8167) connections when the daemon runs one (Options::back_channels); the connection is
// then bound for both directions and probed with CB_NULL unless the client's callback
// path is up already (callback/path.h).
#include "nfs/v4/ops.h"
#include "nfs/v4/request.h"

namespace nfsrdmad::nfs::v4 {

namespace {

state::ChannelAttrs from_wire(const x4::channel_attrs4& c) {
    state::ChannelAttrs a;
    a.header_pad_size = c.ca_headerpadsize;
    a.max_request_size = c.ca_maxrequestsize;
    a.max_response_size = c.ca_maxresponsesize;
    a.max_response_size_cached = c.ca_maxresponsesize_cached;
    a.max_operations = c.ca_maxoperations;
    a.max_requests = c.ca_maxrequests;
    a.rdma_ird = c.ca_rdma_ird;
    return a;
}

x4::channel_attrs4 to_wire(const state::ChannelAttrs& a) {
    x4::channel_attrs4 c;
    c.ca_headerpadsize = a.header_pad_size;
    c.ca_maxrequestsize = a.max_request_size;
    c.ca_maxresponsesize = a.max_response_size;
    c.ca_maxresponsesize_cached = a.max_response_size_cached;
    c.ca_maxoperations = a.max_operations;
    c.ca_maxrequests = a.max_requests;
    c.ca_rdma_ird = a.rdma_ird;
    return c;
}

}  // namespace

OpResult op_create_session(Compound& c, xdr::Decoder& args, xdr::Encoder& res) {
    Request& rq = *c.rq;
    x4::CREATE_SESSION4args a;
    if (!rq.decode(args, a)) return OpResult::bad_xdr();

    state::CreateSessionArgs ca;
    ca.clientid = a.csa_clientid;
    ca.sequence = a.csa_sequence;
    ca.flags = a.csa_flags;
    const rpc::Peer* peer = rq.ctx.header.peer;
    if (!peer) ca.flags &= ~x4::CREATE_SESSION4_FLAG_CONN_BACK_CHAN;
    ca.fore = from_wire(a.csa_fore_chan_attrs);
    ca.back = from_wire(a.csa_back_chan_attrs);
    ca.cb_program = a.csa_cb_program;
    ca.cb_sec_parms = std::move(a.csa_sec_parms);
    ca.principal = rq.principal();
    ca.conn = rq.conn();
    state::CreateSessionResult r = rq.svc.clients.create_session(ca);
    // The confirmed previous incarnation this one replaced (§18.35.4 case 5): its state goes.
    if (r.purged) rq.svc.forget_client(*r.purged);

    // §8.4.2.1: a confirmed client is on stable storage before it hears so, so that it
    // may reclaim its state after a restart.
    if (r.status == x4::NFS4_OK)
        if (auto owner = rq.svc.clients.ownerid(a.csa_clientid))
            rq.svc.recovery.confirmed(*owner);
    // A replay's connection was never bound: the original's probe stands.
    if (r.status == x4::NFS4_OK && !r.replay &&
        (r.flags & x4::CREATE_SESSION4_FLAG_CONN_BACK_CHAN))
        if (auto cb = rq.svc.clients.callback_of(r.sessionid))
            rq.svc.callbacks.bound(a.csa_clientid, ca.conn, *cb);

    x4::CREATE_SESSION4res out(r.status);
    if (r.status == x4::NFS4_OK) {
        auto& ok = out.csr_resok4();
        ok.csr_sessionid = r.sessionid;
        ok.csr_sequence = r.sequence;
        ok.csr_flags = r.flags;
        ok.csr_fore_chan_attrs = to_wire(r.fore);
        ok.csr_back_chan_attrs = to_wire(r.back);
    }
    x4::xdr_encode(res, out);
    return {r.status};
}

}  // namespace nfsrdmad::nfs::v4
