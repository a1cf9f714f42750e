// lock_table.h — the byte-range lock table NFSv4.1 and NLM share.
//
// RFC 8881 §9 (byte-range locking), §18.10-§18.12 (LOCK, LOCKT, LOCKU), §18.37
// (RELEASE_LOCKOWNER); XNFS NLM v4 (NLM4_LOCK, _TEST, _UNLOCK, _CANCEL, FREE_ALL).
// One table below both protocols: owners of either protocol conflict with each other on
// the same file (FileKey), exactly as owners of one protocol do.
//
// Semantics per owner are POSIX (byte_range.h): an owner never conflicts with itself;
// locking a range it holds replaces the type there (upgrade fails only if another owner
// holds an overlapping lock; downgrade always succeeds); unlocking a sub-range splits.
// A denial names the holder (LOCK4denied, nlm4_holder): its owner — or none, when the
// holder is outside the table (a local process, reported by the mirror) — and its lock.
//
// Bounds (constructor): locks per owner and per client, counted as disjoint ranges after
// merging; waiters per client. Exceeding one fails with ENOLCK and changes nothing
// (NFSv4: NFS4ERR_DENIED or NFS4ERR_RESOURCE; NLM: nlm4_denied_nolocks). An unlock that
// would split a lock past the bound fails the same way.
//
// Blocking locks are not parked threads. A denied lock() may register a waiter (a
// caller-chosen cookie). Every call that frees bytes (unlock, downgrade, release_*)
// returns the waiters that have become grantable, in FIFO order per file, and removes
// them from the queue; the caller retries lock() for each (NLM then sends
// NLM4_GRANTED; an NFSv4.1 client polls, RFC 8881 §9.6). A waiter is woken only when no
// other owner's lock and no earlier waiter of another owner conflicts with it, so later
// waiters never overtake earlier ones. A woken waiter whose retry fails queues again at
// the tail. A waiter denied by a holder outside the table (the mirror's local process)
// is woken by the next change on the file only: local unlocks are not seen, so the
// protocols' own retries (NLM clients re-send blocking locks, NFSv4.1 clients poll)
// cover that case.
//
// The table is the authority. An optional LockMirror (ofd_mirror.h) is told every
// granted change before it is recorded and may veto it with a conflict of its own.
// Each file has one MirrorSlot, which holds the union of every owner's locks there (the
// owners of the table never conflict with each other, so the union is well defined: a
// byte is write-locked by at most one owner, read-locked by any number). Bytes an unlock
// or a release frees are taken off the slot (MirrorSlot::unlock) only where no other
// owner still holds them, and the slot is destroyed with the file's last owner — under
// the file's mutex, so that whatever the slot holds (OFD locks) is gone before another
// party can be granted those bytes. One slot per file, not per owner, so that it can be
// a description that already exists (a write lease's: ofd_mirror.h) and keeps
// the locks when that description's other holder lets go.
//
// Thread-safe: files are spread over shards, each with its own mutex, held across the
// mirror's calls for that file only; counters have their own short-held mutex.
#pragma once

#include <cstddef>
#include <cstdint>
#include <deque>
#include <memory>
#include <optional>
#include <span>
#include <vector>

#include "nfs/vfs/function_ref.h"
#include "nfs/vfs/result.h"
#include "nfs/vfs/state/byte_range.h"
#include "nfs/vfs/state/file_shards.h"
#include "nfs/vfs/state/state_keys.h"

namespace nfsrdmad::vfs::state {

// Whoever holds a lock that is in the way.
struct Conflict {
    std::optional<StateOwner> owner;  // nullopt: a holder outside the table (local process)
    Lock lock;
};

struct Waiter {
    FileKey file;
    StateOwner owner;
    Lock lock;
    uint64_t cookie = 0;  // the caller's, returned as given
};

// A mirror's per-file object (e.g. an open file description), holding the union of
// every owner's locks on the file. Called under the file's mutex.
class MirrorSlot {
  public:
    virtual ~MirrorSlot() = default;
    // No owner holds `range` any more (an unlock or a release, before it is recorded).
    virtual Result<void> unlock(ByteRange range) = 0;
    // `client` holds no more locks on the file.
    virtual void left(const ClientKey& client) = 0;
};

// Applies the table's decisions elsewhere (the file system). Called under the file's
// mutex. Must not block.
class LockMirror {
  public:
    // Before `want` is recorded for `owner`. No other owner of the table holds bytes of
    // want.range that conflict with it, so afterwards the union there is exactly `want`.
    // `slot` is the file's, null until the mirror creates one; `held` lists every
    // owner's locks on the file now (for a mirror that must move them). A conflict (or
    // an error) leaves the table unchanged.
    virtual Result<std::optional<Conflict>> lock(std::unique_ptr<MirrorSlot>& slot,
                                                 const StateOwner& owner,
                                                 FunctionRef<OwnerLocks()> held,
                                                 const Lock& want) = 0;
    // Whether something outside the table would conflict with `want`; slot is the
    // file's, or null if nobody holds a lock there.
    virtual Result<std::optional<Conflict>> test(const MirrorSlot* slot, const Lock& want) = 0;

  protected:
    ~LockMirror() = default;
};

struct LockLimits {
    size_t locks_per_owner = 1024;
    size_t locks_per_client = 8192;
    size_t waiters_per_client = 64;
};

struct LockReply {
    std::optional<Conflict> denied;  // set: not granted
    bool queued = false;             // denied, and a waiter is registered
    std::vector<Waiter> woken;       // a downgrade made these grantable
};

class LockTable {
  public:
    explicit LockTable(LockLimits limits = {});
    ~LockTable();
    LockTable(const LockTable&) = delete;
    LockTable& operator=(const LockTable&) = delete;

    // LOCK / NLM4_LOCK. With wait_cookie, a denial registers a waiter (queued), or
    // refreshes the cookie of the owner's identical waiter keeping its place; when the
    // client's waiter bound is reached it is denied without queueing. A grant removes
    // the owner's identical waiter. Errors: ENOLCK (bounds), the mirror's errors.
    Result<LockReply> lock(const FileKey& file, const StateOwner& owner, const Lock& want,
                           std::optional<uint64_t> wait_cookie = std::nullopt,
                           LockMirror* mirror = nullptr);

    // LOCKT / NLM4_TEST: the conflict lock() would report; changes nothing.
    Result<std::optional<Conflict>> test(const FileKey& file, const StateOwner& owner,
                                         const Lock& want, LockMirror* mirror = nullptr) const;

    // LOCKU / NLM4_UNLOCK. Unlocking bytes not held is not an error. Returns woken waiters.
    // Errors: ENOLCK (the split would pass a bound), the mirror slot's errors.
    Result<std::vector<Waiter>> unlock(const FileKey& file, const StateOwner& owner,
                                       ByteRange range);

    // NLM4_CANCEL: removes the owner's waiter for exactly `lock`; false if none.
    bool cancel_wait(const FileKey& file, const StateOwner& owner, const Lock& lock);

    // Drop locks and waiters; return the waiters this made grantable.
    std::vector<Waiter> release_owner(const FileKey& file, const StateOwner& owner);
    std::vector<Waiter> release_owner(const StateOwner& owner);   // every file
    std::vector<Waiter> release_client(const ClientKey& client);  // lease expiry, FREE_ALL
    std::vector<Waiter> release_file(const FileKey& file);        // locks only

    // Introspection (tests, RELEASE_LOCKOWNER's NFS4ERR_LOCKS_HELD, statistics).
    OwnerLocks locks_of(const FileKey& file, const StateOwner& owner) const;
    size_t lock_count(const StateOwner& owner) const;
    size_t lock_count(const ClientKey& client) const;
    size_t waiter_count(const ClientKey& client) const;
    size_t file_count() const;  // files with any lock or waiter

  private:
    struct OwnerEntry {
        StateOwner owner;
        OwnerLocks locks;
    };
    struct FileState {
        std::vector<OwnerEntry> owners;
        std::deque<Waiter> waiters;        // FIFO
        std::unique_ptr<MirrorSlot> slot;  // while an owner holds locks here
        bool empty() const { return owners.empty() && waiters.empty(); }
    };
    using Shard = FileShards<FileState>::Shard;

    static std::optional<Conflict> table_conflict(const FileState& fs, const StateOwner& owner,
                                                  const Lock& want);
    bool adjust_locks(const StateOwner& owner, ptrdiff_t delta);
    bool adjust_waiters(const ClientKey& client, ptrdiff_t delta);
    bool enqueue(FileState& fs, const FileKey& file, const StateOwner& owner, const Lock& want,
                 uint64_t cookie);
    std::vector<Waiter> wake(FileState& fs);
    // Takes the bytes of `freed` that no owner but `except` holds off the file's mirror
    // slot (if any): before an unlock, or after a release erased the owners it drops.
    static Result<void> unmirror(FileState& fs, std::span<const Lock> freed,
                                 const StateOwner* except);
    // After owner entries of `client` were erased: the slot goes with the file's last
    // owner, and is told when the client has no owner left on the file.
    static void settle(FileState& fs, const ClientKey& client);
    // Drops every owner entry and waiter `pred` selects; returns woken waiters.
    template <class Pred>
    std::vector<Waiter> drop_if(FileState& fs, Pred pred, bool waiters_too);
    template <class Pred>
    std::vector<Waiter> drop_everywhere(Pred pred);

    const LockLimits limits_;
    FileShards<FileState> shards_;

    mutable std::mutex count_mu_;  // after a shard's mutex, never before
    std::unordered_map<StateOwner, size_t, StateOwnerHash> owner_locks_;
    std::unordered_map<ClientKey, size_t, ClientKeyHash> client_locks_;
    std::unordered_map<ClientKey, size_t, ClientKeyHash> client_waiters_;
};

}  // namespace nfsrdmad::vfs::state
