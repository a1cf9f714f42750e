// fd_cache.h — LRU of open descriptors for READ/WRITE/COMMIT.
//
// open_by_handle_at + a reopen per READ would cost three extra syscalls on the hottest
// path, so regular files are kept open, keyed by wire handle (fsid + kernel handle).
// Descriptors are opened as root, so one fd serves every user: io.h checks the caller's
// permission before each use. They are opened no wider than the request needs:
// OpenFor::Read (READ, COMMIT, and a WRITE the rule does not allow) opens O_RDONLY;
// OpenFor::Write opens O_RDWR, and the nfs layer asks for it only for a WRITE from a
// caller admitted with write access. A file the server only read is therefore never
// open for writing, and stays executable locally (no ETXTBSY). Once a writable entry
// exists it also serves readers, until evicted or closed for being idle.
// Nothing is opened for a caller the export refuses: callers check the handle and find
// its export (ExportTable::find_by_handle), authorize the caller against that export,
// and only then call get().
// Thread-safe; entries are shared_ptrs, so eviction never closes an fd in use.
// An fd of a file unlinked meanwhile is harmless: io.h reports ESTALE when nlink == 0.
// Directories are kept too, for node(): every operation on names starts by resolving
// its directory's handle, which without the cache costs an open_by_handle_at and a close.
// A cached directory is open O_RDONLY|O_DIRECTORY (as root) and serves as the base of
// the *at calls (their permission checks are the caller's, on the directory's inode,
// whatever the descriptor's mode). Nobody reads the directory through it (its offset is
// shared: READDIR opens its own), nor fsyncs it (durability.cpp: a write-back error is
// reported once per open file description, so each commit opens one of its own). A directory
// removed meanwhile is found with nlink 0 and answered ESTALE, as open_by_handle_at would.
// Regular files resolved by node() (GETATTR, ACCESS, SETATTR: an attribute revalidation is
// the commonest call of all) are kept too, as the O_PATH descriptor ExportTable::open made,
// and so are those a worker's LOOKUP found (hold()):
// a later resolve costs one statx instead of open_by_handle_at, statx and close, and a call
// that must not block (a reactor's GETATTR) finds it here. But a descriptor keeps a removed
// file's blocks allocated, so these "path entries" are kept for a short while only, as the
// kernel nfsd's file cache keeps its files (its laundrette, every 2 s): close_idle(), which
// the daemon runs every second, closes those not used since its previous run (1 to 2 s after
// their last use), and at most a quarter of the capacity are path entries (a scan of many
// files does not push the directories and the files open for I/O out). Those are kept
// longer (a reopen costs open_by_handle_at), but not for ever: close_idle() also closes
// those unused for kIdleIoPeriods runs that nothing else shares, so that a file read and
// then removed on the server frees its blocks within about 5 s, however idle the server (the
// kernel nfsd's file cache closes an unused file within 2 to 4 s).
// REMOVE and RENAME forget what they remove, whatever the kind. A file the cache holds open
// for I/O serves node() as well (a GETATTR after a WRITE, an NFSv4.1 CLOSE's GETATTR); an
// I/O request for a file held by a path entry opens it from that descriptor (no
// open_by_handle_at) and the entry becomes an I/O one. Either way the Node shares the
// descriptor, found removed (nlink 0) as a directory is.
// A hit shares the lock with other hits (rw_lock.h: it takes its thread's stripe of it)
// and only marks its entry used: the entry is not moved in the recency lists then, which
// would be a write under an exclusive lock on every call. Eviction gives a marked entry a second
// chance (unmarks it and moves it to the front) instead (CLOCK, as an approximation of LRU), and
// close_idle() reads the epoch of its last use. The cache is an FdReclaimer (fd_pressure.h): when
// an open anywhere in the vfs fails with EMFILE/ENFILE, it closes its least recently used entries
// that no request holds. The daemon sizes it with fd_cache_capacity() from RLIMIT_NOFILE.
#pragma once

#include <sys/stat.h>

#include <atomic>
#include <cstddef>
#include <cstdint>
#include <list>
#include <memory>
#include <mutex>
#include <optional>
#include <span>
#include <unordered_map>
#include <vector>

#include "nfs/vfs/export.h"
#include "nfs/vfs/fd_pressure.h"
#include "nfs/vfs/handle.h"
#include "nfs/vfs/node.h"
#include "nfs/vfs/result.h"
#include "nfs/vfs/rw_lock.h"
#include "nfs/vfs/unique_fd.h"

namespace nfsrdmad::vfs {

struct OpenFile {
    std::shared_ptr<const Export> exp;
    FileHandle handle;
    UniqueFd fd;    // O_RDONLY or O_RDWR, O_NONBLOCK (lease breaks -> EWOULDBLOCK)
    bool writable;  // opened O_RDWR (for OpenFor::Write)
    // A directory (O_RDONLY|O_DIRECTORY), kept for node(): never served by get().
    bool directory = false;
    // A regular file's O_PATH descriptor, kept for node() (a path entry): never served by
    // get(), closed when idle (close_idle).
    bool path_only = false;
};

enum class OpenFor { Read, Write };

class FdCache final : public FdReclaimer {
  public:
    static constexpr size_t kDefaultCapacity = 1024;
    explicit FdCache(size_t capacity = kDefaultCapacity);
    ~FdCache();
    FdCache(const FdCache&) = delete;
    FdCache& operator=(const FdCache&) = delete;

    // Checked handle -> open file, from the cache or opened now. Call as root (outside any
    // IdentityScope). Errors: ESTALE (as ExportTable::open); EISDIR for a
    // directory, EINVAL for other non-regular files; for OpenFor::Write, the reason the
    // file cannot be opened for writing (EROFS, ETXTBSY, EPERM for immutable/append-only,
    // EWOULDBLOCK while a local lease is being broken -> NFS3ERR_JUKEBOX).
    // An entry from an older export-table generation is not reused.
    // `read_now`: set on a miss to the attributes read (as the file was checked, just before
    // it was opened); left alone on a hit. WRITE takes them as its pre-op attributes
    // instead of a statx of its own.
    Result<std::shared_ptr<const OpenFile>> get(const HandleRef& ref, OpenFor need,
                                                std::optional<struct statx>* read_now = nullptr);
    // table.find_by_handle(wire) (kBadHandle, ESTALE), then the above.
    Result<std::shared_ptr<const OpenFile>> get(const ExportTable& table,
                                                std::span<const uint8_t> wire, OpenFor need);
    // Same, for an already resolved node (avoids the open_by_handle_at on a miss).
    // `known`: the node's attributes, read by the caller during this request (checked
    // instead of a statx on a miss); nullptr: read them.
    Result<std::shared_ptr<const OpenFile>> get(const Node& node, OpenFor need,
                                                const struct statx* known = nullptr);

    // The object a checked handle names, as ExportTable::open (call as root, outside any
    // IdentityScope; `attrs` as there), except that a directory is kept open here and the
    // Node shares its descriptor (NodeFd::shared): the first resolve of a directory costs
    // one open more, each later one a statx only. A regular file is kept as the O_PATH
    // descriptor ExportTable::open made (a path entry; nothing more is opened for it), or
    // shared from the entry that holds it open for reading or writing.
    Result<Node> node(const HandleRef& ref, struct statx* attrs = nullptr);
    // The same for a directory whose entries are about to change under its lock
    // (dir_change.h): a kept one is handed out without the statx that tells a removed one
    // (ESTALE), because change_directory's own reading before the change tells it.
    Result<Node> node_for_change(const HandleRef& ref);
    // That kept node alone (no system call; nullopt when the cache does not hold it).
    // NodeFd::shared_directory() says whether it is a directory (else a regular file).
    std::optional<Node> held_node(const HandleRef& ref);

    // For a call that must not block (rpc::CallContext::nowait): node() and get() from
    // what the cache holds, never opening anything; EWOULDBLOCK on a miss.
    Result<Node> cached_node(const HandleRef& ref, struct statx* attrs = nullptr);
    // What the cache holds for `ref` now (a directory, a path entry, or a file open for
    // I/O), or null: no system call. A nowait pre-flight asks this and hands what it got
    // to the cached_node() below, so that the call looks the handle up once (the last
    // PUTFH's handle: a COMPOUND of several looks the earlier ones up again).
    std::shared_ptr<const OpenFile> held(const HandleRef& ref) { return lookup_node(ref); }
    // cached_node() of an entry held() gave for `ref` (even if the cache has let go of it
    // since: the descriptor stays open while `kept` holds it).
    Result<Node> cached_node(const HandleRef& ref, std::shared_ptr<const OpenFile> kept,
                             struct statx* attrs) {
        return kept_node(ref, std::move(kept), attrs, /*may_drop=*/false);
    }
    Result<std::shared_ptr<const OpenFile>> cached(const HandleRef& ref, OpenFor need);

    // Drops the path entries not used since the previous call (so 1 to 2 periods after
    // their last use), and any other entry (a file held for I/O, a directory) not used for
    // kIdleIoPeriods periods that nothing else holds (no more than kIdleIoScan of the least
    // recently used looked at per call); returns how many. A path entry a request holds
    // stays open until the request lets go. The daemon calls it every second, on a worker:
    // the last close of a removed file frees its blocks, which may wait on the disk.
    size_t close_idle();
    static constexpr uint64_t kIdleIoPeriods = 5;
    static constexpr size_t kIdleIoScan = 256;

    // A regular file a LOOKUP has just found, its node's own O_PATH descriptor: kept as a
    // path entry, as node() would have kept it, so that the ACCESS and GETATTR that follow
    // (an open's) find it, a reactor's included. An entry already there for the handle is
    // shared instead. Nothing for a removed file (`attrs`: the lookup's), for anything but
    // a regular file, or for a node whose descriptor is not its own. Call on a worker.
    void hold(Node& node, const struct statx& attrs);

    // A regular file this request has just created, its node's own descriptor open O_RDWR
    // (vfs::create with `writable`): kept as the handle's writable entry, so the WRITE that
    // follows a CREATE finds it open, where a miss costs an open_by_handle_at, a statx, a
    // reopen through /proc and a close. The node then shares the cache's descriptor. Does
    // nothing for a node whose descriptor is not its own. Call as root or as the creator:
    // permission is checked before each use either way (io.h), never by the descriptor.
    void adopt(Node& node);

    void forget(const FileHandle& handle);
    void clear();
    size_t size() const;
    size_t capacity() const { return capacity_; }
    bool contains(const FileHandle& handle) const;

    // Closes up to `want` entries no request holds (use_count 1), least recently used
    // first; returns how many. Called by open_reclaiming() on EMFILE/ENFILE.
    size_t reclaim_fds(size_t want) override;

    // Entries dropped to stay within capacity, and entries closed by reclaim_fds().
    uint64_t evictions() const { return evictions_.load(std::memory_order_relaxed); }
    uint64_t reclaimed() const { return reclaimed_.load(std::memory_order_relaxed); }
    // Path entries held now, and those close_idle() closed.
    size_t path_entries() const;
    uint64_t idle_closed() const { return idle_closed_.load(std::memory_order_relaxed); }
    // The most path entries held at once (a quarter of the capacity, at least one).
    size_t max_path_entries() const { return max_paths_; }

  private:
    struct HandleHash {
        size_t operator()(const FileHandle& h) const;
    };
    using Files = std::vector<std::shared_ptr<const OpenFile>>;  // closed after mu_ is released
    struct Slot {
        std::shared_ptr<const OpenFile> file;
        std::list<FileHandle>::iterator lru_pos;
        std::list<FileHandle>::iterator path_pos;  // in paths_, while file->path_only
        // Set by hits, under the shared lock (each written only when it changes, so that
        // threads hitting one file do not pass its line around): the epoch_ of its last use,
        // and whether it was used since it last moved to the front of lru_ and paths_.
        std::atomic<uint64_t> used{0};
        std::atomic<bool> lru_used{false}, path_used{false};
    };
    using Slots = std::unordered_map<FileHandle, Slot, HandleHash>;

    std::shared_ptr<const OpenFile> lookup(const FileHandle& handle, const Export* exp,
                                           OpenFor need);
    // node()'s hit: the kept descriptor, or nullptr.
    std::shared_ptr<const OpenFile> lookup_node(const HandleRef& ref);
    // `may_drop`: a removed file's entry is dropped here (a worker); a nowait caller leaves
    // that to a worker (EWOULDBLOCK), since the last close of a removed file may wait on disk.
    Result<Node> kept_node(const HandleRef& ref, std::shared_ptr<const OpenFile> kept,
                           struct statx* attrs, bool may_drop);
    // `need`: an entry for I/O; none: a directory or a path entry, for node(). An entry
    // already there that serves as well wins (see the definition).
    std::shared_ptr<const OpenFile> insert(std::shared_ptr<const OpenFile> file,
                                           std::optional<OpenFor> need);
    // Under mu_ exclusively: the slot's use (to the front of both lists, its epoch).
    void touch(Slot& slot);
    // Under mu_ shared: a hit's use (the marks, its epoch).
    void mark_used(Slot& slot) const;
    // Under mu_ exclusively: the entries used since they moved go to the front of lru_,
    // unmarked, so that its order is the order of use again (reclaim_fds).
    void settle_lru();
    // Under mu_: a new slot for `file`, then evict_over_capacity.
    void add(std::shared_ptr<const OpenFile> file, Files& evicted);
    // Under mu_: `slot` holds `file` from now on; the one it held goes to `old`.
    void replace(Slot& slot, std::shared_ptr<const OpenFile> file, Files& old);
    // Under mu_: the slot leaves the map and both lists; its file goes to `out`.
    void drop(Slots::iterator it, Files& out);
    // Under mu_: drops least recently used entries past capacity, and path entries past
    // max_paths_, into `evicted`.
    void evict_over_capacity(Files& evicted);
    Result<std::shared_ptr<const OpenFile>> open_and_insert(
        std::shared_ptr<const Export> exp, const FileHandle& handle, int path_fd, OpenFor need,
        const struct statx* known = nullptr, std::optional<struct statx>* read_now = nullptr);

    const size_t capacity_;
    const size_t max_paths_;
    mutable StripedRwLock mu_;
    std::list<FileHandle> lru_;    // front = most recently used
    std::list<FileHandle> paths_;  // the path entries, front = most recently used
    uint64_t epoch_ = 1;           // close_idle() calls, plus one
    Slots slots_;
    std::atomic<uint64_t> evictions_{0};
    std::atomic<uint64_t> reclaimed_{0};
    std::atomic<uint64_t> idle_closed_{0};
};

}  // namespace nfsrdmad::vfs
