// A connection's send queue, counted (the verbs contract; RFC 8166 does not see it).
//
// Every RDMA Read, RDMA Write and Send takes a slot of the QP's send queue from its post
// until its completion, and ibv_post_send fails when none is left. A Write is posted
// unsignaled, chained before the signaled Send of its reply: an RC send queue completes
// in order, so that Send's completion frees the whole chain. Counting the slots lets a
// shallow queue serve a deep one: work that finds the queue full waits in order for
// completions instead of failing (which would end the connection).
//
// How deep (send_queue_depth): a reply is one Send, or a Write and a Send when the client
// gave a write chunk or reply chunk of one segment (the Linux client's READs and long
// replies); RDMA Reads in flight are bounded by the peer's initiator depth, and reverse
// calls by their own limit. So 2 x credits + reads + reverse calls never waits for such a
// client. A reply whose chunks have more segments takes more; the queue is never shorter
// than the longest chain the chunk limits allow at one Write per segment, so such a plan
// fits an empty queue. One exception: a segment of the reply chunk that receives more
// local pieces than a work request gathers (the QP's max_send_sge, 3) takes one more
// Write per extra max_send_sge pieces. Only a COMPOUND of several READs without write
// chunks does that (each READ adds its data and the bytes after it); on a queue already
// at the floor and already full of segments, such a reply is answered ERR_CHUNK.
// Each slot costs memory per connection in the provider's rings (Soft-RoCE maps them into
// the process), which is why the depth is not set for the worst case.
#pragma once

#include <algorithm>
#include <cstddef>
#include <cstdint>

#include "transport/rdma/protocol/chunks.h"

namespace nfsrdmad::rdma {

// Work requests of the longest reply `l` allows: a Write per segment of every write
// chunk and of the reply chunk, then the Send (see above for the one exception).
inline size_t longest_reply_chain(const Limits& l) {
    return (l.max_write_chunks + 1) * l.max_segments + 1;
}

// The depth of a connection's send queue (see above). `configured` 0: automatic.
inline uint32_t send_queue_depth(uint32_t configured, uint32_t credits, uint32_t read_depth,
                                 size_t back_calls, const Limits& l) {
    if (configured) return configured;
    const size_t need = size_t(credits) * 2 + read_depth + back_calls;
    return static_cast<uint32_t>(std::max(need, longest_reply_chain(l)));
}

class SendQueueSlots {
  public:
    explicit SendQueueSlots(uint32_t depth) : depth_(depth), free_(depth) {}

    uint32_t depth() const { return depth_; }
    uint32_t free() const { return free_; }
    // A chain of `n` work requests could ever be posted (on an empty queue).
    bool fits(size_t n) const { return n <= depth_; }
    // Takes `n` slots for a post; false (nothing taken) when fewer are free.
    bool take(size_t n) {
        if (n > free_) return false;
        free_ -= static_cast<uint32_t>(n);
        return true;
    }
    // A signaled completion (or a failed post) gives its chain's slots back.
    void give(size_t n) { free_ = static_cast<uint32_t>(std::min<size_t>(depth_, free_ + n)); }

  private:
    uint32_t depth_;
    uint32_t free_;
};

}  // namespace nfsrdmad::rdma
