// TCP listeners (port 2049 for NFS, the MOUNT port) and the connections they accept.
#pragma once

#include <chrono>
#include <memory>
#include <mutex>
#include <string>
#include <vector>

#include "transport/engine/rate_limit.h"
#include "transport/engine/reactor.h"
#include "transport/engine/worker_pool.h"
#include "transport/rpc/back_channel.h"
#include "transport/rpc/dispatcher.h"
#include "transport/tcp/buffer_cache.h"
#include "transport/tcp/connection.h"

namespace nfsrdmad::tcp {

struct ServerOptions {
    size_t max_record = (1u << 20) + 65536;
    size_t max_in_flight_per_connection = 64;
    size_t max_connections = 1024;              // beyond: accepted and closed at once
    std::chrono::milliseconds idle_timeout{0};  // 0: connections are never closed for idling
    size_t max_pipes = 256;                     // pipes out at once for spliced READ data
    bool reactor_calls = true;                  // ConnectionServices::reactor_calls
    // Connections register here to carry calls to their clients (the NFSv4.1
    // backchannel). Null: none does.
    std::shared_ptr<rpc::ChannelRegistry> channels;
};

class Server {
  public:
    Server(engine::ReactorGroup& reactors, engine::WorkerPool& workers, rpc::Dispatcher& dispatcher,
           ServerOptions opts);
    ~Server();

    // Binds and listens; returns an error text, empty on success.
    std::string listen(const std::string& address, uint16_t port);
    void stop_accepting();
    bool idle();  // no call in flight and nothing left to send
    size_t connections();
    std::vector<std::string> peers() const;  // "ADDR:PORT" of each open connection
    const TcpCounters& counters() const { return counters_; }

  private:
    struct Listener {
        engine::Reactor* reactor;
        std::shared_ptr<engine::UniqueFd> fd;  // reset once it stops accepting
    };
    void on_accept(const Listener& l);

    // While accept() fails for lack of descriptors, the listener is unwatched this long
    // instead of being retried in a loop.
    static constexpr std::chrono::milliseconds kAcceptBackoff{100};
    engine::ReactorGroup& reactors_;
    engine::WorkerPool& workers_;
    rpc::Dispatcher& dispatcher_;
    ServerOptions opts_;
    std::shared_ptr<BufferCache> buffers_ = BufferCache::create();
    // A pipe holds a whole READ: 1 MiB (FSINFO's rtmax) at any offset, which can touch
    // 257 pages, one pipe slot each (the kernel rounds the size up to 2 MiB).
    HeapPayloadAllocator payloads_{buffers_,
                                   PipePool::create((1u << 20) + 4096, 64, opts_.max_pipes)};
    HeapPayloadAllocator loop_payloads_{buffers_, nullptr};  // ConnectionServices::loop_payloads
    TcpCounters counters_;
    std::vector<Listener> listeners_;
    engine::RateLimit reject_log_{std::chrono::seconds(10)},
        accept_error_log_{std::chrono::seconds(10)};
    mutable std::mutex mu_;
    std::vector<std::weak_ptr<Connection>> conns_;
};

}  // namespace nfsrdmad::tcp
