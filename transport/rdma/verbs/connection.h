// One RPC-over-RDMA connection (one QP): executes the protocol layer's plans.
//
//   Receive ──► parse_header ──► plan_call ──► RDMA Reads ──► worker: dispatch
//                 │ error                      (≤ initiator depth      │
//                 ▼                             in flight)             ▼
//            RDMA_ERROR Send                              reactor: plan_reply
//                                                                      │
//                         [RDMA Write ... RDMA Write] + Send (one chain, one signal)
//
// Everything runs on the connection's reactor except the RPC call itself. Each
// posted work request that completes is tracked by a work record owning its buffers,
// so a flush (QP error, disconnect) releases every buffer and registration.
#pragma once

#include <infiniband/verbs.h>
#include <rdma/rdma_cma.h>

#include <atomic>
#include <cstdint>
#include <deque>
#include <memory>
#include <optional>
#include <unordered_map>

#include "transport/engine/reactor.h"
#include "transport/engine/worker_pool.h"
#include "transport/rdma/protocol/call_plan.h"
#include "transport/rdma/protocol/credits.h"
#include "transport/rdma/protocol/header.h"
#include "transport/rdma/protocol/reply_plan.h"
#include "transport/rdma/verbs/counters.h"
#include "transport/rdma/verbs/device.h"
#include "transport/rpc/dispatcher.h"

namespace nfsrdmad::rdma::verbs {

struct ConnectionOptions {
    uint32_t credits = 128;
    size_t inline_size = 4096;      // our receive (and send) buffer size
    size_t peer_receive = 1024;     // the peer's receive size (RFC 8797), else 1024
    bool peer_remote_invalidate = false;
    uint32_t initiator_depth = 16;  // RDMA Reads we may have in flight
    uint32_t spin_us = 0;           // adaptive mode: keep polling this long after work
    Limits limits;
};

struct ConnectionServices {
    rpc::Dispatcher& dispatcher;
    engine::WorkerPool& workers;
    RdmaCounters& counters;
    std::shared_ptr<rdma_event_channel> cm_channel;  // outlives our cm id
};

class Connection : public std::enable_shared_from_this<Connection> {
public:
    // Creates the CQ and QP on `id` (from a CONNECT_REQUEST) and posts the receives,
    // before the caller accepts: the peer may send as soon as it is connected. Takes
    // ownership of `id` on success only.
    static std::shared_ptr<Connection> create(rdma_cm_id* id, std::shared_ptr<Device> dev,
                                              engine::Reactor& reactor, ConnectionServices svc,
                                              const ConnectionOptions& opts, std::string* why);
    ~Connection();

    rdma_cm_id* id() const { return id_.get(); }
    engine::Reactor& reactor() const { return reactor_; }
    const rpc::Peer& peer() const { return peer_; }
    void start();            // on the reactor: watch the completion channel
    void disconnect(const std::string& why);  // on the reactor
    void on_cm_disconnected();                 // on the reactor
    bool closed() const { return closed_; }

    struct Work;
    struct CallWork;

private:
    Connection(rdma_cm_id* id, std::shared_ptr<Device> dev, engine::Reactor& r,
               ConnectionServices svc, const ConnectionOptions& o);

    bool setup(std::string* why);
    bool post_receive();
    void on_completion_event();
    void handle(const ibv_wc& wc);
    void on_receive(uint64_t id, uint32_t len);
    void start_reads(std::shared_ptr<CallWork> call);
    void pump_reads();
    void on_read_done(uint64_t id);
    void dispatch(std::shared_ptr<CallWork> call);
    void send_reply(std::shared_ptr<CallWork> call, std::optional<rpc::Reply> reply);
    void send_error(uint32_t xid, HeaderError::Answer err);
    uint64_t track(std::unique_ptr<Work> w);
    void release_credit();
    void teardown();

    ConnectionServices svc_;  // first: its cm channel must outlive id_
    CmIdPtr id_;
    std::shared_ptr<Device> dev_;
    engine::Reactor& reactor_;
    ConnectionOptions opts_;
    rpc::Peer peer_;
    CompChannelPtr channel_;
    CqPtr cq_;
    CreditWindow credits_;
    std::unordered_map<uint64_t, std::unique_ptr<Work>> work_;
    uint64_t next_id_ = 1;
    struct PendingRead {
        std::shared_ptr<CallWork> call;
        Pull pull;
        Buffer* into;
    };
    std::deque<PendingRead> read_queue_;
    uint32_t reads_in_flight_ = 0;
    uint32_t receives_posted_ = 0;
    bool closed_ = false;
    bool watching_ = false;
    ConnectionCounters local_;
};

}  // namespace nfsrdmad::rdma::verbs
