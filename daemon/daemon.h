// The running server: builds transports and programs from a Config, serves until
// SIGTERM, reloads exports on SIGHUP.
#pragma once

#include <optional>
#include <string>

#include "config/config.h"
#include "config/overrides.h"

namespace nfsrdmad::daemon {

struct Options {
    std::optional<std::string> config_path;  // re-read on SIGHUP
    config::Overrides overrides;             // re-applied on SIGHUP
    bool rpcbind = true;                     // register with the system rpcbind
};

// Returns the process exit status.
int run(config::Config cfg, const Options& opts);

}  // namespace nfsrdmad::daemon
