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
// exists it also serves readers, until evicted.
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
// removed meanwhile is found with nlink 0 and answered ESTALE, as open_by_handle_at would. Regular
// files are not kept for node(): an O_PATH descriptor would keep a removed file's blocks allocated.
// But one the cache holds for I/O serves node() as well (a GETATTR after a WRITE, an NFSv4.1
// CLOSE's GETATTR): the Node shares it, found removed (nlink 0) as a directory is.
// The cache is an FdReclaimer (fd_pressure.h): when an open anywhere in the vfs fails
// with EMFILE/ENFILE, it closes its least recently used entries that no request holds.
// The daemon sizes it with fd_cache_capacity() from RLIMIT_NOFILE.
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
#include "nfs/vfs/unique_fd.h"

namespace nfsrdmad::vfs {

struct OpenFile {
    std::shared_ptr<const Export> exp;
    FileHandle handle;
    UniqueFd fd;    // O_RDONLY or O_RDWR, O_NONBLOCK (lease breaks -> EWOULDBLOCK)
    bool writable;  // opened O_RDWR (for OpenFor::Write)
    // A directory (O_RDONLY|O_DIRECTORY), kept for node(): never served by get().
    bool directory = false;
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
    // one open more, each later one a statx only. A regular file the cache holds open for
    // reading or writing is shared the same way (never opened for this alone).
    Result<Node> node(const HandleRef& ref, struct statx* attrs = nullptr);

    // For a call that must not block (rpc::CallContext::nowait): node() and get() from
    // what the cache holds, never opening anything; EWOULDBLOCK on a miss.
    Result<Node> cached_node(const HandleRef& ref, struct statx* attrs = nullptr);
    Result<std::shared_ptr<const OpenFile>> cached(const HandleRef& ref, OpenFor need);

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

  private:
    struct HandleHash {
        size_t operator()(const FileHandle& h) const;
    };
    struct Slot {
        std::shared_ptr<const OpenFile> file;
        std::list<FileHandle>::iterator lru_pos;
    };

    std::shared_ptr<const OpenFile> lookup(const FileHandle& handle, const Export* exp,
                                           OpenFor need);
    // node()'s hit: the kept descriptor, or nullptr.
    std::shared_ptr<const OpenFile> lookup_node(const HandleRef& ref);
    Result<Node> kept_node(const HandleRef& ref, std::shared_ptr<const OpenFile> kept,
                           struct statx* attrs);
    std::shared_ptr<const OpenFile> insert(std::shared_ptr<const OpenFile> file, OpenFor need);
    std::shared_ptr<const OpenFile> insert_directory(std::shared_ptr<const OpenFile> dir);
    // Under mu_: drops least recently used entries past capacity into `evicted`.
    void evict_over_capacity(std::vector<std::shared_ptr<const OpenFile>>& evicted);
    Result<std::shared_ptr<const OpenFile>> open_and_insert(
        std::shared_ptr<const Export> exp, const FileHandle& handle, int path_fd, OpenFor need,
        const struct statx* known = nullptr, std::optional<struct statx>* read_now = nullptr);

    const size_t capacity_;
    mutable std::mutex mu_;
    std::list<FileHandle> lru_;  // front = most recently used
    std::unordered_map<FileHandle, Slot, HandleHash> slots_;
    std::atomic<uint64_t> evictions_{0};
    std::atomic<uint64_t> reclaimed_{0};
};

}  // namespace nfsrdmad::vfs
