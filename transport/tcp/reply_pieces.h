// A reply as the TCP sender walks it: the record mark, then the inline bytes with each
// payload segment in its place (rpc::Reply::payloads, stream order). A payload whose
// first bytes wait in a pipe (rpc::PayloadBuffer::splice_fd) yields a pipe piece for
// those, sent by splice(2), then a memory piece for any rest:
//
//   [mark][inline ..][pipe: payload 1 | mem: rest of 1][inline ..][mem: payload 2][inline ..]
//
// Memory pieces go out by writev/sendmsg from where they are; nothing is copied.
#pragma once

#include <cstddef>
#include <cstdint>
#include <vector>

#include "transport/rpc/call.h"

namespace nfsrdmad::tcp {

struct Piece {
    const uint8_t* data = nullptr;  // memory piece; nullptr for a pipe piece
    size_t size = 0;
    int pipe = -1;         // the pipe's read end for a pipe piece
    bool payload = false;  // a payload's bytes (counters), not inline XDR
};

// The pieces of `reply` behind the 4-byte `mark`, empty ones left out. They point into
// `mark`, `reply.bytes` and the payload buffers: valid while those do not move.
std::vector<Piece> reply_pieces(const uint8_t* mark, rpc::Reply& reply);

}  // namespace nfsrdmad::tcp
