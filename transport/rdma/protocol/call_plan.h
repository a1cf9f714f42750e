// From a validated header to what the verbs layer must do before the RPC layer can
// run the call: which remote segments to RDMA-Read, into which buffer, at which
// offset; and where the RPC message and its out-of-line payload then are.
//
//   RDMA_MSG with a read chunk (an NFS WRITE):
//
//     receive buffer:  [ transport header | RPC call up to P ]   (inline)
//     payload buffer:  [ chunk segment 1 | segment 2 | ... ]     (RDMA Read)
//     the RPC layer decodes the inline call; the opaque whose data starts at
//     stream position P decodes to the payload buffer (xdr::ReadChunk).
//
//   RDMA_NOMSG (a long call, RFC 8166 §3.5.3):
//
//     message buffer:  [ position-zero chunk: the whole RPC call ]  (RDMA Read)
//     payload buffer:  [ a second chunk at position P, if any ]     (RDMA Read)
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
    size_t length = 0;        // bytes of local buffer the pulls fill
    std::vector<Pull> pulls;  // laid end to end from offset 0
};

struct CallPlan {
    // Where the RPC call message is: inline in the receive buffer at
    // [message_offset, message_offset + message_length), or, when `message_pulls` is
    // set, pulled into a buffer of its own.
    size_t message_offset = 0;
    size_t message_length = 0;
    std::optional<PullSet> message_pulls;
    // The one DDP item (WRITE data, SYMLINK path): its XDR position in the call and
    // the pulls that bring it into a payload buffer.
    std::optional<uint32_t> payload_position;
    std::optional<PullSet> payload_pulls;

    size_t read_bytes() const;  // everything to RDMA-Read
};

CallPlan plan_call(const TransportHeader& h, size_t received);

}  // namespace nfsrdmad::rdma
