// Descriptors as a managed resource: the daemon raises its soft RLIMIT_NOFILE to the
// hard limit at start (systemd/nfsrdmad.service sets LimitNOFILE=), sizes the descriptor
// cache from what is left after sockets, pipes and the descriptors requests hold
// (vfs::fd_cache_capacity), and reports the descriptors it has open in the stats.
#pragma once

#include <cstddef>
#include <cstdint>
#include <string>

#include "config/config.h"
#include "nfs/vfs/fd_pressure.h"

namespace nfsrdmad::daemon {

struct NofileLimit {
    uint64_t before = 0;  // soft limit found at start
    uint64_t soft = 0;    // soft limit now
    uint64_t hard = 0;
    std::string error;  // why the raise failed (the old limit stays), or empty
};

// setrlimit(RLIMIT_NOFILE, {hard, hard}). RLIM_INFINITY is reported as is; Linux caps
// the hard limit at fs.nr_open anyway.
NofileLimit raise_nofile_limit();

// What the daemon needs besides the descriptor cache, from the configuration.
vfs::FdReserve fd_reserve(const config::Config& cfg, unsigned reactors);

// Entries of /proc/self/fd (0 if it cannot be read).
size_t open_fd_count();

}  // namespace nfsrdmad::daemon
