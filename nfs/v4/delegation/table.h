// table.h — the delegations this server has handed out (RFC 8881 §10.2) and what it takes
// to get them back (§10.4 recall, §10.2.1 revocation).
//
// A read delegation lets a client cache a file and open it for reading on its own; a
// write delegation lets it open for reading and writing and keep writes back. Another
// party's access that the holder could not see conflicts (§10.4.1):
//
//                       read delegation          write delegation
//   read, getattr       no conflict              conflict
//   write, setattr,     conflict                 conflict
//   remove, rename,
//   link, a deny
//
// A conflict starts a recall once per delegation (CB_RECALL) and answers "later"
// (NFS4ERR_DELAY, NFS3ERR_JUKEBOX) until the holder returns it (DELEGRETURN) or loses it:
// revocation after a lease period without the return (§10.4.6: "the server may revoke
// the delegation" when the client does not return it; knfsd waits one lease).
//
// Policy: no delegation on a file that saw a conflict in the last kCooldown (a file
// shared for writing would be granted and recalled over and over), and none beyond
// max_total in all.
//
// Owner: Services. Thread-safe (one mutex; nothing slow under it). A delegation lives
// from OPEN's grant until DELEGRETURN, its revocation, or the client's end; its stateid
// is the client table's (kind Delegation), which outlives a revoked delegation until
// FREE_STATEID.
#pragma once

#include <array>
#include <atomic>
#include <chrono>
#include <cstdint>
#include <map>
#include <memory>
#include <mutex>
#include <optional>
#include <string>
#include <unordered_map>
#include <vector>

#include "nfs/common/authorize.h"
#include "nfs/v4/state/stateid.h"
#include "nfs/v4/state/types.h"
#include "nfs/vfs/fd_cache.h"
#include "nfs/vfs/file_watch.h"
#include "nfs/vfs/handle.h"
#include "nfs/vfs/lease.h"

namespace nfsrdmad::nfs::v4 {

struct Delegation {
    state::ClientId client = 0;
    vfs::FileHandle file;
    bool write = false;  // OPEN_DELEGATE_WRITE, else READ
    state::Stateid stateid;
    std::shared_ptr<const vfs::OpenFile> fd;  // I/O through the delegation stateid
    Caller who;                               // whose OPEN it came with
    std::optional<state::Time> recalled;      // when its recall began
    // Its file lease (nfs/vfs/lease.h): a local writer recalls a read delegation, any
    // local open a write one.
    std::shared_ptr<vfs::Lease> lease;
    // Its file's fanotify mark (nfs/vfs/file_watch.h): a local chmod, chown, utimes,
    // link, unlink or rename recalls it. Null: the daemon has no watch.
    std::shared_ptr<vfs::FileWatch::Mark> watch;
    // A write delegation's CB_GETATTR record (§10.4.3): the change attribute the holder
    // answers while it holds no changes ("sc": the file's at the grant; for a delegation
    // reclaimed after a restart, the holder's first answer, since the client keeps its
    // value from before); whether the last answer said it holds changes; a CB_GETATTR out
    // since; the last answer's size, and when it came.
    std::optional<uint64_t> change;
    bool modified = false;
    std::optional<state::Time> asked, answered;
    uint64_t size = 0;
};

class DelegationTable {
  public:
    using Other = std::array<uint8_t, 12>;
    static constexpr std::chrono::seconds kCooldown{30};

    explicit DelegationTable(size_t max_total = 65536) : max_(max_total) {}

    // Whether `client` may be granted a delegation of that kind on `file` now: the table has
    // room, no recent conflict, the client holds none on it yet, and no other client's
    // delegation is in the way (another's read delegation stops a write one; a write one
    // stops all). Opens of other clients are OPEN's to check.
    bool may_grant(const vfs::FileHandle& file, state::ClientId client, bool write,
                   state::Time now) const;
    void put(Delegation d);  // d.stateid.other new
    std::optional<Delegation> find(const Other& other) const;
    std::optional<Delegation> erase(const Other& other);

    struct Conflict {
        bool blocked = false;               // a delegation stands in the way
        std::vector<Delegation> to_recall;  // those whose recall starts now
    };
    // §10.4.3: another party's GETATTR of `file` where a write delegation of another
    // client is out. None: no such delegation (the server's attributes are the truth).
    // Answer: the holder's CB_GETATTR answer of the last `fresh` (size, and modified).
    // Ask: none fresh and none asked: the caller sends CB_GETATTR for `d` (marked asked
    // at `now`) and answers "later". Wait: asked already, or being recalled: "later".
    struct AttrQuery {
        enum Kind { None, Ask, Wait, Answer } kind = None;
        Delegation d;
    };
    AttrQuery query_attrs(const vfs::FileHandle& file, state::ClientId by, state::Time now,
                          std::chrono::steady_clock::duration fresh);
    // The holder's CB_GETATTR answer at `now`: whether it holds changes, its size; its
    // change attribute `cc` becomes the delegation's baseline when it has none. nullopt:
    // the delegation is gone.
    std::optional<Delegation> answered(const Other& other, bool modified, uint64_t size,
                                       uint64_t cc, state::Time now);
    // A CB_GETATTR that failed: the delegation is marked recalled at `now` and returned
    // unless it was already (the caller recalls it instead, §10.4.3: "the server MAY simply
    // recall the delegation").
    std::optional<Delegation> recall(const Other& other, state::Time now);
    // How many delegations each client holds that are not being recalled (CB_RECALL_ANY).
    std::vector<std::pair<state::ClientId, size_t>> holders() const;
    size_t max() const { return max_; }

    // An access to `file` by `by` (0: not an NFSv4.1 client) that reads (write false) or
    // changes it: the delegations of other clients it conflicts with (see the table above).
    // Those not being recalled yet are marked recalled at `now` and returned to recall; the
    // file starts its cooldown.
    Conflict conflict(const vfs::FileHandle& file, state::ClientId by, bool write, state::Time now);
    // The delegation whose lease is on descriptor `fd`, marked recalled at `now` unless it
    // was (a lease break: a local process wants the file). nullopt: none, or its recall
    // is under way already.
    std::optional<Delegation> recall_lease(int fd, state::Time now);
    // Those whose lease is breaking (SIGIO: the signal queue overflowed), marked recalled.
    std::vector<Delegation> recall_breaking_leases(state::Time now);
    // Delegations recalled before `deadline` and still held: taken out of the table, to be
    // revoked.
    std::vector<Delegation> overdue(state::Time deadline);
    // Whether any recall is outstanding.
    bool recalling() const;
    // Whether a write delegation of `file` is held (cheap when none is).
    bool write_delegated(const vfs::FileHandle& file) const;
    // The delegation `client` holds of `file`, if any: true for a write delegation.
    std::optional<bool> held_by(const vfs::FileHandle& file, state::ClientId client) const;
    std::vector<Delegation> forget_client(state::ClientId client);
    // Delegations of files removed since they were granted (a link count of 0 on the
    // delegation's descriptor: a local `rm` on the server, which a file lease does not see),
    // taken out: the client's, the file's, or the next `n` of the table's in turn (a sweep
    // that visits each in time without asking the file system for all at once). The file
    // system is asked outside the mutex.
    std::vector<Delegation> forget_removed(state::ClientId client);
    std::vector<Delegation> forget_removed(const vfs::FileHandle& file);
    std::vector<Delegation> forget_removed_next(size_t n);
    size_t size() const { return count_.load(std::memory_order_relaxed); }
    bool empty() const { return size() == 0; }
    size_t writes() const;

  private:
    using FileKey = std::string;
    static FileKey key_of(const vfs::FileHandle& f);
    void forget_cooldowns(state::Time now);  // mu_ held
    // Takes out the delegations `pred` picks (mu_ not held).
    template <class Pred>
    std::vector<Delegation> erase_where(Pred&& pred);
    // Of these delegations and their descriptors, takes out those whose file is removed.
    using Held = std::vector<std::pair<Other, std::shared_ptr<const vfs::OpenFile>>>;
    std::vector<Delegation> erase_removed(const Held& held);

    const size_t max_;
    mutable std::mutex mu_;
    std::map<Other, Delegation> by_id_;
    std::unordered_map<FileKey, std::vector<Other>> by_file_;
    std::unordered_map<FileKey, state::Time> conflicted_;  // file → last conflict
    std::unordered_map<int, Other> by_lease_;              // lease descriptor → delegation
    Other removed_cursor_{};  // forget_removed_next() goes on after this one
    // Marks d recalled at `now` (mu_ held): true if it was not yet.
    bool mark_recalled(Delegation& d, state::Time now);
    size_t recalling_ = 0, writes_ = 0;
    std::atomic<size_t> count_{0};
};

}  // namespace nfsrdmad::nfs::v4
