// services.h — what every NFSv4.1 operation shares: one per daemon, owned by Nfs4Program.
//
// Lifetimes: the export table is a snapshot per COMPOUND (a reload replaces it between
// calls); the pseudo file system is rebuilt from a snapshot the first time a COMPOUND
// sees a new one; the client table (clients, sessions, stateids) lives as long as the
// daemon and is never tied to a connection (RFC 8881 §2.10.3: connections come and go,
// sessions stay until destroyed or their lease expires).
#pragma once

#include <atomic>
#include <chrono>
#include <cstddef>
#include <cstdint>
#include <functional>
#include <map>
#include <memory>
#include <mutex>
#include <optional>
#include <string>
#include <unordered_map>
#include <vector>

#include "nfs/v4/callback/path.h"
#include "nfs/v4/delegation/table.h"
#include "nfs/v4/id_map.h"
#include "nfs/v4/lock_state.h"
#include "nfs/v4/open_state.h"
#include "nfs/v4/pseudo_fs.h"
#include "nfs/v4/recovery.h"
#include "nfs/v4/state/client_table.h"
#include "nfs/vfs/export.h"
#include "nfs/vfs/fd_cache.h"
#include "nfs/vfs/state/lock_table.h"
#include "nfs/vfs/state/ofd_mirror.h"

namespace nfsrdmad::nfs::v4 {

struct Options {
    state::Limits limits;                // leases, bounds, channel limits
    std::string domain = "localdomain";  // NFSv4 id mapping (RFC 8881 §5.9)
    // Open regular files for I/O, shared with NFSv3 (nfs3_program.h). Null: one of its
    // own, of FdCache::kDefaultCapacity.
    std::shared_ptr<vfs::FdCache> files;
    uint32_t epoch = 0;  // 0: the recovery store's, or the boot time in seconds
    // The lease clock; nullptr: the steady clock. Tests pass one they advance by hand. It
    // must outlive the Services.
    const state::Clock* clock = nullptr;
    // Clients recorded for recovery after a restart, and the grace period (0: the
    // lease time) a boot that finds some gives them (recovery.h). Null: none.
    std::shared_ptr<vfs::RecoveryStore> recovery_store;
    std::chrono::seconds grace_period{0};
    size_t nlm_hosts = 0;  // NLM hosts of the previous boot, reclaiming in the same grace
    // Granted byte-range locks mirrored to the files as OFD locks (ofd_mirror.h), within
    // this budget of descriptors. Null: locks live in the lock table only.
    std::shared_ptr<vfs::state::OfdBudget> lock_files;
    // The byte-range lock table, shared with NLM (nfs/nlm). Null: one of NFSv4.1's own.
    std::shared_ptr<vfs::state::LockTable> lock_table;
    // Waiters an NFSv4.1 unlock made grantable (NLM's blocked locks: it grants them and
    // calls its clients back). Null: dropped (NFSv4.1 clients poll, RFC 8881 §9.6).
    std::function<void(std::vector<vfs::state::Waiter>)> woken;
    // Share reservations of the other protocol (NLM SHARE, XNFS): true when one of them
    // conflicts with this access and deny, so OPEN is NFS4ERR_SHARE_DENIED. Null: none.
    std::function<bool(const vfs::FileHandle&, uint32_t access, uint32_t deny)> foreign_shares;
    // Calls to clients on their own connections (the backchannel, callback/path.h). Null:
    // CREATE_SESSION never grants CONN_BACK_CHAN.
    std::shared_ptr<rpc::BackChannels> back_channels;
    std::chrono::milliseconds callback_timeout{10000};  // a callback unanswered this long fails
    // Delegations (RFC 8881 §10.2) granted on OPEN when the client's callback path is up;
    // write delegations for opens that read and write (the daemon's default is on,
    // config.h; off here, for the tests that build Services themselves). At most
    // max_delegations in all.
    bool delegations = true;
    bool write_delegations = false;
    size_t max_delegations = 65536;
    // Local changes a file lease does not see (vfs/file_watch.h): each delegated file is
    // watched, and file_changed() recalls its delegations. Null: not watched.
    std::shared_ptr<vfs::FileWatch> watch;
    // What held calls up is gone: a delegation's lease was let go (it was returned,
    // revoked, its file or its client gone) or its holder answered CB_GETATTR. Calls put
    // off because of it (NFSv3, NLM, NFSv4.1) run again now rather than at their next
    // timer (rpc/deferred_wakes.h). Null: they wait for their timers.
    std::function<void()> held_calls_freed;
};

class Services {
  public:
    Services(std::shared_ptr<vfs::ExportRegistry> exports, const Options& o);

    const Options options;
    std::shared_ptr<vfs::ExportRegistry> exports;
    std::shared_ptr<vfs::FdCache> file_cache;  // options.files, or one of its own
    vfs::FdCache& files;                       // *file_cache
    state::SteadyClock steady_clock;
    const state::Clock& clock;  // options.clock or steady_clock
    Recovery recovery;
    state::ClientTable clients;
    IdMap ids;
    OpenTable opens;
    const std::shared_ptr<vfs::state::LockTable> lock_table;
    vfs::state::LockTable& locks;  // *lock_table: byte-range locks, shared with NLM
    LockStateTable lock_states;   // lock stateids (lock_state.h)
    CallbackPaths callbacks;      // can the server call each client back (callback/path.h)
    DelegationTable delegations;  // handed out, being recalled (delegation/table.h)

    // The file's descriptor for I/O from the cache (`files`), or while a write delegation's
    // lease is on one, that one: opening the file again would break the lease (vfs/lease.h).
    // `known`: as vfs::FdCache::get.
    vfs::Result<std::shared_ptr<const vfs::OpenFile>> open_file(
        const vfs::Node& node, vfs::OpenFor need, const struct statx* known = nullptr);

    // Delegations (delegation/recall.cpp). OPEN's offer, under the file's admission mutex,
    // after the open is recorded: the delegation granted with it, if any (§10.2, §18.16.3:
    // the client's OPEN4_SHARE_ACCESS_WANT_* bits, the callback path up, no other client
    // opening the file in a conflicting way, the table's policy).
    std::optional<Delegation> offer_delegation(const Open& open, const Target& file,
                                               uint32_t share_access);
    // Whether offer_delegation may give `client` a delegation for an OPEN with `share_access`
    // (delegations on, the client not declining them, its callback path up): OPEN then
    // gives a read-only open a descriptor of its own where the cache's is writable, since
    // the kernel grants no read lease beside a writable description.
    bool may_offer_delegation(state::ClientId client, uint32_t share_access) const;
    // CLAIM_PREVIOUS's delegation of `type` reclaimed with the open after a restart
    // (§10.2.1): granted as offer_delegation would, whatever the client wants; when the
    // callback path is not (being) set up, granted already recalled (`recalled` set: the
    // result's `recall` flag).
    std::optional<Delegation> reclaim_delegation(const Open& open, const Target& file,
                                                 x4::open_delegation_type4 type);
    // An access to `file` by `by` (0: another protocol, or an NFSv4.1 operation with a
    // special stateid from no session's client) that reads (write false) or changes it:
    // true when another client's delegation is in the way, whose recall is then under way
    // (§10.4.1); the caller answers NFS4ERR_DELAY (NFS3ERR_JUKEBOX). Cheap when no
    // delegation is held.
    bool delegation_conflict(const vfs::FileHandle& file, state::ClientId by, bool write);
    // A delegation ended or its holder answered CB_GETATTR (Options::held_calls_freed).
    void held_calls_freed() const {
        if (options.held_calls_freed) options.held_calls_freed();
    }
    // A GETATTR of `file` by `by` (0: NFSv3) beside another client's write delegation
    // (§10.4.3): the holder is asked with CB_GETATTR, not recalled. `delay`: no answer yet
    // (one is on its way): NFS4ERR_DELAY / NFS3ERR_JUKEBOX. `size`: the holder has changes
    // the file does not show: report this size; the file's times were set to now (so the
    // change attribute moved). Neither: the file's own attributes are right.
    struct DelegatedAttrs {
        bool delay = false;
        std::optional<uint64_t> size;
    };
    DelegatedAttrs delegated_attrs(const vfs::FileHandle& file, state::ClientId by);
    // The kernel breaks the lease on descriptor `fd` (vfs/lease.h): a local process wants
    // the file; its delegation is recalled. check_leases(): any lease breaking (SIGIO, the
    // signal queue overflowed). The daemon's signal thread calls them.
    void lease_broken(int fd);
    void check_leases();
    // A local process on the server changed `file`'s attributes, its links or its name
    // (Options::watch; the kernel nfsd recalls before such a change, this daemon learns it
    // just after): its delegations are recalled, or ended with one CB_RECALL when the
    // file is gone (as the sweep ends them). A worker runs it.
    void file_changed(const vfs::FileHandle& file);
    // DELEGRETURN (§18.6) of the client's delegation `sid`; the stateid is freed.
    x4::nfsstat4 return_delegation(state::ClientId client, const state::Stateid& sid);
    // The client's delegations of files removed on the server since (a local `rm`, which a
    // file lease does not see; the kernel nfsd recalls its delegations before such an
    // unlink): they end with their files, stateids freed. How many there were. (The sweep
    // ends everyone's in turn, sweep_delegations.)
    size_t forget_removed_delegations(state::ClientId client);
    // How the recalls went, for the stats line.
    struct DelegationStats {
        std::atomic<uint64_t> granted{0}, recalls{0}, recall_failures{0}, returned{0}, revoked{0},
            getattrs{0}, recall_any{0}, removed{0}, local_changes{0};
    };
    DelegationStats delegation_stats;

    // A client record ended together with its state (reaped, replaced by a new incarnation
    // or a collision, destroyed): drops what the other tables hold for it — its opens, its
    // lock stateids, and its byte-range locks are released. The client table has dropped
    // (or drops) the stateids themselves.
    void forget_client(state::ClientId id);
    // Hands waiters an unlock woke to Options::woken.
    void pass_woken(std::vector<vfs::state::Waiter> w) {
        if (!w.empty() && options.woken) options.woken(std::move(w));
    }

    // Leases (RFC 8881 §8.3, §8.4.3). reap_client(): an expired client's record and
    // sessions and stateids go, then its state (forget_client); false when it is not expired
    // (renewed meanwhile, or a COMPOUND of it still running).
    bool reap_client(state::ClientId id);
    // OPEN's share reservation check (§9.7) with courtesy clients: when every open in
    // conflict belongs to a client whose lease has expired, those clients are reaped and
    // the check runs again; a conflict with a live client is NFS4ERR_SHARE_DENIED and
    // nobody is reaped.
    // NLM's shares (Options::foreign_shares) are checked too.
    x4::nfsstat4 check_share(const vfs::FileHandle& file, uint32_t access, uint32_t deny,
                             const std::optional<OpenTable::Other>& self);
    // The same without NLM's shares: what NLM SHARE asks of NFSv4.1's opens.
    x4::nfsstat4 check_open_shares(const vfs::FileHandle& file, uint32_t access, uint32_t deny,
                                   const std::optional<OpenTable::Other>& self);
    // Byte-range locks with courtesy clients (§8.4.3, as check_share does for opens): a
    // conflict with a lock of an NFSv4.1 client whose lease has expired reaps that client
    // and the request runs again; a live holder (or a local process, or an NLM host) is
    // the answer as is. At most kMaxCourtesyReaps clients go per request. `node` is the
    // file: with Options::lock_files set, the locks are mirrored to it (and a local
    // process's lock in the way is a conflict with no owner).
    // Under a write delegation's lease the mirror works on the leased description
    // (ofd_mirror.h): the holder's locks, which the Linux client sends while it gives the
    // delegation back, are on the file before a local process waiting on the lease goes on.
    static constexpr size_t kMaxCourtesyReaps = 16;
    vfs::Result<vfs::state::LockReply> lock_range(const vfs::Node& node,
                                                  const vfs::state::FileKey& file,
                                                  const vfs::state::StateOwner& owner,
                                                  const vfs::state::Lock& want);
    vfs::Result<std::optional<vfs::state::Conflict>> test_lock_range(
        const vfs::Node& node, const vfs::state::FileKey& file, const vfs::state::StateOwner& owner,
        const vfs::state::Lock& want);
    // Reaps up to `n` courtesy clients (every client whose lease has run out, whether the
    // sweep has seen it yet or not), the longest expired first; how many went.
    size_t reap_oldest_courtesy(size_t n);
    // The lease sweep the daemon's timer runs: expired clients become courtesy clients,
    // stale unconfirmed records go, courtesy clients past Limits::courtesy_leases (or the
    // oldest ones while the client table is more than 3/4 full) are reaped. Returns how long
    // until it wants to run again (between 1 s and one lease).
    std::chrono::milliseconds expire_leases();

    // The pseudo file system over `table` (built once per snapshot).
    std::shared_ptr<const PseudoFs> pseudo_for(const std::shared_ptr<const vfs::ExportTable>& t);

    // The holder of a conflicting lock is an NFSv4.1 client whose lease has expired:
    // it is reaped (true), so the request may run again. NLM asks this too.
    bool reap_lock_holder(const vfs::state::Conflict& c);

  private:
    // The share, lock and table checks of a grant, the lease, the record.
    std::optional<Delegation> grant_delegation(const Open& open, const Target& file, bool write,
                                               bool reclaim);
    void start_recall(const Delegation& d);
    void getattr_done(const DelegationTable::Other& id, const std::optional<CbReply>& reply,
                      const std::string& why);
    // CB_RECALL_ANY (§20.6) to the clients holding the most when the table fills up.
    void recall_any(state::Time now);
    void recall_done(state::ClientId client, const DelegationTable::Other& id,
                     const std::optional<CbReply>& reply, const std::string& why);
    // The sweep's part: recalls unanswered for a lease are revoked; failed ones are
    // tried again; delegations of files removed since are ended (a few each sweep).
    // True while delegations are held (the sweep then runs every second).
    bool sweep_delegations();
    // Delegations of removed files, taken out of the table: their stateids freed, counted;
    // with `recall`, each holder sent one CB_RECALL. How many there were. Callers take
    // them out and end them under removed_mu_, one step: otherwise DESTROY_CLIENTID
    // (forget_removed_delegations) could find one gone from the table while its stateid
    // is still held, and answer NFS4ERR_CLIENTID_BUSY for it.
    size_t end_removed(const std::vector<Delegation>& gone, bool recall);
    std::mutex removed_mu_;

    std::atomic<bool> lease_warned_{false}, watch_warned_{false};
    std::mutex recall_mu_;
    // Delegations whose recall is to be sent again, and when; how often each was sent.
    std::map<DelegationTable::Other, std::pair<state::Time, uint32_t>> recall_retries_;
    // When each client was last sent CB_RECALL_ANY (entries older than kRecallAnyEvery go).
    std::unordered_map<state::ClientId, state::Time> recall_any_sent_;

    std::mutex mu_;
    std::weak_ptr<const vfs::ExportTable> pseudo_table_;
    std::shared_ptr<const PseudoFs> pseudo_;
};

}  // namespace nfsrdmad::nfs::v4
