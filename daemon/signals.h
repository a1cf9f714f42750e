// Signals are taken synchronously by the main thread through a signalfd; every other
// thread starts with them blocked.
#pragma once

#include "transport/engine/unique_fd.h"

namespace nfsrdmad::daemon {

enum class Signal { Terminate, Reload, DumpStats, LeaseBreak, LeasesOverflow, None };

class SignalWaiter {
public:
    // Blocks SIGTERM, SIGINT, SIGHUP, SIGUSR1, and the file lease signals (vfs/lease.h:
    // its real-time signal, SIGIO) in the calling thread.
    SignalWaiter();
    // Blocks until one arrives. LeaseBreak: `fd` is the lease's descriptor.
    Signal wait(int* fd = nullptr);

private:
    engine::UniqueFd fd_;
};

}  // namespace nfsrdmad::daemon
