// services.h — what every NFSv4.1 operation shares: one per daemon, owned by Nfs4Program.
//
// Lifetimes: the export table is a snapshot per COMPOUND (a reload replaces it between
// calls); the pseudo file system is rebuilt from a snapshot the first time a COMPOUND
// sees a new one; the client table (clients, sessions, stateids) lives as long as the
// daemon and is never tied to a connection (RFC 8881 §2.10.3: connections come and go,
// sessions stay until destroyed or their lease expires).
#pragma once

#include <cstddef>
#include <chrono>
#include <cstdint>
#include <memory>
#include <mutex>
#include <string>

#include "nfs/v4/id_map.h"
#include "nfs/v4/lock_state.h"
#include "nfs/v4/open_state.h"
#include "nfs/v4/pseudo_fs.h"
#include "nfs/v4/recovery.h"
#include "nfs/v4/state/client_table.h"
#include "nfs/vfs/export.h"
#include "nfs/vfs/fd_cache.h"
#include "nfs/vfs/state/lock_table.h"

namespace nfsrdmad::nfs::v4 {

struct Options {
    state::Limits limits;                // leases, bounds, channel limits
    std::string domain = "localdomain";  // NFSv4 id mapping (RFC 8881 §5.9)
    size_t fd_cache_capacity = vfs::FdCache::kDefaultCapacity;
    uint32_t epoch = 0;  // 0: the recovery store's, or the boot time in seconds
    // Clients recorded for recovery after a restart, and the grace period (0: the
    // lease time) a boot that finds some gives them (recovery.h). Null: none.
    std::shared_ptr<vfs::RecoveryStore> recovery_store;
    std::chrono::seconds grace_period{0};
};

class Services {
  public:
    Services(std::shared_ptr<vfs::ExportRegistry> exports, const Options& o);

    const Options options;
    std::shared_ptr<vfs::ExportRegistry> exports;
    vfs::FdCache files;
    state::SteadyClock clock;
    Recovery recovery;
    state::ClientTable clients;
    IdMap ids;
    OpenTable opens;
    vfs::state::LockTable locks;  // byte-range locks (shared with NLM later)
    LockStateTable lock_states;   // lock stateids (lock_state.h)

    // A client's state is gone (DESTROY_CLIENTID, a record replaced or purged, lease
    // reaping): forget its opens and lock stateids and release its byte-range locks.
    // The client table has dropped (or drops) the stateids themselves.
    void client_gone(state::ClientId client);

    // The pseudo file system over `table` (built once per snapshot).
    std::shared_ptr<const PseudoFs> pseudo_for(const std::shared_ptr<const vfs::ExportTable>& t);

  private:
    std::mutex mu_;
    std::weak_ptr<const vfs::ExportTable> pseudo_table_;
    std::shared_ptr<const PseudoFs> pseudo_;
};

}  // namespace nfsrdmad::nfs::v4
