// ofd_mirror.h — byte-range locks made visible to local processes (the thin shell).
//
// The lock table (lock_table.h) decides; this mirror applies every granted change to
// the real file with Linux open file description locks (fcntl(2) F_OFD_SETLK /
// F_OFD_GETLK), so a local process sees an NFS client's lock (as with the kernel nfsd)
// and a local process's lock makes the client's request fail, reported as a conflict
// with a holder outside the table (Conflict::owner empty). Never F_OFD_SETLKW: a
// request never waits for a local process; the protocol's own blocking-lock machinery
// (waiters, client polling) applies.
//
// One open file description per file that holds locks, whoever holds them (NFSv4.1
// owners and NLM hosts alike): it lives in the table's MirrorSlot for that file and holds
// the union of their locks (lock_table.h), since OFD locks of one description never
// conflict with each other and the table keeps its owners from conflicting. It is opened
// on the file's first lock (O_RDONLY for a READ lock, O_RDWR for a WRITE lock; a
// READ-only description is replaced by an O_RDWR one, with the locks carried over, on the
// first WRITE lock); bytes no owner holds any more are unlocked on it; it is closed with
// the file's last owner, after an unlock of everything (it may be a dup, below, whose
// close alone would drop nothing).
//
// Under a write delegation's lease (lease.h) the file must not be opened at all: any
// open(2), this daemon's too, breaks the lease. The caller then passes the leased
// read-write description (`writable_fd`) and the slot is a dup of it. The holder's
// locks, which the Linux client keeps to itself under the delegation and sends while it
// gives it back, are thus on the file before the lease goes, and a local process woken by
// the lease's release finds them there. The description outlives the lease (and the
// open it came from) for as long as the file has locks.
//
// Descriptions are budgeted (OfdBudget: in total, and per client the files it locks;
// past either, lock() fails with ENOLCK like the table's own bounds) and opened like every other
// vfs descriptor, through open_reclaiming() (fd_pressure.h): on EMFILE the idle cached descriptors
// are closed first. They are not reclaimable themselves (closing one would drop locks), so the
// daemon must count the budget in FdReserve. A test() by an owner without a description uses a
// temporary one, closed before returning.
//
// The kernel's offsets are signed (OFFSET_MAX = 2^63-1): a range is mirrored clipped to
// [0, 2^63-1] (to EOF when it reaches that far), and bytes beyond it are the table's
// alone. No local process can lock there anyway.
//
// Opened as root: call outside any IdentityScope; the protocol layer has already
// checked the caller's right to lock. Descriptions are O_CLOEXEC; a fork() without exec
// would keep copies (and their locks) alive in the child.
#pragma once

#include <cstddef>
#include <memory>
#include <mutex>
#include <unordered_map>

#include "nfs/vfs/state/lock_table.h"
#include "nfs/vfs/unique_fd.h"

namespace nfsrdmad::vfs::state {

// How many lock descriptions (files with locks) may be open in all, and on how many of
// them one client may hold locks. Thread-safe.
class OfdBudget {
  public:
    OfdBudget(size_t total, size_t per_client) : total_max_(total), per_client_max_(per_client) {}

    bool try_open();  // one description more
    void close();
    bool try_join(const ClientKey& client);  // one file more for `client`
    void leave(const ClientKey& client);
    size_t in_use() const;                         // descriptions
    size_t in_use(const ClientKey& client) const;  // files of the client's

  private:
    const size_t total_max_;
    const size_t per_client_max_;
    mutable std::mutex mu_;
    size_t total_ = 0;
    std::unordered_map<ClientKey, size_t, ClientKeyHash> per_client_;
};

// The mirror for one request on one file. path_fd: any descriptor of the file (a
// Node's O_PATH fd), kept by the caller for the duration of the call. writable_fd: the
// file's write-leased description, or -1 (then a description is opened from path_fd).
// Errors: ENOLCK (budget), EISDIR/EINVAL (not a regular file), and the reopen's (EROFS,
// ETXTBSY for an O_RDWR description, EWOULDBLOCK while a local lease is being broken,
// EMFILE).
class OfdMirror final : public LockMirror {
  public:
    OfdMirror(int path_fd, std::shared_ptr<OfdBudget> budget, int writable_fd = -1)
        : path_fd_(path_fd), writable_fd_(writable_fd), budget_(std::move(budget)) {}

    Result<std::optional<Conflict>> lock(std::unique_ptr<MirrorSlot>& slot, const StateOwner& owner,
                                         FunctionRef<OwnerLocks()> held, const Lock& want) override;
    Result<std::optional<Conflict>> test(const MirrorSlot* slot, const Lock& want) override;

  private:
    Result<UniqueFd> description(bool writable) const;

    const int path_fd_;
    const int writable_fd_;
    std::shared_ptr<OfdBudget> budget_;
};

}  // namespace nfsrdmad::vfs::state
