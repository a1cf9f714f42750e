// MOUNTPROC3_MNT (RFC 1813 §5.2.1) and MOUNTPROC_MNT (RFC 1094 A.5.1).
#include <spdlog/spdlog.h>

#include <cerrno>

#include "nfs/common/authorize.h"
#include "nfs/common/log_text.h"
#include "nfs/mount/procedures.h"
#include "nfs/vfs/lookup.h"
#include "nfs/vfs/policy.h"
#include "xdr/mount_prot.h"

namespace nfsrdmad::nfs::mount {

namespace x = xdr::mount;

namespace {

x::mountstat3 to_mountstat(int err) {
    switch (err) {
        case ENOENT:
            return x::MNT3ERR_NOENT;
        case EACCES:
        case EPERM:
        case EXDEV:
            return x::MNT3ERR_ACCES;
        case ENOTDIR:
            return x::MNT3ERR_NOTDIR;
        case ENAMETOOLONG:
            return x::MNT3ERR_NAMETOOLONG;
        case EINVAL:
            return x::MNT3ERR_INVAL;
        default:
            return x::MNT3ERR_IO;
    }
}

// The export that contains `path` (itself or a parent), and what is left below it.
std::shared_ptr<const vfs::Export> containing_export(const vfs::ExportTable& t,
                                                     const std::string& path, std::string& rest) {
    std::string p = vfs::normalize_path(path);
    if (p.empty()) return nullptr;
    for (std::string prefix = p;;) {
        if (auto e = t.find_by_path(prefix.empty() ? "/" : prefix)) {
            rest = p.substr(prefix.size());
            return e;
        }
        if (prefix.empty()) return nullptr;
        prefix.resize(prefix.rfind('/'));
    }
}

// Walks `rest` ("/a/b") below the export root with the caller's credentials, never
// following symlinks and never leaving the export (vfs::lookup guarantees both).
x::mountstat3 walk(const vfs::Export& e, const std::string& rest, const vfs::Identity& id,
                   vfs::Node& out) {
    auto node = e.root();
    if (!node) return to_mountstat(node.error());
    vfs::Node cur = std::move(*node);
    size_t i = 0;
    while (i < rest.size()) {
        size_t j = rest.find('/', i + 1);
        if (j == std::string::npos) j = rest.size();
        std::string name = rest.substr(i + 1, j - i - 1);
        i = j;
        if (name.empty()) continue;
        auto next = vfs::lookup(cur, name, id);
        if (!next) return to_mountstat(next.error());
        if (!S_ISDIR(next->attr.stx_mode)) return x::MNT3ERR_NOTDIR;
        cur = std::move(next->node);
    }
    out = std::move(cur);
    return x::MNT3_OK;
}

}  // namespace

rpc::Outcome MountProcedures::mnt(MountProgram& p, rpc::CallContext& ctx) {
    std::string_view dir = ctx.args.get_string(x::MNTPATHLEN);
    if (!ctx.args.ok()) return rpc::Outcome::garbage();
    std::string path(dir);
    auto table = MountProcedures::table(p);
    std::string rest;
    auto exp = containing_export(*table, path, rest);
    x::mountres3 res;
    res.set_fhs_status(x::MNT3ERR_NOENT);
    vfs::Node node;
    std::vector<int32_t> flavors;
    const vfs::ClientRule* rule = exp ? client_rule(*exp, *ctx.header.peer) : nullptr;
    if (exp && (!rule || !port_allowed(*rule, *ctx.header.peer))) {
        // No rule for this client, or a `secure` one and an unprivileged source port
        // (rpc.mountd refuses those as "illegal port" with MNT3ERR_ACCES).
        res.set_fhs_status(x::MNT3ERR_ACCES);
    } else if (exp) {
        vfs::Identity from_client{ctx.header.cred.sys.uid, ctx.header.cred.sys.gid,
                                  ctx.header.cred.sys.gids};
        auto id =
            vfs::squash(*rule, from_client, ctx.header.cred.flavor, ctx.header.cred.anonymous);
        res.set_fhs_status(walk(*exp, rest, id, node));
        for (uint32_t f : rule->flavors) flavors.push_back(static_cast<int32_t>(f));
        if (flavors.empty()) flavors.push_back(vfs::kAuthSys);
    }
    spdlog::info("mount: {} MNT {} -> {}", ctx.header.peer->text, log_text(path),
                 static_cast<int>(res.fhs_status()));
    if (res.fhs_status() == x::MNT3_OK) list(p).add(peer_host(*ctx.header.peer), path);

    if (ctx.header.vers == 1) {
        // MOUNT v1 answers with a fixed 32-byte handle for NFSv2, which we do not
        // serve; it is kept for old tools that still speak v1.
        x::fhstatus v1;
        v1.set_fhs_status(static_cast<uint32_t>(res.fhs_status()));
        if (res.fhs_status() == x::MNT3_OK) {
            auto h = node.handle.data();
            if (h.size() > v1.fhs_fhandle().size())
                v1.set_fhs_status(x::MNT3ERR_NOTSUPP);
            else
                std::copy(h.begin(), h.end(), v1.fhs_fhandle().begin());
        }
        x::xdr_encode(ctx.res, v1);
        return rpc::Outcome::ok();
    }
    if (res.fhs_status() == x::MNT3_OK) {
        res.mountinfo().fhandle = node.handle.data();
        res.mountinfo().auth_flavors = flavors;
    }
    x::xdr_encode(ctx.res, res);
    return rpc::Outcome::ok();
}

}  // namespace nfsrdmad::nfs::mount
