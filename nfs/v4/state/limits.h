// Bounds and server parameters of the NFSv4.1 state (every per-client resource has a bound),
// and the status each bound returns when it is hit.
#pragma once

#include <chrono>
#include <cstddef>
#include <cstdint>

#include "nfs/v4/state/types.h"

namespace nfsrdmad::nfs::v4::state {

// The fore channel limits the server offers, CREATE_SESSION clamps the client's attributes to
// them (RFC 8881 §18.36.3: the server MAY decrease each value, MUST NOT increase it). The caller
// fills the sizes from the transport: for RPC-over-RDMA the negotiated inline sizes.
struct ChannelLimits {
    uint32_t max_request_size = 1024 * 1024 + 4096;
    uint32_t max_response_size = 1024 * 1024 + 4096;
    uint32_t max_response_size_cached = 4096;
    uint32_t max_operations = 16;
    uint32_t max_slots = 64;
    // Below these a channel could not carry even a SEQUENCE: NFS4ERR_TOOSMALL (§18.36.3).
    uint32_t min_request_size = 256;
    uint32_t min_response_size = 256;
    uint32_t max_rdma_ird = 0;  // 0: no RDMA reads offered, ca_rdma_ird comes back empty
    bool backchannel = false;   // CREATE_SESSION4_FLAG_CONN_BACK_CHAN is granted only if true
};

struct Limits {
    std::chrono::seconds lease{90};
    size_t max_clients = 4096;  // confirmed + unconfirmed records, server-wide
    // A courtesy client (lease expired, state kept until it conflicts, RFC 8881 §8.4.3) is
    // reaped outright this many lease periods after its lease ended.
    uint32_t courtesy_leases = 4;
    size_t max_sessions_per_client = 8;
    size_t max_connections_per_session = 16;
    size_t max_stateids = 1 << 20;  // server-wide
    size_t max_stateids_per_client = 16384;
    ChannelLimits fore;
    // SP4_MACH_CRED: the operations the server agrees to enforce / allow with the machine
    // credential (RFC 8881 §18.35.3), as data. The reply is the client's request ∩ these, except
    // that requested operations from {EXCHANGE_ID, CREATE_SESSION, DELEGPURGE, DESTROY_SESSION,
    // BIND_CONN_TO_SESSION, DESTROY_CLIENTID} are always enforced (the RFC's MUST).
    OpSet mach_enforceable;  // empty: only the mandatory six
    OpSet mach_allowable = default_mach_allowable();

    static OpSet default_mach_allowable() {
        OpSet s;
        for (uint32_t op : {x4::OP_CLOSE, x4::OP_LOCKU, x4::OP_DELEGRETURN, x4::OP_OPEN_DOWNGRADE,
                            x4::OP_FREE_STATEID, x4::OP_TEST_STATEID})
            op_add(s, op);
        return s;
    }
};

// What a full table answers. RFC 8881 §15.2 lists NFS4ERR_SERVERFAULT, not the NFSv4.0
// NFS4ERR_RESOURCE, among EXCHANGE_ID's and OPEN's errors, so a full client or stateid table is
// SERVERFAULT. CREATE_SESSION has its own: "if there is not enough space, the server returns
// NFS4ERR_NOSPC" (§18.36.4, phase 4).
inline constexpr Status kTooManyClients = x4::NFS4ERR_SERVERFAULT;
inline constexpr Status kTooManyStateids = x4::NFS4ERR_SERVERFAULT;
inline constexpr Status kTooManySessions = x4::NFS4ERR_NOSPC;
inline constexpr Status kTooManyConnections = x4::NFS4ERR_SERVERFAULT;

}  // namespace nfsrdmad::nfs::v4::state
