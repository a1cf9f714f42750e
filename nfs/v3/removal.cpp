#include "nfs/v3/removal.h"

#include "nfs/vfs/lookup.h"

namespace nfsrdmad::nfs::v3 {

void regular_file_handle(const vfs::Node& dir, std::string_view name, vfs::FileHandle& out) {
    if (auto p = vfs::peek(dir, name); p && S_ISREG(p->mode)) out = p->handle;
}

}  // namespace nfsrdmad::nfs::v3
