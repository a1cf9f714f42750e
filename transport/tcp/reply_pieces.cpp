#include "transport/tcp/reply_pieces.h"

#include <algorithm>

namespace nfsrdmad::tcp {

namespace {

void add(std::vector<Piece>& v, Piece p) {
    if (p.size) v.push_back(p);
}

// The buffer `seg` was read into, if it offers spliced bytes (they stand for its start).
const rpc::PayloadBuffer* piped_owner(rpc::Reply& r, const xdr::ExternalSegment& seg) {
    for (auto& owner : r.payload_owners)
        if (owner && owner->spliced() && owner->data() == seg.data.data()) return owner.get();
    return nullptr;
}

}  // namespace

std::vector<Piece> reply_pieces(const uint8_t* mark, rpc::Reply& reply) {
    std::vector<Piece> v;
    // One allocation: the mark, then per payload the inline bytes before it and at most
    // two pieces of its own, then the inline rest (grown one by one it took three).
    v.reserve(2 + 3 * reply.payloads.size());
    const auto& b = reply.bytes;
    add(v, {mark, 4});
    size_t cursor = 0;
    for (const auto& seg : reply.payloads) {
        add(v, {b.data() + cursor, seg.offset - cursor});
        size_t piped = 0;
        if (const auto* owner = piped_owner(reply, seg)) {
            piped = std::min(owner->spliced(), seg.data.size());
            add(v, {nullptr, piped, owner->spliced_source(), true});
        }
        add(v, {seg.data.data() + piped, seg.data.size() - piped, -1, true});
        cursor = seg.offset;  // the XDR pad is in the inline bytes
    }
    add(v, {b.data() + cursor, b.size() - cursor});
    return v;
}

}  // namespace nfsrdmad::tcp
