// The RPC-over-RDMA listener (rdma_cm, port 20049 by default) and its connections.
#pragma once

#include <chrono>
#include <map>
#include <memory>
#include <mutex>
#include <optional>
#include <string>
#include <unordered_map>
#include <vector>

#include "transport/engine/reactor.h"
#include "transport/engine/worker_pool.h"
#include "transport/rdma/verbs/connection.h"
#include "transport/rdma/verbs/counters.h"
#include "transport/rdma/verbs/device.h"
#include "transport/rdma/verbs/resources.h"
#include "transport/rpc/dispatcher.h"

namespace nfsrdmad::rdma {

struct ServerOptions {
    uint32_t credits = 128;  // the most one connection is granted (the share may be less)
    // Connections past this are rejected at CONNECT_REQUEST, never accepted and dropped.
    uint32_t max_connections = 1024;
    size_t inline_size = 4096;  // what we advertise we can receive and will send
    uint32_t send_queue_depth = 0;  // per connection; 0: automatic (send_queue.h)
    verbs::PoolSizes pools;
    Limits limits;
    // A reply Send the peer has not taken for this long ends the connection
    // (Connection::check_stalled_sends); 0 disables.
    std::chrono::milliseconds send_timeout{std::chrono::seconds(60)};
    std::string capture_dir;  // test hook: ConnectionOptions::capture_dir
    bool reactor_calls = true;  // ConnectionOptions::reactor_calls
    // Connections register here to carry calls to their clients (RFC 8167). Null: none.
    std::shared_ptr<rpc::ChannelRegistry> channels;
};

class Server {
  public:
    Server(engine::ReactorGroup& reactors, engine::WorkerPool& workers, rpc::Dispatcher& dispatcher,
           ServerOptions opts);
    ~Server();

    // Logs each RDMA device and its GIDs; returns how many devices there are.
    static size_t log_devices();

    // Binds and listens; returns an error text, empty on success.
    std::string listen(const std::string& address, uint16_t port);
    void stop_accepting();
    void disconnect_all();
    size_t connections();
    struct PeerInfo {
        std::string peer;  // "ADDR:PORT"
        uint32_t credits = 0;
    };
    std::vector<PeerInfo> peers();
    const verbs::RdmaCounters& counters() const { return counters_; }
    std::vector<std::string> stats();  // the totals, then one line per connection

    // Registered memory and queues now, over every device (metrics gauges).
    struct Pools {
        size_t open_connections = 0;
        size_t buffers_in_use = 0, registrations = 0, registered_bytes = 0, huge_page_bytes = 0;
        size_t payload_wait_timeouts = 0, receives_posted = 0;
        uint64_t receive_strays = 0;  // receives reaped after their connection went
        uint64_t async_events = 0;    // the devices' asynchronous events (logged)
        size_t read_bytes_in_flight = 0, read_waiters = 0;
    };
    Pools pools();

  private:
    Pools pools_locked();
    void on_cm_events();
    void on_tick();  // every second, on the CM reactor: per-connection watchdogs
    void on_connect_request(rdma_cm_id* id, const rdma_conn_param& param);
    std::shared_ptr<verbs::Device> device_for(ibv_context* ctx, std::string* why);
    std::string open_devices();  // every device rdma_cm knows, registered at start

    engine::ReactorGroup& reactors_;
    engine::WorkerPool& workers_;
    rpc::Dispatcher& dispatcher_;
    ServerOptions opts_;
    verbs::RdmaCounters counters_;
    engine::Reactor* cm_reactor_ = nullptr;
    // Shared with every connection: a channel outlives the ids created on it.
    std::shared_ptr<rdma_event_channel> channel_;
    std::vector<verbs::CmIdPtr> listeners_;
    std::optional<engine::Reactor::TimerId> tick_;  // the next on_tick(), on cm_reactor_
    std::map<ibv_context*, std::shared_ptr<verbs::Device>> devices_;
    std::mutex mu_;  // devices_ and conns_ (stats() reads them from the signal thread)
    std::unordered_map<rdma_cm_id*, std::shared_ptr<verbs::Connection>> conns_;
};

}  // namespace nfsrdmad::rdma
