// One function per MOUNT procedure, one file each (proc_*.cpp).
#pragma once

#include "nfs/mount/mount_program.h"

namespace nfsrdmad::nfs::mount {

struct MountProcedures {
    static rpc::Outcome mnt(MountProgram& p, rpc::CallContext& ctx);
    static rpc::Outcome dump(MountProgram& p, rpc::CallContext& ctx);
    static rpc::Outcome umnt(MountProgram& p, rpc::CallContext& ctx);
    static rpc::Outcome umntall(MountProgram& p, rpc::CallContext& ctx);
    static rpc::Outcome export_list(MountProgram& p, rpc::CallContext& ctx);

    static std::shared_ptr<const vfs::ExportTable> table(MountProgram& p) {
        return p.exports_->snapshot();
    }
    static MountList& list(MountProgram& p) { return p.mounts_; }
};

}  // namespace nfsrdmad::nfs::mount
