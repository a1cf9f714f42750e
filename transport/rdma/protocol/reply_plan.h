// From an RPC reply to what the verbs layer sends (RFC 8166 §3.5, RFC 8267 §4):
//
//   payloads + Write list offered  ->  payload k RDMA-Written into write chunk k (stream
//                                      order, RFC 8166 §4.3.2), without its XDR pad; the
//                                      inline stream skips it. Payloads beyond the last
//                                      write chunk stay in the stream; write chunks
//                                      beyond the last payload return with length 0
//   reply fits the peer's inline threshold  ->  RDMA_MSG: header + reply in one Send
//   otherwise, Reply chunk offered and big enough  ->  the reply RDMA-Written into the
//                                      Reply chunk, RDMA_NOMSG: header only in the Send
//   otherwise  ->  RDMA_ERROR / ERR_CHUNK
//
// Local data is named by spans; the verbs layer sends spans that lie in registered
// memory as they are and stages the others (RPC headers and attributes, never file data).
#pragma once

#include <cstdint>
#include <optional>
#include <span>
#include <string>
#include <vector>

#include "transport/rdma/protocol/chunks.h"
#include "transport/rdma/protocol/header.h"
#include "xdr/runtime/xdr.h"

namespace nfsrdmad::rdma {

using Bytes = std::span<const uint8_t>;

// One RDMA Write: the local pieces, gathered, into one remote segment (or a part of one).
struct Push {
    Segment remote;  // remote.length == total of `local`
    std::vector<Bytes> local;
};

struct ReplyPlan {
    MsgType type = MsgType::Msg;  // Msg, NoMsg or Error
    std::vector<uint8_t> header;  // transport header, first bytes of the Send
    std::vector<Bytes> send;      // after the header in the Send (RDMA_MSG only)
    std::vector<Push> writes;     // before the Send, in order
    uint64_t write_chunks = 0;    // write chunks that carry payload bytes
    uint64_t write_chunk_bytes = 0;
    uint64_t reply_chunk_bytes = 0;
    std::optional<uint32_t> invalidate;  // rkey for Send With Invalidate
    std::string error;                   // why ERR_CHUNK
};

struct ReplyInputs {
    const TransportHeader* call = nullptr;
    uint32_t credits = 0;
    Bytes rpc_reply;                                // inline bytes of the RPC reply
    std::span<const xdr::ExternalSegment> payloads;  // stream order; offsets into rpc_reply
    size_t inline_threshold = 1024;                 // the peer's receive size (RFC 8797)
    bool remote_invalidate = false;                 // the peer accepts Send With Invalidate
    // Scatter/gather entries one work request may carry (the QP's max_send_sge): no Push
    // gathers more local pieces than this; a longer run into one segment becomes several
    // Writes to consecutive remote ranges.
    size_t max_sge = 3;
};

ReplyPlan plan_reply(const ReplyInputs& in);

// Scatters `pieces` over `chunk`'s segments in order, at most `max_local` pieces per Push.
// Returns false if they do not fit.
bool scatter(const std::vector<Bytes>& pieces, const WriteChunk& chunk, std::vector<Push>& out,
             std::vector<uint32_t>& lengths, size_t max_local = 3);

// Joins scatter/gather entries that continue one another in one registration (the same
// lkey, the next address): staged pieces copied one after the other into one buffer
// become one entry. Works on ibv_sge and on anything with addr, length and lkey.
template <class Sge>
void merge_adjacent(std::vector<Sge>& sges) {
    size_t out = 0;
    for (size_t i = 0; i < sges.size(); ++i) {
        if (sges[i].length == 0) continue;
        if (out > 0 && sges[out - 1].lkey == sges[i].lkey &&
            sges[out - 1].addr + sges[out - 1].length == sges[i].addr) {
            sges[out - 1].length += sges[i].length;
            continue;
        }
        sges[out++] = sges[i];
    }
    sges.resize(out);
}

}  // namespace nfsrdmad::rdma
