// MOUNTPROC3_EXPORT (RFC 1813 §5.2.5): the export list, with the client groups of
// each export as an administrator wrote them ("*", "10.0.0.0/8", "*.lab.example").
#include <deque>

#include "nfs/mount/procedures.h"
#include "xdr/mount_prot.h"

namespace nfsrdmad::nfs::mount {

rpc::Outcome MountProcedures::export_list(MountProgram& p, rpc::CallContext& ctx) {
    auto t = table(p);
    std::deque<std::string> names;  // stable storage for the views in the reply
    xdr::mount::exports_head res;
    for (const auto& e : t->exports()) {
        xdr::mount::exportnode node;
        node.ex_dir = e->spec().path;
        for (const auto& r : e->spec().rules)
            node.ex_groups.push_back({names.emplace_back(vfs::to_string(r.match))});
        res.entries.push_back(std::move(node));
    }
    xdr::mount::xdr_encode(ctx.res, res);
    return rpc::Outcome::ok();
}

}  // namespace nfsrdmad::nfs::mount
