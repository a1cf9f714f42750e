// Chunks as the rest of the RDMA transport sees them, after the header codec has
// decoded and validated them (RFC 8166 §3.4: segments, read chunks, write chunks).
#pragma once

#include <cstddef>
#include <cstdint>
#include <optional>
#include <vector>

namespace nfsrdmad::rdma {

// One registered region of the peer's memory (RFC 8166 §3.4.3: handle, length, offset).
struct Segment {
    uint32_t handle = 0;  // the peer's rkey
    uint32_t length = 0;
    uint64_t offset = 0;  // the peer's virtual address
    bool operator==(const Segment&) const = default;
};

// A read chunk: one or more segments that hold one XDR item starting at `position` in
// the RPC call's XDR stream (RFC 8166 §3.4.5). Position 0 carries a whole call.
struct ReadChunk {
    uint32_t position = 0;
    std::vector<Segment> segments;
    uint64_t length() const;
};

// A write chunk, or the reply chunk (RFC 8166 §3.4.6, §3.4.7).
struct WriteChunk {
    std::vector<Segment> segments;
    uint64_t capacity() const;
};

// What we accept from a peer. Anything beyond is answered with ERR_CHUNK.
struct Limits {
    size_t max_segments = 64;    // per chunk
    size_t max_read_chunks = 8;  // a position-zero chunk plus DDP items (RFC 8166 §3.4.5)
    size_t max_write_chunks = 4;
    uint64_t max_transfer = 1u << 20;                 // one DDP item (rtmax / wtmax)
    uint64_t max_call_payload = 1u << 20;             // all DDP read chunks of one call
    uint64_t max_message = (1u << 20) + (64u << 10);  // a whole reply in a reply chunk
    uint64_t max_call = (1u << 20) + (64u << 10);     // a whole call in a position-zero chunk
};

// `l` narrowed to what one receiving buffer of `buffer_bytes` can hold: a long call
// (RFC 8166 §3.5.3) and a call's DDP items are each RDMA-Read into one payload buffer,
// so chunks larger than that buffer are refused with ERR_CHUNK when they arrive rather
// than waiting forever for a buffer that cannot exist.
Limits fit_to_buffer(Limits l, uint64_t buffer_bytes);

enum class MsgType : uint32_t { Msg = 0, NoMsg = 1, MsgP = 2, Done = 3, Error = 4 };

// A received transport header that passed validation.
struct TransportHeader {
    uint32_t xid = 0;
    uint32_t credits = 0;  // credits the peer asks for
    MsgType type = MsgType::Msg;
    std::vector<ReadChunk> reads;  // in stream order, positions ascending
    std::vector<WriteChunk> writes;
    std::optional<WriteChunk> reply;
    size_t length = 0;  // bytes of transport header; an inline RPC message follows
};

}  // namespace nfsrdmad::rdma
