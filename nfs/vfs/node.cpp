#include "nfs/vfs/node.h"

#include <fcntl.h>

#include <cerrno>

#include "nfs/vfs/export.h"
#include "nfs/vfs/sys.h"

namespace nfsrdmad::vfs {

uint32_t Node::fsid() const {
    return exp ? exp->fsid() : 0;
}

Result<Node> make_node(std::shared_ptr<const Export> exp, UniqueFd fd) {
    auto kernel = kernel_handle_of(fd.get());
    if (!kernel) return kernel.failure();
    FileHandle handle = exp->encode(*kernel);
    return Node{std::move(exp), std::move(fd), handle};
}

Result<Entry> make_entry(std::shared_ptr<const Export> exp, UniqueFd fd) {
    auto st = sys::stat_fd(fd.get());
    if (!st) return st.failure();
    auto node = make_node(std::move(exp), std::move(fd));
    if (!node) return node.failure();
    return Entry{std::move(*node), *st};
}

Result<Node> clone(const Node& node) {
    auto fd = sys::dup_fd(node.fd.get());
    if (!fd) return fd.failure();
    return Node{node.exp, std::move(*fd), node.handle};
}

Result<void> pin_by_path(Node& node) {
    const int flags = ::fcntl(node.fd.get(), F_GETFL);
    if (flags < 0) return fail(errno);
    if (flags & O_PATH) return {};
    auto fd = sys::reopen(node.fd.get(), O_PATH);
    if (!fd) return fd.failure();
    node.fd = std::move(*fd);
    return {};
}

}  // namespace nfsrdmad::vfs
