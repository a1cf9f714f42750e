// From a validated header to what the verbs layer must do before the RPC layer can
// run the call: which remote segments to RDMA-Read, into which buffer, at which
// offset; and where the RPC message and its out-of-line payload then are.
//
//   RDMA_MSG with read chunks (an NFS WRITE; several in an NFSv4 COMPOUND):
//
//     receive buffer:  [ transport header | RPC call, chunks' data left out ]  (inline)
//     payload buffer:  [ chunk 1: seg 1 | seg 2 ..][pad][ chunk 2 ... ]       (RDMA Read)
//                      ^ offset 0                      ^ kItemAlign-aligned
//     the RPC layer decodes the inline call; the opaque whose data starts at
//     stream position P_k decodes to item k in the payload buffer (xdr::ReadChunk).
//
//   RDMA_NOMSG (a long call, RFC 8166 §3.5.3):
//
//     message buffer:  [ position-zero chunk: the whole RPC call ]  (RDMA Read)
//     payload buffer:  [ the other chunks, laid out as above ]      (RDMA Read)
//
// All DDP items of a call share one payload buffer: the verbs layer reserves one per
// call as before, and parse_header bounded their total (Limits::max_call_payload).
#pragma once

#include <cstddef>
#include <optional>
#include <vector>

#include "transport/rdma/protocol/chunks.h"

namespace nfsrdmad::rdma {

// One RDMA Read: `remote` into the local buffer at `offset`.
struct Pull {
    Segment remote;
    size_t offset = 0;
    bool operator==(const Pull&) const = default;
};

struct PullSet {
    size_t length = 0;        // bytes of local buffer the pulls span
    std::vector<Pull> pulls;  // in stream order, offsets ascending
    size_t bytes() const;     // to RDMA-Read (`length` less the alignment gaps)
};

// One DDP item (a read chunk other than position zero): its XDR position in the call
// and where its bytes land in the payload buffer.
struct DdpItem {
    uint32_t position = 0;
    size_t offset = 0;
    size_t length = 0;
    bool operator==(const DdpItem&) const = default;
};

// Each DDP item starts at a multiple of this in the payload buffer (a cache line).
inline constexpr size_t kItemAlign = 64;

struct CallPlan {
    // Where the RPC call message is: inline in the receive buffer at
    // [message_offset, message_offset + message_length), or, when `message_pulls` is
    // set, pulled into a buffer of its own.
    size_t message_offset = 0;
    size_t message_length = 0;
    std::optional<PullSet> message_pulls;
    // The DDP items (WRITE data, SYMLINK path), in stream order, and the pulls that
    // bring them all into one payload buffer; unset when the call has none.
    std::vector<DdpItem> items;
    std::optional<PullSet> payload_pulls;

    size_t read_bytes() const;  // everything to RDMA-Read
};

// `h` passed parse_header (positions ascending, totals within the limits).
CallPlan plan_call(const TransportHeader& h, size_t received);

}  // namespace nfsrdmad::rdma
