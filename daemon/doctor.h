// `nfsrdmad doctor`: what stands between this host and a working server, found before an
// admin starts it (or while it runs): RDMA devices, ports and GIDs (a RoCE v2 GID on each
// RDMA listening address), RLIMIT_MEMLOCK against the registered pools the configuration
// asks for, huge pages, the ports (2049, 20049, 20048, metrics) taken and by whom,
// rpcbind, each export (present, a directory, handles, mount point), capabilities, the
// state directory, the keytab. Each finding says what to do.
#pragma once

#include <string>
#include <vector>

#include "config/config.h"

namespace nfsrdmad::daemon {

struct DoctorFinding {
    enum Level { Ok, Warn, Fail } level = Ok;  // Fail: the daemon could not serve so
    std::string topic;                         // "rdma", "ports", "export /srv/a", ...
    std::string text;                          // what was found, and what to do
};

std::vector<DoctorFinding> doctor(const config::Config& cfg);

// Prints the findings; the exit status is 1 when one of them is Fail.
int run_doctor(const config::Config& cfg);

}  // namespace nfsrdmad::daemon
