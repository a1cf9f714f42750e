// NFSPROC3_REMOVE (RFC 1813 §3.3.12).
#include "nfs/v3/removal.h"
#include "nfs/vfs/dirops.h"

namespace nfsrdmad::nfs::v3 {

rpc::Outcome proc_remove(Request& rq) {
    return remove_entry(rq, NameUse::Remove,
                        [](const vfs::Node& d, std::string_view n, const vfs::Identity& id,
                           vfs::DirChange* c) { return vfs::remove(d, n, id, c); });
}

}  // namespace nfsrdmad::nfs::v3
