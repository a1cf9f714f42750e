// The RPC-over-RDMA version 1 transport header (RFC 8166 §4): parsing received
// headers with every check made before anything acts on them, and encoding ours.
#pragma once

#include <cstdint>
#include <span>
#include <string>
#include <variant>
#include <vector>

#include "transport/rdma/protocol/chunks.h"

namespace nfsrdmad::rdma {

inline constexpr uint32_t kVersion = 1;
inline constexpr size_t kMinHeader = 28;  // xid vers credit proc + three empty lists

// Why a received message is refused, and how (RFC 8166 §4.5).
struct HeaderError {
    enum Answer {
        ErrVers,   // RDMA_ERROR / ERR_VERS: not version 1
        ErrChunk,  // RDMA_ERROR / ERR_CHUNK: a header or chunk list we cannot honour
        Ignore,    // nothing to answer: too short to carry an XID, RDMA_DONE, a peer's RDMA_ERROR
    } answer = ErrChunk;
    uint32_t xid = 0;
    std::string why;
};

using ParseResult = std::variant<TransportHeader, HeaderError>;

// Decodes and validates one received message: list termination, segment counts,
// positions (XDR-aligned, ascending, inside the message), lengths and totals against
// `limits`, and the header's length against the bytes received.
ParseResult parse_header(std::span<const uint8_t> msg, const Limits& limits);

// RFC 8166 §4.1.1: the transport header's XID is the RPC message's. parse_header checks an
// RDMA_MSG's inline message; an RDMA_NOMSG call's message is checked with this once it has
// been pulled (a mismatch is ERR_CHUNK).
bool xid_matches(std::span<const uint8_t> rpc_message, uint32_t xid);

// What a reply's header says about each chunk the call offered: for the Write list,
// how many bytes went into each segment (same segment count as offered, unused
// segments 0: RFC 8166 §4.5, the seeds' "write list error cases"); for the Reply
// chunk, the same, or absent.
struct ReplyChunks {
    std::vector<std::vector<uint32_t>> write_lengths;  // per offered write chunk, per segment
    std::vector<uint32_t> reply_lengths;               // empty: no Reply chunk in the header
};

// Encodes an RDMA_MSG or RDMA_NOMSG reply header. `call` supplies the segments' handles
// and offsets, `used` how much of each was written.
std::vector<uint8_t> encode_reply_header(const TransportHeader& call, uint32_t credits,
                                         MsgType type, const ReplyChunks& used);

// RDMA_ERROR replies (RFC 8166 §4.5): ERR_VERS carries the range we support (1..1).
std::vector<uint8_t> encode_error(uint32_t xid, uint32_t credits, HeaderError::Answer err);

// Reverse-direction RPC (RFC 8167, the NFSv4.1 backchannel), inline only (§5.1: no
// chunks in either direction). Our calls carry this header: the RPC call's xid, version 1,
// `credits` (§4.2: in a reverse-direction call, the credits asked for reverse calls), RDMA_MSG
// and three empty chunk lists; the RPC call message follows.
std::vector<uint8_t> encode_reverse_call_header(uint32_t xid, uint32_t credits);
// §4.1: a received message is a reverse-direction reply when it is RDMA_MSG with no chunks
// and the RPC message it carries is a REPLY (msg_type 1). Its RPC message (from the xid
// on), else an empty span.
std::span<const uint8_t> reverse_reply(std::span<const uint8_t> msg);
// The xid of a version 1 RDMA_ERROR (RFC 8166 §4.5), which may answer a reverse call of
// ours; 0 otherwise.
uint32_t rdma_error_xid(std::span<const uint8_t> msg);
// §4.2: the reverse-direction credits a reverse reply grants (its rdma_credit): how many
// reverse calls may be outstanding at once; at least 1, at most `most`.
uint32_t reverse_grant(std::span<const uint8_t> msg, uint32_t most);

}  // namespace nfsrdmad::rdma
