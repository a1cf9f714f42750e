#include "transport/rdma/protocol/chunks.h"

#include <algorithm>

namespace nfsrdmad::rdma {

uint64_t ReadChunk::length() const {
    uint64_t n = 0;
    for (const auto& s : segments) n += s.length;
    return n;
}

uint64_t WriteChunk::capacity() const {
    uint64_t n = 0;
    for (const auto& s : segments) n += s.length;
    return n;
}

Limits fit_to_buffer(Limits l, uint64_t buffer_bytes) {
    l.max_call = std::min(l.max_call, buffer_bytes);
    l.max_transfer = std::min(l.max_transfer, buffer_bytes);
    l.max_call_payload = std::min(l.max_call_payload, buffer_bytes);
    return l;
}

}  // namespace nfsrdmad::rdma
