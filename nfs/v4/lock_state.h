// lock_state.h — what a lock stateid stands for (RFC 8881 §8.2, §9.4, §18.10): the
// client, the lock owner, the file, and the open stateid the first LOCK came through
// (open_to_lock_owner4). The locks themselves are in the shared byte-range lock table
// (nfs/vfs/state/lock_table.h), keyed by the same owner and file.
//
// Owner and lifetime: Services. A lock stateid lives from the first LOCK of (client,
// lock owner, file) until FREE_STATEID, the CLOSE of its open (only when it holds no
// locks: §18.2.3 NFS4ERR_LOCKS_HELD otherwise) or the end of its client
// (Services::forget_client). Its stateid is the client table's.
//
// Thread-safe.
#pragma once

#include <map>
#include <mutex>
#include <optional>
#include <unordered_map>
#include <vector>

#include "nfs/v4/open_state.h"
#include "nfs/vfs/state/lock_table.h"
#include "nfs/vfs/state/state_keys.h"

namespace nfsrdmad::nfs::v4 {

struct LockState {
    state::ClientId client = 0;
    vfs::state::StateOwner owner;  // lock_owner4: the session's clientid + owner bytes
    vfs::state::FileKey file;
    vfs::FileHandle fh;       // the wire handle LOCK came with
    OpenTable::Other open{};  // open_to_lock_owner4.open_stateid.other
    state::Stateid stateid;
};

class LockStateTable {
  public:
    using Other = OpenTable::Other;

    std::optional<LockState> find(const Other& other) const;
    // The lock stateid of this owner on this file, if there is one.
    std::optional<LockState> find_owner(const vfs::state::StateOwner& owner,
                                        const vfs::state::FileKey& file) const;
    // Every lock stateid that came through this open.
    std::vector<LockState> of_open(const Other& open) const;
    // A new lock stateid for s.owner on s.file, unless that pair has one already (two
    // first LOCKs of one owner raced): then nothing changes and the existing one is
    // returned. One lock stateid per (lock owner, file), §8.2.
    std::optional<LockState> insert(const LockState& s);
    // Replaces the record with s.stateid.other (a bumped seqid); false if it is gone.
    bool update(const LockState& s);
    void erase(const Other& other);
    std::vector<LockState> forget_client(state::ClientId client);
    size_t size() const;

  private:
    struct OwnerFile {
        vfs::state::StateOwner owner;
        vfs::state::FileKey file;
        bool operator==(const OwnerFile&) const = default;
    };
    struct OwnerFileHash {
        size_t operator()(const OwnerFile& k) const;
    };
    void erase_locked(std::map<Other, LockState>::iterator it);

    mutable std::mutex mu_;
    std::map<Other, LockState> states_;
    // Indexes of states_ (LOCK looks up by owner and file, CLOSE by open): O(1)/O(log n)
    // instead of a walk over every lock stateid of every client.
    std::unordered_map<OwnerFile, Other, OwnerFileHash> by_owner_;
    std::multimap<Other, Other> by_open_;  // open stateid other -> lock stateid other
};

}  // namespace nfsrdmad::nfs::v4

namespace nfsrdmad::nfs::v4 {

struct Target;

// The lock table's key for the current filehandle's file; BAD_STATEID-free: pseudo
// directories are NFS4ERR_ISDIR (§18.10.4), an undecodable handle BADHANDLE.
x4::nfsstat4 lock_file_key(const Target& t, vfs::state::FileKey& out);
// READ_LT / READW_LT -> Read, WRITE_LT / WRITEW_LT -> Write; INVAL for anything else.
x4::nfsstat4 lock_type_of(x4::nfs_lock_type4 t, vfs::state::LockType& out);
// offset/length -> range, to the letter of §18.10.3: length 0, or length not all ones
// with offset + length > 2^64-1, is NFS4ERR_INVAL (as Linux nfsd checks it). Stricter by
// one byte than ByteRange::from_nfs4, which lets a range end on byte 2^64-1.
x4::nfsstat4 lock_range_of(uint64_t offset, uint64_t length, vfs::state::ByteRange& out);
// LOCK4denied for a conflict: the holder's clientid and owner bytes (none for a holder
// outside the table), its range and type. `c` must outlive the result (owner bytes).
x4::LOCK4denied denied_of(const vfs::state::Conflict& c);

}  // namespace nfsrdmad::nfs::v4
