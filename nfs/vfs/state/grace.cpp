#include "nfs/vfs/state/grace.h"

#include <utility>

namespace nfsrdmad::vfs::state {

Grace::Grace(Clock::time_point now, Clock::duration period, Known known)
    : deadline_(now + period),
      limit_(now + 2 * period),
      nlm_hosts_(known.nlm_hosts),
      started_(!known.nfs4_clients.empty() || known.nlm_hosts > 0),
      pending_(std::make_move_iterator(known.nfs4_clients.begin()),
               std::make_move_iterator(known.nfs4_clients.end())) {}

// Both ways out are permanent: time only moves on, a completed client stays so, and a
// reclaim is only noted while grace is active (so an extension never starts again).
bool Grace::active_locked(Clock::time_point now) const {
    if (!started_) return false;
    if (nlm_hosts_ == 0 && pending_.empty()) return false;
    if (now < deadline_) return true;
    return last_reclaim_ && now < limit_ && now - *last_reclaim_ < std::chrono::seconds(1);
}

void Grace::reclaimed(Clock::time_point now) {
    std::lock_guard lock(mu_);
    if (active_locked(now) && (!last_reclaim_ || *last_reclaim_ < now)) last_reclaim_ = now;
}

bool Grace::in_grace(Clock::time_point now) const {
    std::lock_guard lock(mu_);
    return active_locked(now);
}

bool Grace::may_reclaim(const std::string& client, Clock::time_point now) const {
    std::lock_guard lock(mu_);
    return active_locked(now) && pending_.count(client) != 0;
}

Grace::Completion Grace::reclaim_complete(const std::string& client) {
    std::lock_guard lock(mu_);
    if (completed_.count(client)) return Completion::Already;
    auto it = pending_.find(client);
    if (it == pending_.end()) return Completion::Unknown;
    completed_.insert(std::move(pending_.extract(it).value()));
    return Completion::Counted;
}

size_t Grace::pending_clients() const {
    std::lock_guard lock(mu_);
    return pending_.size();
}

}  // namespace nfsrdmad::vfs::state
