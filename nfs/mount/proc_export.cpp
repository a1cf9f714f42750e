// MOUNTPROC3_EXPORT (RFC 1813 §5.2.5): the export list, with the client groups of
// each export as an administrator wrote them ("*", "10.0.0.0/8", "*.lab.example").
#include <arpa/inet.h>

#include <deque>

#include "nfs/mount/procedures.h"
#include "xdr/mount_prot.h"

namespace nfsrdmad::nfs::mount {

namespace {

std::string describe(const vfs::ClientRule::Match& m) {
    switch (m.kind) {
        case vfs::ClientRule::Match::Any:
            return "*";
        case vfs::ClientRule::Match::Hostname:
            return m.hostname;
        case vfs::ClientRule::Match::Cidr: {
            char buf[INET6_ADDRSTRLEN] = "";
            inet_ntop(m.family, m.addr.data(), buf, sizeof buf);
            int full = m.family == AF_INET ? 32 : 128;
            return m.prefix == full ? buf : std::string(buf) + "/" + std::to_string(m.prefix);
        }
    }
    return "?";
}

}  // namespace

rpc::Outcome MountProcedures::export_list(MountProgram& p, rpc::CallContext& ctx) {
    auto t = table(p);
    std::deque<std::string> names;  // stable storage for the views in the reply
    xdr::mount::exports_head res;
    for (const auto& e : t->exports()) {
        xdr::mount::exportnode node;
        node.ex_dir = e->spec().path;
        for (const auto& r : e->spec().rules) node.ex_groups.push_back({names.emplace_back(describe(r.match))});
        res.entries.push_back(std::move(node));
    }
    xdr::mount::xdr_encode(ctx.res, res);
    return rpc::Outcome::ok();
}

}  // namespace nfsrdmad::nfs::mount
