// RDMA registers (pins) its buffers: RLIMIT_MEMLOCK must allow it, unless the process
// has CAP_IPC_LOCK. Checked once at start so the daemon refuses with a remedy instead
// of failing registrations under load.
#pragma once

#include <string>

#include "config/config.h"
#include "transport/rdma/verbs/device.h"

namespace nfsrdmad::daemon {

// The registered pools the `rdma:` section asks for.
rdma::verbs::PoolSizes pool_sizes(const config::Config& cfg);

// The capability is in this process's effective set.
bool has_capability(int cap);

// Empty when fine; otherwise what is short and exactly what to set.
std::string check_memlock(const rdma::verbs::PoolSizes& pools);

}  // namespace nfsrdmad::daemon
