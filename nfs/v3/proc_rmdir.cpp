// NFSPROC3_RMDIR (RFC 1813 §3.3.13).
#include "nfs/v3/removal.h"
#include "nfs/vfs/dirops.h"

namespace nfsrdmad::nfs::v3 {

rpc::Outcome proc_rmdir(Request& rq) {
    return remove_entry(rq, NameUse::RemoveDir,
                        [](const vfs::Node& d, std::string_view n, const vfs::Identity& id,
                           vfs::DirChange* c) { return vfs::rmdir(d, n, id, c); });
}

}  // namespace nfsrdmad::nfs::v3
