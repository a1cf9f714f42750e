// A connection's send queue, counted (the verbs contract; RFC 8166 does not see it).
//
// Every RDMA Read, RDMA Write and Send takes a slot of the QP's send queue from its post
// until its completion, and ibv_post_send fails when none is left. A Write is posted
// unsignaled, chained before the signaled Send of its reply: an RC send queue completes
// in order, so that Send's completion frees the whole chain. Counting the slots lets a
// shallow queue serve a deep one: work that finds the queue full waits in order for
// completions instead of failing (which would end the connection).
//
// How deep (send_queue_depth): every call holds a credit until its reply's Send completes,
// so credits + the RDMA Reads in flight (at most kMaxReadsInFlight, below) + reverse calls
// is what a client whose replies are one Send each never waits for. A reply with a write
// or reply chunk takes a Write per segment as well (the Linux client's READs: a Write and
// a Send); when those do not fit, it waits for completions in order, which at a deep
// queue costs nothing (a queue of 1 MiB Writes already fills the link).
// A chain longer than the whole queue (many segments, or a queue set shallow) is posted
// in parts (next_chain_part): Writes only, the last one of each part signaled so that its
// completion frees the part's slots, then the rest with the Send. An RC QP executes its
// work requests in order, so every Write is placed before the requester sees the Send;
// posting the Writes earlier is all the ordering RPC-over-RDMA asks for (the kernel's
// svcrdma posts READ payload Writes while it still encodes the reply). A part is never a
// failure, and no reply is too long for the queue.
// Each slot costs memory per connection in the provider's rings (Soft-RoCE maps them into
// the process; with the Linux client 208 work requests take its 256-slot rings, where the
// 400 of before took 512), which is why the depth is not set for the longest reply.
#pragma once

#include <algorithm>
#include <cstddef>
#include <cstdint>

#include "transport/rdma/protocol/chunks.h"

namespace nfsrdmad::rdma {

// RDMA Reads a connection has in flight at most, whatever the peer's initiator depth
// allows (the Linux client on Soft-RoCE allows 128): 64 Reads of 1 MiB keep any link busy,
// and each is a send queue slot per connection.
inline constexpr uint32_t kMaxReadsInFlight = 64;

// Work requests of the longest reply `l` allows: a Write per segment of every write
// chunk and of the reply chunk, then the Send (more when a reply-chunk segment gets more
// pieces than a Write gathers). Posted in parts when it is longer than the queue.
inline size_t longest_reply_chain(const Limits& l) {
    return (l.max_write_chunks + 1) * l.max_segments + 1;
}

// The depth of a connection's send queue (see above). `configured` 0: automatic.
inline uint32_t send_queue_depth(uint32_t configured, uint32_t credits, uint32_t read_depth,
                                 size_t back_calls) {
    if (configured) return configured;
    return static_cast<uint32_t>(size_t(credits) + std::min(read_depth, kMaxReadsInFlight) +
                                 back_calls);
}

// What of a reply chain (`writes_left` Writes not yet posted, then the Send) to post now,
// with `free` slots of a `depth`-deep queue.
struct ChainPart {
    size_t writes = 0;  // Writes to post now
    bool send = false;  // and the Send after them: the reply is complete
    bool empty() const { return writes == 0 && !send; }
};
inline ChainPart next_chain_part(size_t writes_left, uint32_t free, uint32_t depth) {
    if (writes_left + 1 <= free) return {writes_left, true};  // the rest, at once
    // The rest fits the queue: wait until it fits the free slots, as one post.
    if (writes_left + 1 <= depth) return {};
    // Longer than the queue: a part of Writes, once half the queue (or all that is left to
    // write) is free, so that parts are not posted a slot at a time.
    const size_t want = std::min<size_t>(writes_left, std::max<uint32_t>(1, depth / 2));
    if (free < want) return {};
    return {std::min<size_t>(writes_left, free), false};
}

class SendQueueSlots {
  public:
    explicit SendQueueSlots(uint32_t depth) : depth_(depth), free_(depth) {}

    uint32_t depth() const { return depth_; }
    uint32_t free() const { return free_; }
    // Takes `n` slots for a post; false (nothing taken) when fewer are free.
    bool take(size_t n) {
        if (n > free_) return false;
        free_ -= static_cast<uint32_t>(n);
        return true;
    }
    // A signaled completion (or a failed post) gives its chain's (or part's) slots back.
    void give(size_t n) { free_ = static_cast<uint32_t>(std::min<size_t>(depth_, free_ + n)); }

  private:
    uint32_t depth_;
    uint32_t free_;
};

}  // namespace nfsrdmad::rdma
