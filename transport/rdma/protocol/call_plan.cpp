#include "transport/rdma/protocol/call_plan.h"

namespace nfsrdmad::rdma {

namespace {

PullSet lay_out(const ReadChunk& c) {
    PullSet p;
    for (const auto& s : c.segments) {
        p.pulls.push_back({s, p.length});
        p.length += s.length;
    }
    return p;
}

}  // namespace

size_t CallPlan::read_bytes() const {
    return (message_pulls ? message_pulls->length : 0) + (payload_pulls ? payload_pulls->length : 0);
}

CallPlan plan_call(const TransportHeader& h, size_t received) {
    CallPlan p;
    size_t next = 0;
    if (h.type == MsgType::NoMsg) {
        p.message_pulls = lay_out(h.reads.front());
        p.message_length = p.message_pulls->length;
        next = 1;
    } else {
        p.message_offset = h.length;
        p.message_length = received - h.length;
    }
    // parse_header admits at most one chunk besides position zero.
    if (next < h.reads.size()) {
        p.payload_position = h.reads[next].position;
        p.payload_pulls = lay_out(h.reads[next]);
    }
    return p;
}

}  // namespace nfsrdmad::rdma
