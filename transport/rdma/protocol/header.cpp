#include "transport/rdma/protocol/header.h"

#include <algorithm>

#include "xdr/rpcrdma_prot.h"

namespace nfsrdmad::rdma {

namespace x = xdr::rpcrdma;

namespace {

HeaderError chunk_error(uint32_t xid, std::string why) {
    return {HeaderError::ErrChunk, xid, std::move(why)};
}

Segment to_segment(const x::rpcrdma1_segment& s) {
    return {s.rdma_handle, s.rdma_length, s.rdma_offset};
}

// Checks one chunk's segments against the limits; empty string when fine.
std::string check_segments(const std::vector<Segment>& segs, uint64_t max_bytes,
                           const Limits& limits, const char* what) {
    if (segs.empty()) return std::string(what) + " has no segments";
    if (segs.size() > limits.max_segments)
        return std::string(what) + " has " + std::to_string(segs.size()) + " segments (limit " +
               std::to_string(limits.max_segments) + ")";
    uint64_t total = 0;
    for (const auto& s : segs) total += s.length;
    if (total > max_bytes)
        return std::string(what) + " of " + std::to_string(total) + " bytes exceeds " +
               std::to_string(max_bytes);
    return {};
}

}  // namespace

bool xid_matches(std::span<const uint8_t> rpc_message, uint32_t xid) {
    xdr::Decoder rpc(rpc_message);
    const uint32_t first = rpc.get_u32();
    return rpc.ok() && first == xid;
}

ParseResult parse_header(std::span<const uint8_t> msg, const Limits& limits) {
    xdr::Decoder d(msg);
    const uint32_t xid = d.get_u32();
    const uint32_t vers = d.get_u32();
    const uint32_t credits = d.get_u32();
    if (!d.ok()) return HeaderError{HeaderError::Ignore, 0, "message shorter than a header"};
    // RFC 8166 §4.5: check the version before interpreting anything else.
    if (vers != kVersion)
        return HeaderError{HeaderError::ErrVers, xid, "version " + std::to_string(vers)};

    // RDMA_DONE and the peer's RDMA_ERROR are never answered, whatever follows the
    // procedure (a body cut short, an unknown error code): an error for an error could
    // echo between two peers. Looked at before the body is decoded, as the Linux server
    // drops them.
    {
        xdr::Decoder peek = d;
        const uint32_t proc = peek.get_u32();
        if (peek.ok() && proc == static_cast<uint32_t>(MsgType::Done))
            return HeaderError{HeaderError::Ignore, xid, "RDMA_DONE"};
        if (peek.ok() && proc == static_cast<uint32_t>(MsgType::Error))
            return HeaderError{HeaderError::Ignore, xid, "RDMA_ERROR from the peer"};
    }
    x::rpcrdma1_body body;
    if (!x::xdr_decode(d, body)) {
        // Truncated lists, a list flag other than 0/1, an unknown procedure.
        return chunk_error(xid, "undecodable header (truncated or malformed chunk lists)");
    }
    TransportHeader h;
    h.xid = xid;
    h.credits = credits;
    h.type = static_cast<MsgType>(body.rdma_proc());
    const x::rpcrdma1_chunks* chunks = nullptr;
    switch (h.type) {
        case MsgType::Msg:
        case MsgType::NoMsg:
            chunks = &body.rdma_chunks();
            break;
        case MsgType::MsgP:  // RFC 5666's padded form: its chunks, processed as RDMA_MSG
            chunks = &body.rdma_padded().rdma_chunks;
            h.type = MsgType::Msg;
            break;
        case MsgType::Done:
            return HeaderError{HeaderError::Ignore, xid, "RDMA_DONE"};
        case MsgType::Error:
            return HeaderError{HeaderError::Ignore, xid, "RDMA_ERROR from the peer"};
    }
    h.length = d.offset();
    const size_t inline_bytes = msg.size() - h.length;

    // Read list: segments in stream order; a chunk is a run of equal positions.
    for (const auto& e : chunks->rdma_reads) {
        const auto& rs = e.rdma_entry;
        if (rs.rdma_position % 4 != 0)
            return chunk_error(xid, "read position " + std::to_string(rs.rdma_position) +
                                        " is not XDR-aligned");
        if (!h.reads.empty() && rs.rdma_position < h.reads.back().position)
            return chunk_error(xid, "read positions are not in ascending order");
        if (h.reads.empty() || h.reads.back().position != rs.rdma_position) {
            if (h.reads.size() == limits.max_read_chunks)
                return chunk_error(xid, "more than " + std::to_string(limits.max_read_chunks) +
                                            " read chunks");
            h.reads.push_back({rs.rdma_position, {}});
        }
        h.reads.back().segments.push_back(to_segment(rs.rdma_target));
    }
    uint64_t ddp_bytes = 0;  // all DDP items of the call together
    for (const auto& c : h.reads) {
        const bool whole_call = c.position == 0;
        auto err = check_segments(c.segments, whole_call ? limits.max_call : limits.max_transfer,
                                  limits, whole_call ? "position-zero read chunk" : "read chunk");
        if (!err.empty()) return chunk_error(xid, err);
        if (!whole_call) ddp_bytes += c.length();
    }
    if (ddp_bytes > limits.max_call_payload)
        return chunk_error(xid, "read chunks of " + std::to_string(ddp_bytes) +
                                    " bytes in all exceed " +
                                    std::to_string(limits.max_call_payload));
    // The Payload stream the chunks were taken from: the inline message (RDMA_MSG) or the
    // position-zero chunk (RDMA_NOMSG).
    uint64_t stream = 0;
    size_t first_ddp = 0;
    if (h.type == MsgType::Msg) {
        // The RPC message is inline: chunks sit inside it, never at position zero
        // (the seeds' notes §3.5: a position-zero chunk in RDMA_MSG is ambiguous).
        if (inline_bytes < 4) return chunk_error(xid, "RDMA_MSG without an inline RPC message");
        if (!h.reads.empty() && h.reads.front().position == 0)
            return chunk_error(xid, "position-zero read chunk in RDMA_MSG");
        // The transport header's XID is the RPC message's (RFC 8166 §4.1.1).
        if (!xid_matches(msg.subspan(h.length), xid))
            return chunk_error(xid, "XID differs from the RPC message's");
        stream = inline_bytes;
    } else {
        // RDMA_NOMSG: the call travels in a position-zero read chunk (RFC 8166 §3.5.3).
        // Without one, this is a reply-only message no server expects.
        if (h.reads.empty() || h.reads.front().position != 0)
            return chunk_error(xid, "RDMA_NOMSG call without a position-zero read chunk");
        stream = h.reads.front().length();
        first_ddp = 1;
    }
    // RFC 8166 §3.4.5: a chunk's position is where its data item starts in the XDR stream
    // with every chunk's item in place, so it lies within the stream plus the items
    // before it, and after the end of the item before it (chunks never overlap).
    uint64_t end_of_previous = 0;
    for (size_t i = first_ddp; i < h.reads.size(); ++i) {
        const ReadChunk& c = h.reads[i];
        if (c.position > stream)
            return chunk_error(xid, "read position " + std::to_string(c.position) +
                                        " lies beyond the " + std::to_string(stream) +
                                        "-byte message");
        if (c.position < end_of_previous)
            return chunk_error(
                xid, "read chunk at " + std::to_string(c.position) + " overlaps the one before it");
        const uint64_t item = c.length() + xdr::pad4(c.length());
        stream += item;
        end_of_previous = c.position + item;
    }

    if (chunks->rdma_writes.size() > limits.max_write_chunks)
        return chunk_error(xid, std::to_string(chunks->rdma_writes.size()) +
                                    " write chunks (limit " +
                                    std::to_string(limits.max_write_chunks) + ")");
    for (const auto& w : chunks->rdma_writes) {
        WriteChunk c;
        for (const auto& s : w.rdma_entry.rdma_target) c.segments.push_back(to_segment(s));
        auto err = check_segments(c.segments, limits.max_transfer, limits, "write chunk");
        if (!err.empty()) return chunk_error(xid, err);
        h.writes.push_back(std::move(c));
    }
    if (chunks->rdma_reply) {
        WriteChunk c;
        for (const auto& s : chunks->rdma_reply->rdma_target) c.segments.push_back(to_segment(s));
        auto err = check_segments(c.segments, limits.max_message, limits, "reply chunk");
        if (!err.empty()) return chunk_error(xid, err);
        h.reply = std::move(c);
    }
    return h;
}

namespace {

x::rpcrdma1_write_chunk written(const WriteChunk& offered, const std::vector<uint32_t>& lengths) {
    x::rpcrdma1_write_chunk w;
    for (size_t i = 0; i < offered.segments.size(); ++i) {
        const auto& s = offered.segments[i];
        w.rdma_target.push_back({s.handle, i < lengths.size() ? lengths[i] : 0, s.offset});
    }
    return w;
}

std::vector<uint8_t> encode(const x::rpcrdma1_header& h) {
    std::vector<uint8_t> out;
    xdr::Encoder e(out);
    x::xdr_encode(e, h);
    return out;
}

}  // namespace

std::vector<uint8_t> encode_reply_header(const TransportHeader& call, uint32_t credits,
                                         MsgType type, const ReplyChunks& used) {
    x::rpcrdma1_header h;
    h.rdma_xid = call.xid;
    h.rdma_vers = kVersion;
    h.rdma_credit = credits;
    auto& c = h.rdma_body.set_rdma_proc(static_cast<x::rpcrdma1_proc>(type)).rdma_chunks();
    for (size_t i = 0; i < call.writes.size(); ++i) {
        static const std::vector<uint32_t> none;
        c.rdma_writes.push_back(
            {written(call.writes[i], i < used.write_lengths.size() ? used.write_lengths[i] : none)});
    }
    if (call.reply && !used.reply_lengths.empty()) c.rdma_reply = written(*call.reply, used.reply_lengths);
    return encode(h);
}

std::vector<uint8_t> encode_error(uint32_t xid, uint32_t credits, HeaderError::Answer err) {
    x::rpcrdma1_header h;
    h.rdma_xid = xid;
    h.rdma_vers = kVersion;
    h.rdma_credit = credits;
    auto& e = h.rdma_body.set_rdma_proc(x::RDMA_ERROR).rdma_error();
    if (err == HeaderError::ErrVers)
        e.set_rdma_err(x::RDMA_ERR_VERS).rdma_vrange() = {kVersion, kVersion};
    else
        e.set_rdma_err(x::RDMA_ERR_CHUNK);
    return encode(h);
}

std::vector<uint8_t> encode_reverse_call_header(uint32_t xid, uint32_t credits) {
    x::rpcrdma1_header h;
    h.rdma_xid = xid;
    h.rdma_vers = kVersion;
    h.rdma_credit = credits;
    h.rdma_body.set_rdma_proc(x::RDMA_MSG);  // empty read list, write list, reply chunk
    return encode(h);
}

namespace {
uint32_t word_at(std::span<const uint8_t> msg, size_t i) {
    const uint8_t* p = msg.data() + 4 * i;
    return uint32_t(p[0]) << 24 | uint32_t(p[1]) << 16 | uint32_t(p[2]) << 8 | p[3];
}
}  // namespace

uint32_t rdma_error_xid(std::span<const uint8_t> msg) {
    if (msg.size() < 16 || word_at(msg, 1) != kVersion || word_at(msg, 3) != x::RDMA_ERROR)
        return 0;
    return word_at(msg, 0);
}

uint32_t reverse_grant(std::span<const uint8_t> msg, uint32_t most) {
    if (msg.size() < 12) return 1;
    return std::clamp<uint32_t>(word_at(msg, 2), 1, std::max<uint32_t>(most, 1));
}

std::span<const uint8_t> reverse_reply(std::span<const uint8_t> msg) {
    auto word = [&](size_t i) { return word_at(msg, i); };
    // xid vers credit proc | read list, write list, reply chunk: all absent | xid mtype
    if (msg.size() < kMinHeader + 8) return {};
    if (word(1) != kVersion || word(3) != x::RDMA_MSG) return {};
    if (word(4) != 0 || word(5) != 0 || word(6) != 0) return {};
    if (word(8) != 1) return {};  // RFC 5531 §9: msg_type REPLY
    return msg.subspan(kMinHeader);
}

}  // namespace nfsrdmad::rdma
