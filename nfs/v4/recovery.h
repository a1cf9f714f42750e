// recovery.h — NFSv4.1 across a server restart (RFC 8881 §8.4.2): which clients had
// state (the recovery store, nfs/vfs/recovery_store.h), the grace period that lets
// them reclaim it (the grace object NLM will share, nfs/vfs/state/grace.h), and the
// answers operations give while it lasts:
//
//   reclaim (OPEN CLAIM_PREVIOUS, LOCK reclaim)   allowed for a client of the previous
//       boot that has not sent RECLAIM_COMPLETE, during grace; NFS4ERR_NO_GRACE otherwise
//       (§15.1.9.2)
//   a new open, lock, LOCKT, REMOVE, RENAME        NFS4ERR_GRACE during grace (§8.4.2.1,
//       §15.1.9.1: nothing may take what a returning client is about to reclaim)
//
// Grace lasts one grace period (the lease time) after a boot that found recorded clients,
// and ends early once each of them has sent RECLAIM_COMPLETE; a client still reclaiming
// at its end stretches it a second at a time, up to one more period (grace.h). Without a store (tests,
// or no state directory) nothing is recorded and there is never a grace period.
//
// Owner: Services. Thread-safe.
#pragma once

#include <atomic>
#include <chrono>
#include <memory>
#include <string>

#include "nfs/v4/state/types.h"
#include "nfs/vfs/recovery_store.h"
#include "nfs/vfs/state/grace.h"
#include "xdr/nfs4_prot.h"

namespace nfsrdmad::nfs::v4 {

namespace x4 = xdr::nfs4;

class Recovery {
  public:
    // `nlm_hosts`: NLM hosts of the previous boot (they reclaim in the same grace period,
    // which then runs its whole length: NLM has no RECLAIM_COMPLETE).
    Recovery(std::shared_ptr<vfs::RecoveryStore> store, const state::Clock& clock,
             std::chrono::steady_clock::duration period, size_t nlm_hosts = 0);

    bool in_grace();
    // OPEN CLAIM_PREVIOUS / LOCK reclaim by the client with this owner: NFS4_OK or
    // NFS4ERR_NO_GRACE. `reclaim_done`: the client sent RECLAIM_COMPLETE already.
    x4::nfsstat4 may_reclaim(const std::string& owner, bool reclaim_done);
    // A non-reclaim operation that could take reclaimable state: NFS4_OK or NFS4ERR_GRACE.
    x4::nfsstat4 may_change();

    // The client ID of this owner was confirmed (CREATE_SESSION): recorded before the
    // reply. False when the record could not be written (the caller answers
    // NFS4ERR_SERVERFAULT: the client could not recover after a restart).
    bool confirmed(const std::string& owner);
    void destroyed(const std::string& owner);  // DESTROY_CLIENTID, lease reaping
    void reclaim_complete(const std::string& owner);

    size_t previous_clients() const;
    uint32_t epoch() const { return store_ ? store_->epoch() : 0; }  // 0: none kept
    std::chrono::steady_clock::time_point deadline() const { return grace_->deadline(); }

  private:
    std::shared_ptr<vfs::RecoveryStore> store_;
    const state::Clock& clock_;
    std::unique_ptr<vfs::state::Grace> grace_;
    std::atomic<bool> over_{false};
};

}  // namespace nfsrdmad::nfs::v4
