// The receive completions of one reactor on one device: a single completion queue that
// every connection the reactor serves on the device names as its QP's receive CQ.
//
//   SRQ (D receives posted) ──► a call arrives on any QP of this reactor
//                                    │
//                                    ▼
//   receive CQ (D entries) ──reap──► qp_num ─► its Connection (handle: credit, header, plan)
//                                            └► none (closed): the buffer goes back
//
// Why one queue and not one per connection: a receive completion exists only for a
// receive the shared queue had posted, and the shared queue never has more than D posted
// (a slot is reposted only after its completion was reaped), so D entries hold every
// receive completion there can ever be: the queue cannot overflow, whatever the peers
// send and however many connect. A per-connection CQ could only be sized to what a
// compliant peer sends (twice its credits) and be overrun by one that floods faster than
// the credit check cuts it off. It also halves a connection's own CQ, which now holds
// only its send queue's completions (a quarter of a connection's rings saved on Soft-RoCE).
//
// Ordering: a reply's Send completion (on the connection's own CQ) frees the credit the
// peer's next call spends; the connection polls its own CQ before it takes a receive
// (Connection::on_receive_completion), as one shared CQ used to order them.
//
// Threads: completions are reaped on the reactor only. attach() runs on the CM reactor
// as a connection is created, before it is accepted (no receive can complete for a QP
// not yet connected); detach() on the connection's reactor or wherever its QP is
// destroyed. The map is under a mutex; a connection is held weakly, never kept alive.
//
// A receive that completed for a QP that is gone (its connection detached after closing)
// gives its buffer back to the shared queue. A closing connection reaps this queue once
// more, from the top of the reactor's loop, before it detaches and its QP is destroyed
// (Connection::teardown): the QP is in the error state by then and consumes no more
// receives, so what it took is reaped while the QP still exists. (Some providers, mlx5
// among them, drop a destroyed QP's entries from its CQs and return them to their own
// free list, which our slot table would not learn of.) Providers do not hand a
// destroyed QP's number out again at once (rxe allocates them cyclically), so an entry
// is never taken for a later connection's.
#pragma once

#include <infiniband/verbs.h>

#include <cstdint>
#include <memory>
#include <mutex>
#include <string>
#include <unordered_map>

#include "transport/engine/reactor.h"
#include "transport/rdma/verbs/cq_events.h"
#include "transport/rdma/verbs/receive_queue.h"
#include "transport/rdma/verbs/resources.h"

namespace nfsrdmad::rdma::verbs {

class Connection;

class ReceiveCompletions : public std::enable_shared_from_this<ReceiveCompletions> {
  public:
    // Creates the CQ (as deep as `srq`, clamped to the device's max_cqe) and its channel,
    // and asks `reactor` to watch them. nullptr and `why` when the device cannot.
    static std::shared_ptr<ReceiveCompletions> create(ibv_context* ctx, const ibv_device_attr& attr,
                                                      std::shared_ptr<SharedReceiveQueue> srq,
                                                      engine::Reactor& reactor, std::string* why);
    ibv_cq* cq() const { return cq_.get(); }
    uint32_t depth() const { return depth_; }

    void attach(uint32_t qp_num, std::weak_ptr<Connection> c);
    void detach(uint32_t qp_num);
    int reap();  // on the reactor: delivers every completion waiting; returns how many
    // Receives that completed for a connection already gone (their buffers went back).
    uint64_t strays() const;

  private:
    ReceiveCompletions(std::shared_ptr<SharedReceiveQueue> srq, engine::Reactor& r)
        : srq_(std::move(srq)), reactor_(r) {}
    void start();  // on the reactor
    void on_event();
    void deliver(const ibv_wc& wc);

    std::shared_ptr<SharedReceiveQueue> srq_;
    engine::Reactor& reactor_;
    CompChannelPtr channel_;
    CqPtr cq_;
    uint32_t depth_ = 0;
    uint64_t poller_ = 0;
    CqNotify notify_;  // with a poller: whether the CQ's event is requested (cq_events.h)
    mutable std::mutex mu_;
    std::unordered_map<uint32_t, std::weak_ptr<Connection>> conns_;
    uint64_t strays_ = 0;  // under mu_
};

}  // namespace nfsrdmad::rdma::verbs
