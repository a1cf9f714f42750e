// One RPC-over-RDMA connection (one QP): executes the protocol layer's plans.
//
//   SRQ receive ──► parse_header ──► plan_call ──► RDMA Reads ──► worker: dispatch
//   (the device's)    │ error                     (≤ initiator depth      │
//                     ▼                            in flight)             ▼
//                RDMA_ERROR Send                             reactor: plan_reply
//                                                                         │
//                            [RDMA Write ... RDMA Write] + Send (one chain, one signal)
//
// One file per direction, as the kernel's svcrdma has them:
//   connection.cpp  the QP's life: setup, completions, backpressure, disconnect, teardown
//   receive.cpp     a call's arrival: credits, header, call plan, hand-off to a worker
//   read.cpp        RDMA Reads that pull chunks into registered payload buffers
//   send.cpp        replies: RDMA Writes and the Send, RDMA_ERROR, the send watchdog
//
// Everything runs on the connection's reactor except the RPC call itself, and every
// rdma_cm and verbs control call (create, disconnect, destroy) is made there too: the
// kernel refuses them from a thread whose credentials changed since the device file was
// opened (workers switch fsuid per request), and a failed destroy leaks the CM id. So a
// worker never drops the last reference to a connection (dispatch() hands it back).
// "On the reactor" includes a worker that never switched credentials acting as its
// sleeping reactor (engine::Reactor::run_if_asleep): it posts its own reply and drops its
// references there, while the reactor's thread stays out (receive.cpp, dispatch()).
#pragma once

#include <infiniband/verbs.h>
#include <rdma/rdma_cma.h>

#include <atomic>
#include <chrono>
#include <cstdint>
#include <deque>
#include <map>
#include <memory>
#include <optional>
#include <span>
#include <string>
#include <unordered_map>
#include <vector>

#include "transport/engine/reactor.h"
#include "transport/engine/worker_pool.h"
#include "transport/rdma/protocol/call_plan.h"
#include "transport/rdma/protocol/credits.h"
#include "transport/rdma/protocol/header.h"
#include "transport/rdma/protocol/reply_plan.h"
#include "transport/rdma/protocol/send_queue.h"
#include "transport/rdma/verbs/counters.h"
#include "transport/rdma/verbs/cq_events.h"
#include "transport/rdma/verbs/device.h"
#include "transport/rpc/back_channel.h"
#include "transport/rpc/dispatcher.h"

namespace nfsrdmad::rdma::verbs {

struct ConnectionOptions {
    uint32_t credits = 128;      // the most a connection is granted (Device::credit_share)
    size_t inline_size = 4096;   // our receive (and send) buffer size
    size_t peer_receive = 1024;  // the peer's receive size (RFC 8797), else 1024
    bool peer_remote_invalidate = false;
    uint32_t initiator_depth = 16;  // RDMA Reads we may have in flight (≤ kMaxReadsInFlight)
    // RDMA Read bytes one connection may have in flight (one Read larger than this still
    // runs, alone). Keeps a deep queue's oldest calls first while the device's budget
    // (PoolSizes::read_budget()) is shared by many connections. 8 MiB is far beyond one
    // link's bandwidth-delay product.
    size_t read_bytes = 8u << 20;
    uint32_t send_queue_depth = 0;  // work requests; 0: automatic (send_queue.h)
    Limits limits;
    // Test hook (fuzz seeds from real traffic): every received message is also written
    // to a file here, the first kMaxCaptures of them. Empty: off.
    std::string capture_dir;
    // Calls that need no disk are answered on the reactor (rpc::Dispatcher::dispatch_nowait)
    // rather than handed to a worker and back (receive.cpp).
    bool reactor_calls = true;
};

struct ConnectionServices {
    rpc::Dispatcher& dispatcher;
    engine::WorkerPool& workers;
    RdmaCounters& counters;
    std::shared_ptr<rdma_event_channel> cm_channel;  // outlives our cm id
    // Connections that carry calls to their clients (RFC 8167, back_channel.cpp): each
    // registers while open. Null: no reverse-direction calls.
    std::shared_ptr<rpc::ChannelRegistry> channels = nullptr;
    size_t max_back_calls = 16;  // outstanding reverse calls per connection
};

class Connection;

// What the daemon's ChannelRegistry holds for a connection (RFC 8167, back_channel.cpp):
// a weak handle whose calls go to the reactor before the connection is touched, so that
// no other thread ever holds (and drops) the last reference to a connection, whose end
// must run on its reactor.
class ReverseCallPort final : public rpc::CallChannel {
  public:
    ReverseCallPort(std::weak_ptr<Connection> c, engine::Reactor& r, engine::WorkerPool& w)
        : conn_(std::move(c)), reactor_(r), workers_(w) {}
    bool send_call(uint32_t xid, std::vector<uint8_t> message, std::chrono::milliseconds timeout,
                   rpc::PendingCalls::Done done) override;

  private:
    std::weak_ptr<Connection> conn_;
    engine::Reactor& reactor_;
    engine::WorkerPool& workers_;
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
    void start();                             // on the reactor: watch the completion channel
    // On the reactor (ReceiveCompletions): a receive of the shared queue completed on our
    // QP. Before start(), it is kept until then.
    void on_receive_completion(const ibv_wc& wc);
    void disconnect(const std::string& why);  // on the reactor
    void on_cm_disconnected();                // on the reactor
    // On the reactor: disconnects when the oldest reply Send has waited `limit` for the
    // peer. A peer that posts no receives makes our Sends retry on RNR NAKs, forever if
    // its connect request asked for an RNR retry count of 7 (which sets ours: IBA CM);
    // meanwhile it holds credits and registered buffers. 0 disables.
    void check_stalled_sends(std::chrono::steady_clock::time_point now,
                             std::chrono::milliseconds limit);
    bool closed() const { return closed_; }
    const TransportCounters& counters() const { return local_; }  // any thread
    uint32_t credits() const { return granted_.load(std::memory_order_relaxed); }
    uint32_t read_depth() const { return opts_.initiator_depth; }
    // The most RDMA Read bytes it ever had in flight (stats; any thread).
    size_t read_bytes_peak() const { return read_bytes_peak_.load(std::memory_order_relaxed); }
    // The most calls it ever held at once, from arrival to reply (stats; any thread).
    uint32_t calls_peak() const { return calls_peak_.load(std::memory_order_relaxed); }
    uint32_t send_queue_depth() const { return sq_.depth(); }

    // RFC 8167 (back_channel.cpp): a reverse-direction call, on the reactor (through the
    // ReverseCallPort the registry holds).
    void start_back_call(uint32_t xid, std::vector<uint8_t> message,
                         std::chrono::milliseconds timeout, rpc::PendingCalls::Done done);

    struct Work;
    struct CallWork;
    struct ReplyInProgress;

  private:
    Connection(rdma_cm_id* id, std::shared_ptr<Device> dev, engine::Reactor& r,
               ConnectionServices svc, const ConnectionOptions& o);

    bool setup(std::string* why);
    // Counts on this connection and in the server-wide totals.
    void count(Tc c, uint64_t n = 1) {
        local_[c].fetch_add(n, std::memory_order_relaxed);
        svc_.counters[c].add(n);
    }
    void on_completion_event();
    int reap();  // polls the CQ dry; returns the completions handled
    void handle(const ibv_wc& wc);
    void on_receive(BufferPtr buf, uint32_t len);
    void capture(std::span<const uint8_t> msg);  // opts_.capture_dir
    uint32_t grant();  // the credits the next reply carries (the device's current share)
    void start_reads(std::shared_ptr<CallWork> call);
    // Posts queued Reads while the peer's initiator depth and the device's ReadBudget
    // allow; `turn`: woken by the budget (see read_budget.h).
    void pump_reads(bool turn = false);
    void wait_for_read_budget(bool front);
    void on_read_done(uint64_t id);
    void read_finished(uint32_t bytes);  // a Read completed or was flushed
    void dispatch(std::shared_ptr<CallWork> call);
    void run_on_worker(std::shared_ptr<CallWork> call);  // the rest of dispatch()
    using ReplyPtr = std::shared_ptr<std::optional<rpc::Reply>>;
    void send_reply(std::shared_ptr<CallWork> call, ReplyPtr reply);
    // false: no registered buffer free now (short_of_), or too few send queue slots
    // (nothing was posted or consumed; or a part of its Writes was, and reply_ holds it)
    bool try_send_reply(const std::shared_ptr<CallWork>& call, rpc::Reply& reply);
    // Posts what the send queue takes of reply_: the rest with its Send (true), or a part
    // of its Writes or nothing (false: it waits for completions).
    bool post_reply();
    bool reserve_pulls(CallWork& call);
    void begin_reads(std::shared_ptr<CallWork> call);  // its buffers are reserved
    // Registered memory ran out: calls and replies wait here, in order, until the pool
    // that ran dry (short_of_) hands a buffer back. They never fail for it: an RDMA_ERROR
    // would surface as EIO in the client's application. (short_of_ null: the attempt
    // found the send queue full instead; a completion retries it, on_send_queue_room.)
    void wait_for_buffers();
    void retry_starved();
    void send_error(uint32_t xid, HeaderError::Answer err);
    // false: no send buffer (short_of_) or no send queue slot
    bool try_send_error(uint32_t xid, HeaderError::Answer err);
    // Posts the first `length` bytes of `buffer` as one inline Send (an RDMA_ERROR, a
    // reverse call) into a send queue slot the caller saw free; a failed post disconnects
    // (and gives back the credit it holds).
    void post_inline_send(BufferPtr buffer, size_t length, bool holds_credit, const char* what);
    // Reverse-direction calls (back_channel.cpp). on_reverse_reply: true when `msg` was a
    // reverse reply (RFC 8167 §4.1), taken. try_send_back_call: false when no send buffer
    // or no send queue slot.
    bool on_reverse_reply(std::span<const uint8_t> msg);
    bool try_send_back_call(uint32_t xid, const std::vector<uint8_t>& message);
    void finish_back_calls(std::vector<rpc::PendingCalls::Finished> f);  // done on workers
    uint64_t track(std::unique_ptr<Work> w);
    void release_credit();
    // The send queue is full for a reply, an RDMA_ERROR or a reverse call (`reply`), or for
    // an RDMA Read: the work stays queued, and the next completion that frees slots retries
    // it (on_send_queue_room), replies before Reads.
    void wait_for_send_queue(bool reply);
    void on_send_queue_room();
    void teardown();

    ConnectionServices svc_;  // first: its cm channel must outlive id_
    CmIdPtr id_;
    std::shared_ptr<Device> dev_;
    engine::Reactor& reactor_;
    ConnectionOptions opts_;
    rpc::Peer peer_;
    CompChannelPtr channel_;
    CqPtr cq_;  // the send queue's completions (Reads, Sends, a part's last Write)
    // Where our receives complete: the reactor's CQ on this device (receive_completions.h).
    std::shared_ptr<ReceiveCompletions> rcq_;
    uint32_t qp_num_ = 0;
    bool started_ = false;
    std::vector<ibv_wc> early_;  // receives that completed before start()
    CreditWindow credits_;
    std::unordered_map<uint64_t, std::unique_ptr<Work>> work_;
    uint64_t next_id_ = 1;
    struct PendingRead {
        std::shared_ptr<CallWork> call;
        Pull pull;
        Buffer* into;
    };
    std::deque<PendingRead> read_queue_;
    // Signaled Sends (replies, RDMA_ERRORs) by wr_id, in post order (check_stalled_sends),
    // with the coarse time they were posted (engine::Reactor::coarse_now).
    std::deque<std::pair<uint64_t, std::chrono::steady_clock::time_point>> sends_in_flight_;
    std::chrono::steady_clock::time_point send_progress_at_{};  // a check saw Sends complete
    bool sends_progressed_ = false;  // some left sends_in_flight_ since the last check
    void forget_completed_sends();   // drops completed Sends from the front
    std::deque<std::shared_ptr<CallWork>> starved_calls_;
    // Calls put off (rpc::Outcome::Later) by key, each with the reactor timer that runs it
    // again and its place among the calls a wake-up runs sooner (rpc/deferred_wakes.h);
    // both hold only the key and a weak reference, so a disconnect drops them (cancelled)
    // while the connection and its device's pools still exist.
    struct Deferred {
        engine::Reactor::TimerId timer;
        std::shared_ptr<CallWork> call;
        rpc::DeferredWakes::Registration wake;
    };
    std::map<uint64_t, Deferred> deferred_;
    uint64_t next_deferred_ = 0;
    void defer(std::shared_ptr<CallWork> call);  // on the reactor thread
    // The call put off under `key`, if still there, runs again now (its timer or a wake-up).
    void run_deferred(uint64_t key, bool woken);
    std::deque<std::pair<uint32_t, HeaderError::Answer>> starved_errors_;
    std::deque<std::pair<std::shared_ptr<CallWork>, ReplyPtr>> starved_replies_;
    // The front of starved_replies_, built and partly posted (send_queue.h: a chain longer
    // than the queue). Set by try_send_reply, reset when its Send is posted or on
    // disconnect (Writes already posted keep its buffers in lingering_).
    std::unique_ptr<ReplyInProgress> reply_;
    std::deque<std::pair<uint32_t, std::vector<uint8_t>>> starved_back_calls_;  // xid, call
    // Reverse calls sent and not yet answered, and how many the client lets us have out
    // (RFC 8167 §4.2: its reverse replies grant them, apart from forward credits; one until
    // the first reply). A call beyond the grant waits in starved_back_calls_.
    std::vector<uint32_t> back_sent_;
    uint32_t back_grant_ = 1;
    rpc::PendingCalls pending_;              // reverse calls awaiting their reply (reactor only)
    std::shared_ptr<ReverseCallPort> port_;  // what the registry holds, while open
    MemoryPool* short_of_ = nullptr;         // the pool the last failed attempt needed
    // Records of replies whose post failed part way: the Writes before the failure were
    // posted and may still read these buffers. Freed with the QP (~Connection).
    std::vector<std::unique_ptr<Work>> lingering_;
    std::vector<MemoryPool*> awaiting_;      // pools that will wake us when they can
    ReadWindow reads_;                       // our Reads in flight (reactor only)
    std::atomic<size_t> read_bytes_peak_{0};  // reads_.peak(), for stats on any thread
    std::atomic<uint32_t> calls_peak_{0};     // written on the reactor only
    SendQueueSlots sq_{1};               // sized in setup()
    uint32_t max_send_sge_ = 1;          // gather entries per work request (setup())
    bool sq_short_ = false;              // work waits for send queue slots
    bool replies_want_sq_ = false;       // ... and replies among it: Reads wait behind them
    bool awaiting_read_budget_ = false;  // queued on the device's ReadBudget
    std::atomic<uint32_t> granted_{0};   // the last grant sent (stats)
    bool attached_ = false;              // counted in the device's connections
    bool closed_ = false;
    bool torn_down_ = false;  // closed and drained: teardown() ran
    bool watching_ = false;
    uint64_t poller_ = 0;  // poll/adaptive modes: our poller on the reactor
    CqNotify cq_notify_;   // ... and whether the CQ's event is requested (cq_events.h)
    TransportCounters local_;
};

}  // namespace nfsrdmad::rdma::verbs
