#include "transport/rdma/protocol/call_plan.h"

namespace nfsrdmad::rdma {

namespace {

// Appends `c`'s segments to `p`, end to end from `at`.
void lay_out(const ReadChunk& c, size_t at, PullSet& p) {
    for (const auto& s : c.segments) {
        p.pulls.push_back({s, at});
        at += s.length;
    }
    p.length = at;
}

}  // namespace

size_t PullSet::bytes() const {
    size_t n = 0;
    for (const auto& p : pulls) n += p.remote.length;
    return n;
}

size_t CallPlan::read_bytes() const {
    return (message_pulls ? message_pulls->bytes() : 0) +
           (payload_pulls ? payload_pulls->bytes() : 0);
}

CallPlan plan_call(const TransportHeader& h, size_t received) {
    CallPlan p;
    size_t next = 0;
    if (h.type == MsgType::NoMsg) {
        p.message_pulls.emplace();
        lay_out(h.reads.front(), 0, *p.message_pulls);
        p.message_length = p.message_pulls->length;
        next = 1;
    } else {
        p.message_offset = h.length;
        p.message_length = received - h.length;
    }
    // RFC 8166 §3.4.5: every other read chunk is one DDP item.
    if (next < h.reads.size()) p.payload_pulls.emplace();
    for (size_t i = next; i < h.reads.size(); ++i) {
        const ReadChunk& c = h.reads[i];
        const size_t at = (p.payload_pulls->length + kItemAlign - 1) / kItemAlign * kItemAlign;
        lay_out(c, at, *p.payload_pulls);
        p.items.push_back({c.position, at, p.payload_pulls->length - at});
    }
    return p;
}

}  // namespace nfsrdmad::rdma
