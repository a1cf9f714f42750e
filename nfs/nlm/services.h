// services.h — what every NLM procedure shares: one per daemon, owned by NlmProgram.
//
// The lock table (and the OFD budget that mirrors its locks onto the files) is the one
// NFSv4.1 uses (nfs/vfs/state/lock_table.h), so a lock taken by either protocol
// conflicts with the other's; the share table is NLM's SHARE/UNSHARE. The grace period
// after a restart is NFSv4.1's (nfs/v4/recovery.h): during it only reclaims are let in.
// Hosts (hosts.h) live as long as the daemon; nothing is tied to a connection.
#pragma once

#include <atomic>
#include <chrono>
#include <functional>
#include <map>
#include <memory>
#include <mutex>

#include "nfs/common/delegation_breaker.h"
#include "nfs/nlm/blocked.h"
#include "nfs/nlm/hosts.h"
#include "nfs/nlm/nsm_notify.h"
#include "nfs/vfs/export.h"
#include "nfs/vfs/recovery_store.h"
#include "nfs/vfs/state/lock_table.h"
#include "nfs/vfs/state/ofd_mirror.h"
#include "nfs/vfs/state/share_table.h"
#include "transport/rpc/call.h"
#include "transport/rpc/callback.h"

namespace nfsrdmad::nfs::nlm {

struct Options {
    std::shared_ptr<vfs::state::LockTable> locks;  // null: a table of NLM's own
    // Granted locks mirrored to the files as OFD locks (ofd_mirror.h). Null: not mirrored.
    std::shared_ptr<vfs::state::OfdBudget> lock_files;
    // True while the server is in its grace period. Null: never.
    std::function<bool()> in_grace;
    size_t max_hosts = 4096;
    size_t max_blocked = 16384;  // blocked LOCK requests kept for GRANTED (blocked.h)
    // Where the addresses of hosts holding monitored locks are recorded, for NSM's
    // notification after a restart (nsm_notify.h). Null: not recorded.
    std::shared_ptr<vfs::RecoveryStore> hosts_store;
    // NFSv4.1's state, as the daemon wires it in (null: none). foreign_shares: true when
    // an NFSv4.1 open's share reservation conflicts with this access and deny (expired
    // clients in the way are reaped first), so NLM SHARE is DENIED. reap_lock_holder: the
    // holder of a conflicting lock is an NFSv4.1 client whose lease has expired and it was
    // reaped: the request runs again (RFC 8881 §8.4.3, as NFSv4.1's LOCK does).
    std::function<bool(const vfs::FileHandle&, uint8_t access, uint8_t deny)> foreign_shares;
    // Held from SHARE's check of NFSv4.1's opens to its record, as NFSv4.1's OPEN holds it
    // from its check to its record: the two cannot both pass and both be recorded.
    std::function<std::unique_lock<std::mutex>(const vfs::FileHandle&)> share_admission;
    std::function<bool(const vfs::state::Conflict&)> reap_lock_holder;
    // NFSv4.1's delegations: an NFSv4.1 client that holds one keeps its locks to itself
    // (the Linux client caches them), so a LOCK, TEST or SHARE of the file recalls it first
    // and is answered NLM4_DENIED_GRACE_PERIOD meanwhile (the client asks again).
    std::shared_ptr<DelegationBreaker> delegations;
};

class Services {
  public:
    Services(std::shared_ptr<vfs::ExportRegistry> exports, const Options& o);

    const Options options;
    std::shared_ptr<vfs::ExportRegistry> exports;
    const std::shared_ptr<vfs::state::LockTable> lock_table;
    vfs::state::LockTable& locks;
    vfs::state::ShareTable shares;
    HostTable hosts;
    BlockedTable blocked;

    // The grace period; the first time it is found over, the previous boot's hosts that
    // did not come back are dropped from the record.
    bool in_grace();
    // A host (`caller_name` at the peer's address) took a lock with NSM monitoring (LOCK,
    // not NM_LOCK): its address is recorded (once; fsync'd) so that it is notified if this
    // server restarts, and the first time statd is asked to watch the address
    // (nsm_monitor.h; HostTable::watch_of) so that its reboot frees its locks
    // (nsm_rebooted). `state` is the host's NSM state its LOCK gave.
    void monitor(const rpc::Peer* peer, std::string_view caller_name, int32_t state);
    // NFSv4.1's OPEN asks this: does an NLM share of `fh` conflict with this access and
    // deny (fsh4_access / fsh4_mode use the same bits as OPEN4_SHARE_*)?
    bool share_conflict(const vfs::FileHandle& fh, uint32_t access, uint32_t deny) const;
    // The lock table, with NFSv4.1 courtesy clients in the way reaped (up to
    // kMaxCourtesyReaps per request, as NFSv4.1's LOCK): lock(), test().
    static constexpr size_t kMaxCourtesyReaps = 16;
    vfs::Result<vs::LockReply> lock(const vs::FileKey& file, const vs::StateOwner& owner,
                                    const vs::Lock& want, std::optional<uint64_t> wait,
                                    vs::LockMirror* mirror);
    vfs::Result<std::optional<vs::Conflict>> test(const vs::FileKey& file,
                                                  const vs::StateOwner& owner, const vs::Lock& want,
                                                  vs::LockMirror* mirror);
    // A monitored LOCK from `caller_name` at `address` at NSM state `state`: a state
    // other than the one its earlier locks came with means the host rebooted since
    // (statd's word may come later, or never): what it held before goes, as a reboot
    // notice would free it.
    void check_state(std::string_view caller_name, std::string_view address, int32_t state);
    // statd says `mon_name` (an address, or a name: HostTable::watch_of) rebooted and is at NSM
    // state `state` now: everything each host there held goes (as FREE_ALL), unless its
    // locks were taken at that very state already (it came back and reclaimed before
    // statd's word arrived; as Linux's lockd decides).
    void nsm_rebooted(std::string_view mon_name, int32_t state);
    // The id of host `name` at `address` (HostTable::id: pinned until unpinned),
    // forgetting idle hosts when full.
    std::optional<uint64_t> host_id(std::string_view name, std::string_view address);
    // FREE_ALL: everything host `name` at `address` holds goes; waiters that became
    // grantable are returned (for GRANTED callbacks).
    std::vector<vfs::state::Waiter> free_all(std::string_view name, std::string_view address);

    // Where NLM4_GRANTED goes out (the daemon's TCP callback client). Null: nowhere; a
    // blocked client then learns of its lock when its lockd re-sends the LOCK.
    void set_callbacks(rpc::CallbackSender* c) { callbacks_.store(c); }
    rpc::CallbackSender* callbacks() const { return callbacks_.load(); }
    // Waiters the lock table woke, from either protocol's unlock: each NLM one is retried
    // for its owner; when granted, the client is told (GRANTED, granted.cpp). NFSv4.1
    // waiters are left alone (those clients poll, RFC 8881 §9.6).
    void wake(std::vector<vfs::state::Waiter> woken);
    // A grant sent (GRANTED) and not yet settled, by BlockedTable::key. Settling it (the
    // owner's LOCK re-send found the lock, the GRANTED reply came, CANCEL) says whether it
    // was still pending: a refused GRANTED or a CANCEL releases the lock only then, never
    // one the client was told it holds.
    // What the owner held in the granted range before (an upgrade's read locks), when
    // the grant was still pending; nullopt when it was not.
    std::optional<vs::OwnerLocks> settle_grant(const std::string& key);
    // CANCEL: the owner no longer waits for `lock`; a grant of it still pending goes.
    void cancel(const vfs::Node& node, const vs::FileKey& file, const vs::StateOwner& owner,
                const vs::Lock& lock);

    // SM_NOTIFY owed to the previous boot's hosts (nsm_notify.h), sent again by
    // housekeep() until each answers or is given up on.
    void set_reboot_notices(std::unique_ptr<RebootNotices> n);
    size_t reboot_notices_pending() const;

    // A host that holds nothing for this long is forgotten: statd stops watching it
    // (SM_UNMON) and its record for notification after a restart goes (knfsd's lockd
    // collects its idle hosts after NLM_HOST_EXPIRE, 300 s, too).
    static constexpr std::chrono::seconds kHostExpire{300};
    using Clock = std::chrono::steady_clock;
    // The daemon's periodic upkeep (on a worker, never a reactor): reboot notices due,
    // idle hosts forgotten. Returns when to come back.
    std::chrono::milliseconds housekeep(Clock::time_point now = Clock::now());

  private:
    bool host_idle(uint64_t id) const;
    void retry(Blocked b);
    void send_granted(const Blocked& b, vs::OwnerLocks before);
    void granted_reply(const Blocked& b, const rpc::CallbackResult& r);
    void release(const Blocked& b, const vs::OwnerLocks& before);  // undo a refused grant
    // Undoes a grant of `lock` to `owner`: bytes of its range the owner held before keep
    // their earlier type (a refused upgrade goes back to the read lock, not to nothing),
    // the rest is unlocked; whoever waits next is woken.
    void undo_grant(const vfs::Node& node, const vs::FileKey& file, const vs::StateOwner& owner,
                    const vs::Lock& lock, const vs::OwnerLocks& held_before);
    std::atomic<rpc::CallbackSender*> callbacks_{nullptr};
    std::atomic<bool> grace_over_{false};
    std::mutex grants_mu_;
    struct PendingGrant {
        vs::ClientKey client;
        vs::OwnerLocks before;  // the owner's locks in the range before the grant
    };
    std::map<std::string, PendingGrant> pending_grants_;
    // Orders the record's add (monitor) against the sweep's check-then-remove, so a host
    // that locks again while it is being swept stays recorded.
    std::mutex store_mu_;
    void unrecord(const std::string& address);  // drops it unless a known host uses it
    mutable std::mutex notices_mu_;
    std::unique_ptr<RebootNotices> notices_;
    // This boot's NSM state once reboot notices went out (0: none sent): a reboot notice
    // at that state is ours, echoed back (nsm_rebooted).
    std::atomic<int32_t> own_state_{0};
};

}  // namespace nfsrdmad::nfs::nlm
