#include "nfs/v3/nfs3_program.h"

#include "nfs/v3/request.h"

namespace nfsrdmad::nfs::v3 {

namespace {

struct Proc {
    const char* name;
    bool idempotent;  // false: through the duplicate request cache (RFC 1813 §4.5)
    rpc::Outcome (*run)(Request&);
    bool nowait = false;  // honours CallContext::nowait (Request::would_block)
};

rpc::Outcome proc_null(Request&) { return rpc::Outcome::ok(); }

// Indexed by procedure number (RFC 1813 §3).
constexpr Proc kProcs[] = {
    {"NULL", true, proc_null},  // a worker's: a ping gains nothing on a reactor
    {"GETATTR", true, proc_getattr, true},
    {"SETATTR", false, proc_setattr},
    {"LOOKUP", true, proc_lookup, true},
    {"ACCESS", true, proc_access, true},
    {"READLINK", true, proc_readlink},
    {"READ", true, proc_read, true},  // a small one from the page cache (vfs/io.h)
    {"WRITE", true, proc_write},      // rewriting the same bytes is harmless
    {"CREATE", false, proc_create},
    {"MKDIR", false, proc_mkdir},
    {"SYMLINK", false, proc_symlink},
    {"MKNOD", false, proc_mknod},
    {"REMOVE", false, proc_remove},
    {"RMDIR", false, proc_rmdir},
    {"RENAME", false, proc_rename},
    {"LINK", false, proc_link},
    {"READDIR", true, proc_readdir},
    {"READDIRPLUS", true, proc_readdirplus},
    {"FSSTAT", true, proc_fsstat},
    {"FSINFO", true, proc_fsinfo},
    {"PATHCONF", true, proc_pathconf},
    {"COMMIT", true, proc_commit},
};

}  // namespace

Nfs3Program::Nfs3Program(std::shared_ptr<vfs::ExportRegistry> exports,
                         std::shared_ptr<vfs::FdCache> files)
    : svc_(std::move(exports), std::move(files)) {}

uint32_t Nfs3Program::number() const { return x::NFS_PROGRAM; }

rpc::ProcedureInfo Nfs3Program::procedure(uint32_t, uint32_t proc) const {
    if (proc >= std::size(kProcs)) return {};
    // RFC 1813: every result but NULL's begins with nfsstat3.
    return {true, kProcs[proc].idempotent, kProcs[proc].name, proc != 0, kProcs[proc].nowait};
}

rpc::OpStats::StatusName Nfs3Program::status_name(uint32_t) const {
    return [](uint32_t s) { return x::enum_name(static_cast<x::nfsstat3>(s)); };
}

rpc::Outcome Nfs3Program::call(rpc::CallContext& ctx) {
    Request rq(ctx, svc_);
    return kProcs[ctx.header.proc].run(rq);
}

}  // namespace nfsrdmad::nfs::v3
