// node.h — a resolved filesystem object: the thing every operation works on.
#pragma once

#include <sys/stat.h>

#include <cstdint>
#include <memory>

#include "nfs/vfs/handle.h"
#include "nfs/vfs/result.h"
#include "nfs/vfs/unique_fd.h"

namespace nfsrdmad::vfs {

class Export;

// A Node's descriptor: one of its own, or one it shares with the descriptor cache (a
// directory the cache keeps open, fd_cache.h), which costs the request no open and no
// close. Either way the descriptor is only the caller's to use, never to close.
class NodeFd {
  public:
    NodeFd() = default;
    NodeFd(UniqueFd fd) : own_(std::move(fd)) {}  // NOLINT: a Node takes its own fd as before
    // `keep` keeps `fd` open while this NodeFd lives; `directory`: whether it is one.
    NodeFd(int fd, std::shared_ptr<const void> keep, bool directory = true)
        : shared_(fd), shared_directory_(directory), keep_(std::move(keep)) {}
    NodeFd& operator=(UniqueFd fd) {
        own_ = std::move(fd);
        keep_.reset();
        shared_ = -1;
        shared_directory_ = false;
        return *this;
    }
    int get() const { return keep_ ? shared_ : own_.get(); }
    bool valid() const { return get() >= 0; }
    explicit operator bool() const { return valid(); }
    // Shared with the cache: a directory, opened O_RDONLY, or a regular file the cache
    // holds, O_PATH for node() or open for I/O (FdCache::node, FdCache::adopt). An own
    // descriptor is O_PATH unless its maker says otherwise.
    bool shared() const { return keep_ != nullptr; }
    bool shared_directory() const { return keep_ != nullptr && shared_directory_; }
    // The descriptor, if it is this NodeFd's own (else an invalid one); this is then empty.
    UniqueFd take_own() {
        if (keep_) return UniqueFd();
        return std::move(own_);
    }

  private:
    UniqueFd own_;
    int shared_ = -1;
    bool shared_directory_ = false;
    std::shared_ptr<const void> keep_;
};

// An object of an export, pinned by a descriptor (normally O_PATH, opened as root by
// ExportTable::resolve or by a lookup/create; or a directory's O_RDONLY one shared with
// the descriptor cache, FdCache::node). Move-only. Keeps its Export alive, so it stays
// usable across an export-table reload for the duration of one request.
struct Node {
    std::shared_ptr<const Export> exp;
    NodeFd fd;
    FileHandle handle;  // the wire handle of this object

    uint32_t fsid() const;
};

// A node plus its attributes, as returned by LOOKUP and the create-type operations
// (RFC 1813 §3.3.3, §3.3.8-§3.3.11: object handle + post-op attributes).
struct Entry {
    Node node;
    struct statx attr;
};

// Builds a Node for fd (any descriptor of an object of exp): computes its handle.
Result<Node> make_node(std::shared_ptr<const Export> exp, UniqueFd fd);

// make_node + statx.
Result<Entry> make_entry(std::shared_ptr<const Export> exp, UniqueFd fd);

// A second Node for the same object (dup'ed descriptor).
Result<Node> clone(const Node& node);

// Makes the node's descriptor an O_PATH one if it is not (a create's is the O_RDONLY one
// the file was made with): the node then pins the object without counting as an open of
// the file, which a write lease (lease.h) needs of every descriptor but its own.
Result<void> pin_by_path(Node& node);

}  // namespace nfsrdmad::vfs
