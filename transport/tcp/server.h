// TCP listeners (port 2049 for NFS, the MOUNT port) and the connections they accept.
#pragma once

#include <memory>
#include <mutex>
#include <string>
#include <vector>

#include "transport/engine/reactor.h"
#include "transport/engine/worker_pool.h"
#include "transport/rpc/dispatcher.h"
#include "transport/tcp/buffer_cache.h"
#include "transport/tcp/connection.h"

namespace nfsrdmad::tcp {

struct ServerOptions {
    size_t max_record = (1u << 20) + 65536;
    size_t max_in_flight_per_connection = 64;
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
    const TcpCounters& counters() const { return counters_; }

  private:
    void on_accept(int listen_fd);

    engine::ReactorGroup& reactors_;
    engine::WorkerPool& workers_;
    rpc::Dispatcher& dispatcher_;
    ServerOptions opts_;
    std::shared_ptr<BufferCache> buffers_ = BufferCache::create();
    // A pipe holds a whole READ: 1 MiB (FSINFO's rtmax) at any offset, which can touch
    // 257 pages, one pipe slot each (the kernel rounds the size up to 2 MiB).
    HeapPayloadAllocator payloads_{buffers_, PipePool::create((1u << 20) + 4096)};
    TcpCounters counters_;
    struct Listener {
        engine::Reactor* reactor;
        std::shared_ptr<engine::UniqueFd> fd;
    };
    std::vector<Listener> listeners_;
    std::mutex mu_;
    std::vector<std::weak_ptr<Connection>> conns_;
};

}  // namespace nfsrdmad::tcp
