// MOUNTPROC3_DUMP (RFC 1813 §5.2.2): who has mounted what.
#include "nfs/mount/procedures.h"
#include "xdr/mount_prot.h"

namespace nfsrdmad::nfs::mount {

rpc::Outcome MountProcedures::dump(MountProgram& p, rpc::CallContext& ctx) {
    auto entries = list(p).snapshot();  // owns the strings the reply points into
    xdr::mount::mountlist_head res;
    for (const auto& [host, dir] : entries) res.entries.push_back({host, dir});
    xdr::mount::xdr_encode(ctx.res, res);
    return rpc::Outcome::ok();
}

}  // namespace nfsrdmad::nfs::mount
