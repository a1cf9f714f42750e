#include "transport/rdma/protocol/reply_plan.h"

#include <algorithm>
#include <set>

namespace nfsrdmad::rdma {

namespace {

uint64_t total(const std::vector<Bytes>& pieces) {
    uint64_t n = 0;
    for (auto b : pieces) n += b.size();
    return n;
}

void add(std::vector<Bytes>& v, Bytes b) {
    if (!b.empty()) v.push_back(b);
}

// RFC 8166 §3.4.3 allows Send With Invalidate of one rkey; it is safe when every chunk
// of the call lives under that one rkey (the peer then has nothing else to invalidate).
std::optional<uint32_t> single_handle(const TransportHeader& c) {
    std::set<uint32_t> handles;
    for (const auto& r : c.reads)
        for (const auto& s : r.segments) handles.insert(s.handle);
    for (const auto& w : c.writes)
        for (const auto& s : w.segments) handles.insert(s.handle);
    if (c.reply)
        for (const auto& s : c.reply->segments) handles.insert(s.handle);
    if (handles.size() != 1) return std::nullopt;
    return *handles.begin();
}

}  // namespace

bool scatter(const std::vector<Bytes>& pieces, const WriteChunk& chunk, std::vector<Push>& out,
             std::vector<uint32_t>& lengths, size_t max_local) {
    max_local = std::max<size_t>(max_local, 1);
    lengths.assign(chunk.segments.size(), 0);
    size_t seg = 0;
    for (Bytes piece : pieces) {
        while (!piece.empty()) {
            while (seg < chunk.segments.size() && lengths[seg] == chunk.segments[seg].length) ++seg;
            if (seg == chunk.segments.size()) return false;
            const Segment& s = chunk.segments[seg];
            size_t n = std::min<size_t>(piece.size(), s.length - lengths[seg]);
            // Consecutive pieces into the same segment become one gathered Write, up to
            // the entries a work request may gather; then the next Write goes on.
            if (!out.empty() && out.back().remote.handle == s.handle &&
                out.back().remote.offset + out.back().remote.length == s.offset + lengths[seg] &&
                lengths[seg] != 0 && out.back().local.size() < max_local) {
                out.back().remote.length += n;
                out.back().local.push_back(piece.first(n));
            } else {
                out.push_back({{s.handle, static_cast<uint32_t>(n), s.offset + lengths[seg]},
                               {piece.first(n)}});
            }
            lengths[seg] += n;
            piece = piece.subspan(n);
        }
    }
    return true;
}

ReplyPlan plan_reply(const ReplyInputs& in) {
    const TransportHeader& call = *in.call;
    ReplyPlan plan;
    ReplyChunks used;
    std::vector<Bytes> stream;  // the RPC reply as it travels inline or in the Reply chunk
    const Bytes r = in.rpc_reply;

    // RFC 8166 §4.3.2: each DDP-eligible result (RFC 8267 §4: READ, READLINK data) goes
    // into the next write chunk, in stream order; its XDR pad is neither written (the
    // seeds' notes §3.7) nor left inline (§3.6). A result with no write chunk left
    // travels in the Payload stream like any other data (inline or in the Reply chunk),
    // gathered from where it is, not copied. A result larger than its write chunk cannot
    // be conveyed: ERR_CHUNK (RFC 8166 §4.5.3, as for a Reply chunk too small).
    size_t cursor = 0;  // rpc_reply bytes before this are in `stream` already
    for (const auto& p : in.payloads) {
        add(stream, r.subspan(cursor, p.offset - cursor));
        if (used.write_lengths.size() == call.writes.size()) {
            add(stream, p.data);
            cursor = p.offset;  // the pad is in rpc_reply
            continue;
        }
        const WriteChunk& chunk = call.writes[used.write_lengths.size()];
        std::vector<uint32_t> lengths;
        if (!scatter({p.data}, chunk, plan.writes, lengths, in.max_sge)) {
            plan.type = MsgType::Error;
            plan.error = "payload of " + std::to_string(p.data.size()) +
                         " bytes does not fit the " + std::to_string(chunk.capacity()) +
                         "-byte write chunk " + std::to_string(used.write_lengths.size());
            plan.header = encode_error(call.xid, in.credits, HeaderError::ErrChunk);
            plan.writes.clear();
            return plan;
        }
        used.write_lengths.push_back(std::move(lengths));
        if (!p.data.empty()) plan.write_chunks++;
        plan.write_chunk_bytes += p.data.size();
        cursor = p.offset + p.pad;
    }
    add(stream, r.subspan(cursor));

    const uint64_t body = total(stream);
    auto msg_header = encode_reply_header(call, in.credits, MsgType::Msg, used);
    if (msg_header.size() + body <= in.inline_threshold) {
        plan.type = MsgType::Msg;
        plan.header = std::move(msg_header);
        plan.send = std::move(stream);
    } else if (call.reply && body <= call.reply->capacity()) {
        // RFC 8166 §3.5.4: a long reply goes into the Reply chunk; the Send carries
        // only the transport header (RDMA_NOMSG).
        scatter(stream, *call.reply, plan.writes, used.reply_lengths, in.max_sge);
        plan.type = MsgType::NoMsg;
        plan.reply_chunk_bytes = body;
        plan.header = encode_reply_header(call, in.credits, MsgType::NoMsg, used);
    } else {
        plan.type = MsgType::Error;
        plan.error = "a " + std::to_string(body) + "-byte reply exceeds the " +
                     std::to_string(in.inline_threshold) + "-byte inline threshold and " +
                     (call.reply ? "the " + std::to_string(call.reply->capacity()) +
                                       "-byte reply chunk"
                                 : std::string("no reply chunk was offered"));
        plan.header = encode_error(call.xid, in.credits, HeaderError::ErrChunk);
        plan.writes.clear();
        return plan;
    }
    if (in.remote_invalidate) plan.invalidate = single_handle(call);
    return plan;
}

}  // namespace nfsrdmad::rdma
