#include "transport/rdma/protocol/chunks.h"

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

}  // namespace nfsrdmad::rdma
