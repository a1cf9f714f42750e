// server.h — ONC RPC over UDP (RFC 5531: one datagram, one call; no record marking) for
// the programs that must be reachable that way: NLM, whose clients and rpc.statd may call
// over UDP (XNFS). NFS itself is served over TCP and RDMA only: its replies outgrow a
// datagram, as knfsd's default agrees.
//
// Datagrams are read on a reactor (non-blocking, until EAGAIN); each call for an allowed
// program goes to a worker, through the dispatcher (and its duplicate request cache,
// keyed by the sender's address and xid), and the reply is sent with sendto from there.
// Calls for other programs and calls past max_in_flight are dropped (the client
// retransmits), counted. Payload buffers are not offered (allocate() gives none).
#pragma once

#include <atomic>
#include <cstdint>
#include <memory>
#include <string>
#include <vector>

#include "transport/engine/reactor.h"
#include "transport/engine/unique_fd.h"
#include "transport/engine/worker_pool.h"
#include "transport/rpc/dispatcher.h"

namespace nfsrdmad::udp {

class Server {
  public:
    struct Options {
        std::vector<uint32_t> programs;  // served over UDP; others are dropped
        size_t max_in_flight = 256;
    };
    struct Counters {
        std::atomic<uint64_t> datagrams{0}, dropped{0}, replies{0}, send_errors{0};
    };

    Server(engine::Reactor& reactor, engine::WorkerPool& workers, rpc::Dispatcher& dispatcher,
           Options o);
    ~Server();  // closes the sockets: the reactor and workers must be stopped first
    Server(const Server&) = delete;
    Server& operator=(const Server&) = delete;

    // Binds address:port (UDP) and starts reading; an error text, empty on success.
    std::string listen(const std::string& address, uint16_t port);
    const Counters& counters() const { return counters_; }

  private:
    void on_readable(int fd);
    bool allowed(std::span<const uint8_t> msg) const;

    engine::Reactor& reactor_;
    engine::WorkerPool& workers_;
    rpc::Dispatcher& dispatcher_;
    const Options opts_;
    std::vector<engine::UniqueFd> fds_;
    std::shared_ptr<std::atomic<size_t>> in_flight_ = std::make_shared<std::atomic<size_t>>(0);
    Counters counters_;
};

}  // namespace nfsrdmad::udp
