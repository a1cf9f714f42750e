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
             std::vector<uint32_t>& lengths) {
    lengths.assign(chunk.segments.size(), 0);
    size_t seg = 0;
    for (Bytes piece : pieces) {
        while (!piece.empty()) {
            while (seg < chunk.segments.size() && lengths[seg] == chunk.segments[seg].length) ++seg;
            if (seg == chunk.segments.size()) return false;
            const Segment& s = chunk.segments[seg];
            size_t n = std::min<size_t>(piece.size(), s.length - lengths[seg]);
            // Consecutive pieces into the same segment become one gathered Write.
            if (!out.empty() && out.back().remote.handle == s.handle &&
                out.back().remote.offset + out.back().remote.length == s.offset + lengths[seg] &&
                lengths[seg] != 0) {
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

    if (in.payload && !call.writes.empty()) {
        // RFC 8267 §4: READ / READLINK data goes into the first write chunk. Its XDR pad
        // is neither written (the seeds' notes §3.7) nor left inline (§3.6).
        const auto& p = *in.payload;
        std::vector<uint32_t> lengths;
        if (!scatter({p.data}, call.writes[0], plan.writes, lengths)) {
            plan.type = MsgType::Error;
            plan.error = "payload of " + std::to_string(p.data.size()) +
                         " bytes does not fit the " + std::to_string(call.writes[0].capacity()) +
                         "-byte write chunk";
            plan.header = encode_error(call.xid, in.credits, HeaderError::ErrChunk);
            plan.writes.clear();
            return plan;
        }
        used.write_lengths.push_back(std::move(lengths));
        plan.write_chunk_bytes = p.data.size();
        add(stream, r.first(p.offset));
        add(stream, r.subspan(p.offset + p.pad));
    } else if (in.payload) {
        // No Write list: the payload stays in the stream (gathered, not copied).
        const auto& p = *in.payload;
        add(stream, r.first(p.offset));
        add(stream, p.data);
        add(stream, r.subspan(p.offset));
    } else {
        add(stream, r);
    }

    const uint64_t body = total(stream);
    auto msg_header = encode_reply_header(call, in.credits, MsgType::Msg, used);
    if (msg_header.size() + body <= in.inline_threshold) {
        plan.type = MsgType::Msg;
        plan.header = std::move(msg_header);
        plan.send = std::move(stream);
    } else if (call.reply && body <= call.reply->capacity()) {
        // RFC 8166 §3.5.4: a long reply goes into the Reply chunk; the Send carries
        // only the transport header (RDMA_NOMSG).
        scatter(stream, *call.reply, plan.writes, used.reply_lengths);
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
