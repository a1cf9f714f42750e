// restart_only_changes (config.h): what SIGHUP leaves as it was. The daemon reloads
// exports and the log level; listeners, pools and threads are set up once at start.
#include <string>
#include <vector>

#include "config/config.h"

namespace nfsrdmad::config {

std::vector<std::string> restart_only_changes(const Config& running, const Config& next) {
    std::vector<std::string> out;
    auto note = [&](bool differs, const char* what) {
        if (differs) out.emplace_back(what);
    };
    note(running.tcp != next.tcp, "listeners.tcp");
    note(running.rdma != next.rdma, "listeners.rdma");
    note(running.mount_port != next.mount_port, "listeners.mount_port");
    note(running.max_record_size != next.max_record_size, "listeners.max_record_size");
    note(running.metrics != next.metrics, "metrics");
    note(!(running.rdma_tuning == next.rdma_tuning), "rdma");
    note(!(running.tcp_tuning == next.tcp_tuning), "tcp");
    note(!(running.nfs4 == next.nfs4), "nfsv4");
    note(!(running.locks == next.locks), "locks");
    note(!(running.kerberos == next.kerberos), "kerberos");
    note(running.engine_mode != next.engine_mode || running.spin_us != next.spin_us ||
             running.engine_threads != next.engine_threads || running.workers != next.workers ||
             running.fd_cache != next.fd_cache || running.reactor_calls != next.reactor_calls,
         "engine");
    note(running.state_dir != next.state_dir, "state_dir");
    return out;
}

}  // namespace nfsrdmad::config
