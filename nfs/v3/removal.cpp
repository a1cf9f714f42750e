#include "nfs/v3/removal.h"

#include "nfs/vfs/lookup.h"

namespace nfsrdmad::nfs::v3 {

void regular_file_handle(const vfs::Node& dir, std::string_view name, const vfs::Identity& id,
                   vfs::FileHandle& out) {
    if (auto e = vfs::lookup(dir, name, id); e && S_ISREG(e->attr.stx_mode)) out = e->node.handle;
}

}  // namespace nfsrdmad::nfs::v3
