// grace.h — the grace period after a restart, one object both protocols consult.
//
// RFC 8881 §8.4.2 / §8.4.2.1 (server failure and recovery), §8.6.3, §18.51
// (RECLAIM_COMPLETE); XNFS NLM v4 grace period (only reclaim requests during it,
// nlm4_denied_grace_period otherwise).
//
// There is a grace period only if the previous boot left known clients in the state
// directory: NFSv4.1 client records (the caller loads them and passes their names, e.g.
// the co_ownerid each client presents in EXCHANGE_ID) and NLM hosts NSM will notify.
// It lasts `period`, and ends earlier once every known NFSv4.1 client has sent
// RECLAIM_COMPLETE — but only if no NLM host is known: NLM has no such signal, so an
// NLM client counts as done at the end of the period only. A client still reclaiming
// when the period runs out keeps it going (as knfsd does): past the deadline grace lasts
// while an NFSv4.1 reclaim came in the last second (reclaimed()), at most one more
// period in all.
//
// While in grace: new (non-reclaim) LOCK/OPEN are refused (NFS4ERR_GRACE,
// nlm4_denied_grace_period); an NFSv4.1 client may reclaim if it is known and has not
// sent RECLAIM_COMPLETE yet (otherwise NFS4ERR_NO_GRACE); any NLM host may reclaim.
//
// Pure: the caller passes the time (steady_clock), nothing runs in the background.
// Thread-safe.
#pragma once

#include <chrono>
#include <cstddef>
#include <mutex>
#include <optional>
#include <string>
#include <unordered_set>
#include <vector>

namespace nfsrdmad::vfs::state {

class Grace {
  public:
    using Clock = std::chrono::steady_clock;

    struct Known {
        std::vector<std::string> nfs4_clients;  // records of the previous boot
        size_t nlm_hosts = 0;                   // hosts monitored by the previous boot
    };

    Grace(Clock::time_point now, Clock::duration period, Known known);
    Grace(const Grace&) = delete;
    Grace& operator=(const Grace&) = delete;

    bool in_grace(Clock::time_point now) const;
    // NFSv4.1 reclaim (claim CLAIM_PREVIOUS, LOCK reclaim = true) by this client.
    bool may_reclaim(const std::string& client, Clock::time_point now) const;
    // NLM reclaim (nlm4_lockargs.reclaim): any host, for the whole period.
    bool may_reclaim_nlm(Clock::time_point now) const { return in_grace(now); }

    // An NFSv4.1 reclaim was let in at `now` (may_reclaim was true): near the deadline
    // it extends grace by a second, up to one more period. Ignored out of grace.
    void reclaimed(Clock::time_point now);

    enum class Completion { Counted, Already, Unknown };
    // RECLAIM_COMPLETE (rca_one_fs = false) from this client. Already: a second time
    // (NFS4ERR_COMPLETE_ALREADY); Unknown: not a client of the previous boot, so grace
    // never waited for it (the protocol layer still tracks its own per-client flag).
    Completion reclaim_complete(const std::string& client);

    Clock::time_point deadline() const { return deadline_; }  // without extension
    size_t pending_clients() const;  // known NFSv4.1 clients still reclaiming

  private:
    bool active_locked(Clock::time_point now) const;

    const Clock::time_point deadline_;
    const Clock::time_point limit_;  // deadline_ + period: no extension past it
    const size_t nlm_hosts_;
    const bool started_;
    mutable std::mutex mu_;
    std::unordered_set<std::string> pending_;
    std::unordered_set<std::string> completed_;
    std::optional<Clock::time_point> last_reclaim_;
};

}  // namespace nfsrdmad::vfs::state
