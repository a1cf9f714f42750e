// One daemon per state directory.
//
// The state directory holds what must outlive a process: the handle key, the NFSv4.1 client
// records, NSM's list of hosts to notify, the control socket. Two daemons given the same one
// would each rewrite the other's records, so the second is refused at start. The owner
// holds an exclusive flock(2) on <state_dir>/lock for its whole life; the file says its pid.
// The kernel drops the lock when the process ends, however it ends (SIGKILL included), so a
// lock file left behind never blocks the next start.
#pragma once

#include <optional>
#include <string>

#include "nfs/vfs/unique_fd.h"

namespace nfsrdmad::vfs {

inline constexpr const char* kStateLockFile = "lock";

class StateDirLock {
  public:
    // Takes the lock, or says who holds it ("in use by another nfsrdmad, pid 1234") or what
    // failed. `dir` must exist (make_state_dir).
    static std::optional<StateDirLock> acquire(const std::string& dir, std::string* why);

  private:
    explicit StateDirLock(UniqueFd fd) : fd_(std::move(fd)) {}
    UniqueFd fd_;
};

}  // namespace nfsrdmad::vfs
