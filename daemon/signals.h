// Signals are taken synchronously by the main thread through a signalfd; every other
// thread starts with them blocked.
#pragma once

#include "transport/engine/unique_fd.h"

namespace nfsrdmad::daemon {

enum class Signal { Terminate, Reload, DumpStats, None };

class SignalWaiter {
public:
    SignalWaiter();  // blocks SIGTERM, SIGINT, SIGHUP, SIGUSR1 in the calling thread
    Signal wait();   // blocks until one arrives

private:
    engine::UniqueFd fd_;
};

}  // namespace nfsrdmad::daemon
