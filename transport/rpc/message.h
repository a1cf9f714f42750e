// ONC RPC v2 message headers (RFC 5531 §9): decoding a call, encoding replies.
#pragma once

#include <cstdint>
#include <span>
#include <type_traits>
#include <vector>

#include "transport/rpc/auth/flavor.h"
#include "transport/rpc/call.h"
#include "transport/rpc/program.h"
#include "xdr/runtime/xdr.h"

namespace nfsrdmad::rpc {

inline constexpr uint32_t kRpcVersion = 2;

struct DecodedCall {
    enum Status {
        Ok,
        NotACall,     // a REPLY or garbage message type: dropped
        Undecodable,  // too short to carry a call header: dropped (no xid to answer)
        RpcMismatch,  // rpcvers != 2: MSG_DENIED / RPC_MISMATCH
        BadCred,      // malformed credential or verifier: MSG_DENIED / AUTH_BADCRED
    } status = Ok;
    uint32_t auth_stat = 0;
    // The numbers of CallHeader; its credential is the auth stage's. Plain values and spans
    // into the message only, so a transport keeps a decoded call for its worker cheaply
    // (Dispatcher::dispatch_nowait's `left`).
    struct Numbers {
        uint32_t xid = 0, prog = 0, vers = 0, proc = 0;
    } header;
    RawAuth auth;            // for the auth stage (auth/flavor.h)
    size_t args_offset = 0;  // where the procedure's arguments start
};
static_assert(std::is_trivially_copyable_v<DecodedCall>);

DecodedCall decode_call(std::span<const uint8_t> msg);

// Reply headers. Each appends a complete header to `out`; results follow for SUCCESS.
// Accepted replies carry the verifier the call's flavor gives (AUTH_NONE by default).
void encode_accepted(std::vector<uint8_t>& out, uint32_t xid, uint32_t accept_stat,
                     const OpaqueAuth& verf = {});
void encode_prog_mismatch(std::vector<uint8_t>& out, uint32_t xid, uint32_t low, uint32_t high,
                          const OpaqueAuth& verf = {});
void encode_rpc_mismatch(std::vector<uint8_t>& out, uint32_t xid);
void encode_auth_error(std::vector<uint8_t>& out, uint32_t xid, uint32_t auth_stat);

}  // namespace nfsrdmad::rpc
