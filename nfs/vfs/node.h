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

// An object of an export, pinned by a descriptor (normally O_PATH, opened as root by
// ExportTable::resolve or by a lookup/create). Move-only. Keeps its Export alive, so it
// stays usable across an export-table reload for the duration of one request.
struct Node {
    std::shared_ptr<const Export> exp;
    UniqueFd fd;
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
