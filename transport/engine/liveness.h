// liveness.h — are the reactors still turning?
//
// A reactor that blocks (a handler stuck in a syscall, a livelock) stops every connection
// it owns, while the process looks alive. The daemon's watchdog (daemon/service_manager.h)
// asks in rounds: each round it posts one small task to every reactor, and a reactor that
// has not run its task by the next round is stalled. Only the watchdog thread calls
// next_round(); the tasks it posts run on the reactors.
#pragma once

#include <atomic>
#include <cstddef>
#include <cstdint>
#include <memory>
#include <vector>

namespace nfsrdmad::engine {

class ReactorGroup;

class Liveness {
  public:
    explicit Liveness(size_t reactors);

    // Closes the running round and opens the next one; returns the reactors that did not
    // answer the round just closed (empty: all of them turn). The first call closes
    // nothing. Then posts to every reactor of the group the task that answers the new round.
    std::vector<size_t> next_round(ReactorGroup& reactors);

  private:
    uint64_t round_ = 0;  // the watchdog thread's only
    // Per reactor, the last round it answered. Shared with the posted tasks: a stalled
    // reactor may run them after this object is gone.
    std::shared_ptr<std::atomic<uint64_t>[]> answered_;
    size_t size_;
};

}  // namespace nfsrdmad::engine
