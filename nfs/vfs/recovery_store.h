// recovery_store.h — what a restarted server needs to know about the previous boot's
// NFSv4.1 clients (RFC 8881 §8.4.2.1: "the server must be able to determine which
// clients had state at the time of the failure", stable storage), and the boot epoch
// its stateids and client IDs carry (§8.2.4: a stale stateid or client ID is told apart
// by the boot it came from, so the epoch must differ from every earlier boot's).
//
// One file, <state_dir>/nfs4-clients: a line "epoch N", then a line "client HEX" per
// client owner (co_ownerid, hex-encoded). Every change rewrites it atomically (a
// temporary file, fsync, rename, fsync of the directory): a crash leaves the old file
// or the new one. A client is recorded when its client ID is confirmed, before the
// CREATE_SESSION reply goes out, and dropped when it is destroyed or reaped.
//
// The previous boot's clients stay in the file until grace ends (end_grace()), so a
// second crash during grace does not forget the clients that had not reclaimed yet.
//
// Thread-safe. Writes happen on workers, a few per client lifetime.
#pragma once

#include <cstdint>
#include <memory>
#include <mutex>
#include <set>
#include <string>
#include <vector>

#include "nfs/vfs/result.h"

namespace nfsrdmad::vfs {

class RecoveryStore {
  public:
    static constexpr const char* kFile = "nfs4-clients";
    // The same records for NLM: the addresses of the hosts that held locks, which NSM
    // notifies after a restart (nfs/nlm/nsm_notify.h). Their own epoch, from the same clock.
    static constexpr const char* kNlmHostsFile = "nlm-hosts";

    // Loads <dir>/<file> (missing: a first boot) and writes the new epoch, greater than
    // the last one and not less than `now_seconds`. Errors: a malformed file (EINVAL,
    // *why says where), or I/O errors.
    static Result<std::unique_ptr<RecoveryStore>> open(const std::string& dir, uint32_t now_seconds,
                                                       std::string* why = nullptr,
                                                       const std::string& file = kFile);

    uint32_t epoch() const { return epoch_; }
    // The client owners the previous boot had recorded.
    const std::vector<std::string>& previous() const { return previous_; }

    // Record / drop a client owner (no write when nothing changes).
    Result<void> add(const std::string& owner);
    Result<void> remove(const std::string& owner);
    // Grace is over: the previous boot's clients that did not come back are forgotten.
    Result<void> end_grace();

    size_t writes() const;  // rewrites since open (tests)

  private:
    RecoveryStore(std::string path, uint32_t epoch, std::vector<std::string> previous);
    Result<void> write_locked();

    const std::string path_;  // <dir>/<file>
    const uint32_t epoch_;
    const std::vector<std::string> previous_;
    mutable std::mutex mu_;
    std::set<std::string> current_;
    bool grace_over_ = false;
    size_t writes_ = 0;
};

}  // namespace nfsrdmad::vfs
