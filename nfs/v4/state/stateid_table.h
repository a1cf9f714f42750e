// The stateids of all clients (RFC 8881 §8.2): allocate, look up, bump, revoke and free the
// open, lock and delegation stateids, with TEST_STATEID (§18.48) and FREE_STATEID (§18.38)
// semantics. Lock and share conflicts live in nfs/vfs/state; this table only names the state.
//
// Owner and lifetime: owned by the ClientTable, which serializes every call under its mutex
// (this class has no lock of its own). An entry lives from allocate() until release(),
// free_stateid() or the owning client's drop_client(); its index is then reused with the next
// generation.
//
// Bounds: max_total entries server-wide and max_per_client per client; allocate() answers
// kTooManyStateids beyond either.
#pragma once

#include <cstddef>
#include <random>
#include <span>
#include <unordered_map>
#include <unordered_set>
#include <vector>

#include "nfs/v4/state/stateid.h"
#include "nfs/v4/state/types.h"

namespace nfsrdmad::nfs::v4::state {

class StateidTable {
  public:
    StateidTable(uint32_t epoch, size_t max_total, size_t max_per_client, uint64_t seed);

    struct Result {
        Status status = x4::NFS4_OK;
        Stateid stateid;  // the current stateid (seqid of the state now)
        StateKind kind = StateKind::Open;
    };

    // A new stateid; its seqid starts at 1 (§8.2.2).
    Result allocate(ClientId client, StateKind kind);

    // The checks of §8.2.4, in its order: a special stateid (§8.2.3) → BAD_STATEID (callers
    // handle the special forms first, see classify()); other boot → BAD_STATEID; unknown
    // index, old generation or another client's → BAD_STATEID; revoked → the reason it was
    // revoked (EXPIRED, ADMIN_REVOKED, DELEG_REVOKED); a kind not in `kinds` → BAD_STATEID;
    // seqid 0 → the current one (§8.2.2); higher than current → BAD_STATEID; lower →
    // OLD_STATEID.
    Result check(ClientId client, const Stateid& s, KindMask kinds) const;

    // check(), then seqid + 1 (0 is skipped on wrap, §8.2.2): the state changed.
    Result bump(ClientId client, const Stateid& s);

    // The state is gone (CLOSE, the last LOCKU, DELEGRETURN): the stateid is freed whatever it
    // holds. Same checks as check().
    Status release(ClientId client, const Stateid& s);

    // FREE_STATEID (§18.38.3): frees a revoked stateid of any kind, or a lock stateid that
    // holds no locks (`holds_locks` comes from the lock table). An open or delegation stateid
    // that is not revoked still holds its open or delegation: NFS4ERR_LOCKS_HELD, as does a lock
    // stateid with locks.
    Status free_stateid(ClientId client, const Stateid& s, bool holds_locks);

    // TEST_STATEID (§18.48.3): one status per stateid, special stateids are BAD_STATEID.
    std::vector<Status> test(ClientId client, std::span<const Stateid> ids) const;

    // Marks the stateid revoked with `reason` (NFS4ERR_EXPIRED, NFS4ERR_ADMIN_REVOKED or
    // NFS4ERR_DELEG_REVOKED; any other reason is NFS4ERR_INVAL): its owner sees that status
    // until it frees it.
    Status revoke(const Stateid& s, Status reason);

    // SEQ4_STATUS_* bits for the client's revoked stateids (§18.46.3).
    uint32_t revoked_flags(ClientId client) const;
    size_t count(ClientId client) const;
    size_t size() const { return used_; }
    void drop_client(ClientId client);

  private:
    struct Entry {
        uint32_t generation = 0;
        bool used = false;
        ClientId client = 0;
        StateKind kind = StateKind::Open;
        uint32_t seqid = 0;
        Status revoked = x4::NFS4_OK;
    };

    Stateid make(uint32_t index) const;
    // Finds the entry a stateid names (STALE/BAD checks), nullptr with `status` set otherwise.
    const Entry* find(ClientId client, const Stateid& s, Status& status, uint32_t* index) const;
    void erase(uint32_t index);
    void count_revoked(const Entry& e, int delta);

    // Per client, how many of its stateids are revoked for each reason (EXPIRED,
    // ADMIN_REVOKED, DELEG_REVOKED): revoked_flags() is O(1) on every SEQUENCE.
    struct Revoked {
        uint32_t expired = 0, admin = 0, deleg = 0;
    };
    std::unordered_map<ClientId, Revoked> revoked_;

    const uint32_t epoch_;
    const size_t max_total_;
    const size_t max_per_client_;
    std::mt19937 rng_;
    std::vector<Entry> entries_;
    std::vector<uint32_t> free_;
    size_t used_ = 0;
    std::unordered_map<ClientId, std::unordered_set<uint32_t>> by_client_;
};

}  // namespace nfsrdmad::nfs::v4::state
