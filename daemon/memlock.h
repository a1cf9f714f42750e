// RDMA registers (pins) its buffers: RLIMIT_MEMLOCK must allow it, unless the process
// has CAP_IPC_LOCK. Checked once at start so the daemon refuses with a remedy instead
// of failing registrations under load.
#pragma once

#include <string>

#include "transport/rdma/verbs/device.h"

namespace nfsrdmad::daemon {

// Empty when fine; otherwise what is short and exactly what to set.
std::string check_memlock(const rdma::verbs::PoolSizes& pools);

}  // namespace nfsrdmad::daemon
