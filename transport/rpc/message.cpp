#include "transport/rpc/message.h"

#include "xdr/rpc_prot.h"

namespace nfsrdmad::rpc {

namespace x = xdr::rpc;

DecodedCall decode_call(std::span<const uint8_t> msg) {
    DecodedCall out;
    xdr::Decoder d(msg);
    uint32_t xid = d.get_u32();
    uint32_t mtype = d.get_u32();
    if (!d.ok()) {
        out.status = DecodedCall::Undecodable;
        return out;
    }
    out.header.xid = xid;
    if (mtype != x::CALL) {
        out.status = DecodedCall::NotACall;
        return out;
    }
    x::call_body body;
    // RFC 5531 §9: check the version before trying to make sense of the rest.
    uint32_t rpcvers = d.get_u32();
    if (d.ok() && rpcvers != kRpcVersion) {
        out.status = DecodedCall::RpcMismatch;
        return out;
    }
    body.rpcvers = rpcvers;
    body.prog = d.get_u32();
    body.vers = d.get_u32();
    body.proc = d.get_u32();
    // A credential or verifier whose length runs past its limit or past the message
    // is a bad credential (AUTH_BADCRED), not undecodable: the xid is known.
    if (!d.ok()) {
        out.status = DecodedCall::Undecodable;
        return out;
    }
    bool cred_ok = x::xdr_decode(d, body.cred);
    size_t header_end = d.offset();
    if (!cred_ok || !x::xdr_decode(d, body.verf)) {
        out.status = DecodedCall::BadCred;
        out.auth_stat = x::AUTH_BADCRED;
        return out;
    }
    out.header.prog = body.prog;
    out.header.vers = body.vers;
    out.header.proc = body.proc;
    out.auth.header = msg.first(header_end);
    out.auth.cred_flavor = body.cred.flavor;
    out.auth.cred = body.cred.body;
    out.auth.verf_flavor = body.verf.flavor;
    out.auth.verf = body.verf.body;
    out.auth.proc = body.proc;
    out.args_offset = d.offset();
    return out;
}

namespace {

void encode_header(std::vector<uint8_t>& out, uint32_t xid, const x::reply_body& body) {
    xdr::Encoder e(out);
    x::rpc_msg msg;
    msg.xid = xid;
    msg.body.set_mtype(x::REPLY).rbody() = body;
    x::xdr_encode(e, msg);
}

x::reply_body accepted(uint32_t stat, const OpaqueAuth& verf) {
    x::reply_body b;
    auto& a = b.set_stat(x::MSG_ACCEPTED).areply();
    a.verf.flavor = verf.flavor;
    a.verf.body = verf.body;
    a.reply_data.set_stat(static_cast<x::accept_stat>(stat));
    return b;
}

x::reply_body denied(uint32_t stat) {
    x::reply_body b;
    b.set_stat(x::MSG_DENIED).rreply().set_stat(static_cast<x::reject_stat>(stat));
    return b;
}

}  // namespace

void encode_accepted(std::vector<uint8_t>& out, uint32_t xid, uint32_t accept_stat,
                     const OpaqueAuth& verf) {
    if (accept_stat == x::PROG_MISMATCH) {  // the one arm with more than the status
        encode_header(out, xid, accepted(accept_stat, verf));
        return;
    }
    // Every reply takes this path: its words written straight, without building the
    // rpc_msg union (RFC 5531 §9: xid, REPLY, MSG_ACCEPTED, verf, accept_stat).
    out.reserve(out.size() + 256);  // the results follow
    xdr::Encoder e(out);
    e.put_u32(xid);
    e.put_u32(x::REPLY);
    e.put_u32(x::MSG_ACCEPTED);
    e.put_u32(verf.flavor);
    e.put_opaque(verf.body);
    e.put_u32(accept_stat);
}

void encode_prog_mismatch(std::vector<uint8_t>& out, uint32_t xid, uint32_t low, uint32_t high,
                          const OpaqueAuth& verf) {
    auto b = accepted(x::PROG_MISMATCH, verf);
    b.areply().reply_data.mismatch_info() = {low, high};
    encode_header(out, xid, b);
}

void encode_rpc_mismatch(std::vector<uint8_t>& out, uint32_t xid) {
    auto b = denied(x::RPC_MISMATCH);
    b.rreply().mismatch_info() = {kRpcVersion, kRpcVersion};
    encode_header(out, xid, b);
}

void encode_auth_error(std::vector<uint8_t>& out, uint32_t xid, uint32_t auth_stat) {
    auto b = denied(x::AUTH_ERROR);
    b.rreply().auth_stat() = static_cast<x::auth_stat>(auth_stat);
    encode_header(out, xid, b);
}

}  // namespace nfsrdmad::rpc
