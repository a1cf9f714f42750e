// The Prometheus endpoint (`metrics: {listen: ADDR:PORT}` or --metrics): GET /metrics
// answers in the text exposition format, served by prometheus-cpp's exposer (civetweb,
// threads of its own). Nothing is counted here: each scrape reads the counters the
// transports and programs already keep (rpc::OpStats, the dispatcher's, the transports')
// and names them after Prometheus conventions (nfsrdmad_*, _total, _seconds, _bytes).
#pragma once

#include <prometheus/metric_family.h>

#include <cstdint>
#include <memory>
#include <string>
#include <vector>

namespace nfsrdmad {
namespace rpc {
class Dispatcher;
}
namespace tcp {
class Server;
}
namespace rdma {
class Server;
}
namespace vfs {
class FdCache;
}
namespace nfs::v4 {
class Nfs4Program;
}
namespace engine {
class ReactorGroup;
class WorkerPool;
}  // namespace engine
}  // namespace nfsrdmad

namespace nfsrdmad::daemon {

// What a scrape reads. Everything must outlive the endpoint; `rdma` and `nfs4` may be null.
struct MetricsSources {
    const rpc::Dispatcher& dispatcher;
    const tcp::Server& tcp;
    rdma::Server* rdma = nullptr;
    const vfs::FdCache& files;
    nfs::v4::Nfs4Program* nfs4 = nullptr;
    uint64_t nofile_limit = 0;
    // The loops and the threads (null: left out).
    const engine::ReactorGroup* reactors = nullptr;
    const engine::WorkerPool* workers = nullptr;
};

// One reading of every metric (what a scrape answers; `nfsrdmad stats` reads it too).
std::vector<prometheus::MetricFamily> collect_metrics(const MetricsSources& sources);

class MetricsEndpoint {
  public:
    // Listens on address:port (port 0: any free port). nullptr with `why` on failure.
    static std::unique_ptr<MetricsEndpoint> start(const std::string& address, uint16_t port,
                                                  const MetricsSources& sources, std::string* why);
    virtual ~MetricsEndpoint() = default;
    virtual uint16_t port() const = 0;
};

}  // namespace nfsrdmad::daemon
