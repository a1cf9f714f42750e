// services.h — what every NLM procedure shares: one per daemon, owned by NlmProgram.
//
// The lock table (and the OFD budget that mirrors its locks onto the files) is the one
// NFSv4.1 uses (nfs/vfs/state/lock_table.h), so a lock taken by either protocol
// conflicts with the other's; the share table is NLM's SHARE/UNSHARE. The grace period
// after a restart is NFSv4.1's (nfs/v4/recovery.h): during it only reclaims are let in.
// Hosts (hosts.h) live as long as the daemon; nothing is tied to a connection.
#pragma once

#include <atomic>
#include <functional>
#include <map>
#include <memory>
#include <mutex>

#include "nfs/nlm/blocked.h"
#include "nfs/nlm/hosts.h"
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
    // A host took a lock with NSM monitoring (LOCK, not NM_LOCK): its address is
    // recorded (once; fsync'd) so that it is notified if this server restarts, and the
    // first time statd is asked to watch it (nsm_monitor.h) so that its reboot frees its
    // locks (nsm_rebooted).
    void monitor(const rpc::Peer* peer, std::string_view caller_name);
    // statd says `mon_name` rebooted: everything it held goes (as FREE_ALL).
    void nsm_rebooted(std::string_view mon_name);
    // The id of host `name` (HostTable::id), forgetting idle hosts when full.
    std::optional<uint64_t> host_id(std::string_view name, std::string_view address = {});
    // FREE_ALL: everything host `name` holds goes; waiters that became grantable are
    // returned (for GRANTED callbacks).
    std::vector<vfs::state::Waiter> free_all(std::string_view name);

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
    bool settle_grant(const std::string& key);
    // CANCEL: the owner no longer waits for `lock`; a grant of it still pending goes.
    void cancel(const vfs::Node& node, const vs::FileKey& file, const vs::StateOwner& owner,
                const vs::Lock& lock);

  private:
    void retry(Blocked b);
    void send_granted(const Blocked& b);
    void granted_reply(const Blocked& b, const rpc::CallbackResult& r);
    void release(const Blocked& b);  // unlock a granted request's range, wake the next
    std::atomic<rpc::CallbackSender*> callbacks_{nullptr};
    std::atomic<bool> grace_over_{false};
    std::mutex grants_mu_;
    std::map<std::string, vs::ClientKey> pending_grants_;
};

}  // namespace nfsrdmad::nfs::nlm
