// The shared receive queue of one device: every connection on the device takes its calls
// from the same posted receives, so receive memory is set by configuration, not by the
// number of connections.
//
//   receive pool (P buffers, registered once)
//     ├── D posted on the SRQ ─► a call arrives on any QP ─► take(wr_id) ─► refill()
//     └── P - D held by calls in flight, from arrival until the reply is sent
//
// RFC 8166 §3.3.1 ties a credit to a receive the responder keeps posted. Here the
// promise is kept in aggregate: the credits granted across all connections never exceed
// the P - D buffers calls can hold (CreditBudget), and the D posted receives absorb a
// burst between a call's arrival and its refill. The grant shrinks as connections come
// and grows as they go: each reply carries the connection's current share.
//
// Thread-safety: every connection's reactor takes and refills; the slot table is under
// a mutex, and ibv_post_srq_recv is thread-safe (IBTA: verbs on one SRQ may be called
// concurrently). A refill that finds the pool dry asks the pool to wake it, and the
// wake-up runs on the home reactor (never on whichever thread returned the buffer).
#pragma once

#include <infiniband/verbs.h>

#include <cstdint>
#include <memory>
#include <mutex>
#include <string>
#include <vector>

#include "transport/engine/reactor.h"
#include "transport/rdma/verbs/memory_pool.h"

namespace nfsrdmad::rdma::verbs {

struct SrqDelete {
    void operator()(ibv_srq* s) const { ibv_destroy_srq(s); }
};
using SrqPtr = std::unique_ptr<ibv_srq, SrqDelete>;

class SharedReceiveQueue : public std::enable_shared_from_this<SharedReceiveQueue> {
  public:
    // Work request ids of SRQ receives carry this bit; a connection's own work (Reads,
    // Sends) never does, so one completion queue can hold both.
    static constexpr uint64_t kTag = uint64_t(1) << 63;
    static bool is_receive(uint64_t wr_id) { return (wr_id & kTag) != 0; }

    // Creates the SRQ with `depth` receives (clamped to what the device allows) and
    // posts them all from `pool`. nullptr and `why` when the device cannot.
    static std::shared_ptr<SharedReceiveQueue> create(ibv_pd* pd, const ibv_device_attr& attr,
                                                      MemoryPool& pool, uint32_t depth,
                                                      engine::Reactor* home, std::string* why);

    ibv_srq* get() const { return srq_.get(); }
    uint32_t depth() const { return depth_; }
    uint32_t posted() const;
    // The buffer a completed receive filled (the slot is free again). A completion in
    // error releases its buffer the same way.
    BufferPtr take(uint64_t wr_id);
    // Posts receives until `depth` are posted again, or the pool is dry (then it asks
    // the pool to wake the home reactor when a buffer comes back).
    void refill();

  private:
    SharedReceiveQueue(MemoryPool& pool, engine::Reactor* home) : pool_(pool), home_(home) {}
    bool post_one();  // with mu_ held

    MemoryPool& pool_;
    engine::Reactor* home_;
    SrqPtr srq_;
    uint32_t depth_ = 0;
    mutable std::mutex mu_;
    std::vector<BufferPtr> slots_;  // by wr_id & ~kTag
    std::vector<uint32_t> free_slots_;
    bool waiting_ = false;  // a wake-up is registered with the pool
};

}  // namespace nfsrdmad::rdma::verbs
