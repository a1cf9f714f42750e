// MOUNTPROC3_UMNT (RFC 1813 §5.2.3) and MOUNTPROC3_UMNTALL (§5.2.4).
#include "nfs/common/authorize.h"
#include "nfs/mount/procedures.h"
#include "xdr/mount_prot.h"

namespace nfsrdmad::nfs::mount {

rpc::Outcome MountProcedures::umnt(MountProgram& p, rpc::CallContext& ctx) {
    std::string_view dir = ctx.args.get_string(xdr::mount::MNTPATHLEN);
    if (!ctx.args.ok()) return rpc::Outcome::garbage();
    list(p).remove(peer_host(*ctx.header.peer), std::string(dir));
    return rpc::Outcome::ok();
}

rpc::Outcome MountProcedures::umntall(MountProgram& p, rpc::CallContext& ctx) {
    list(p).remove_host(peer_host(*ctx.header.peer));
    return rpc::Outcome::ok();
}

}  // namespace nfsrdmad::nfs::mount
