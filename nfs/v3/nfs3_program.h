// The NFS version 3 program (RFC 1813 §3): 22 procedures, one file each (proc_*.cpp).
#pragma once

#include <cstddef>
#include <memory>
#include <utility>

#include "nfs/common/delegation_breaker.h"
#include "nfs/vfs/export.h"
#include "nfs/vfs/fd_cache.h"
#include "transport/rpc/program.h"

namespace nfsrdmad::nfs::v3 {

// What every procedure shares.
struct Services {
    Services(std::shared_ptr<vfs::ExportRegistry> e, size_t fd_cache_capacity)
        : exports(std::move(e)), files(fd_cache_capacity) {}

    std::shared_ptr<vfs::ExportRegistry> exports;
    vfs::FdCache files;
    // NFSv4.1's delegations (set before serving; null: none to mind).
    std::shared_ptr<DelegationBreaker> delegations;
};

class Nfs3Program : public rpc::Program {
public:
    explicit Nfs3Program(std::shared_ptr<vfs::ExportRegistry> exports,
                         size_t fd_cache_capacity = vfs::FdCache::kDefaultCapacity);

    uint32_t number() const override;
    std::vector<uint32_t> versions() const override { return {3}; }
    rpc::ProcedureInfo procedure(uint32_t vers, uint32_t proc) const override;
    rpc::Outcome call(rpc::CallContext& ctx) override;

    // NFSv4.1's delegations, recalled before NFSv3 touches their files (before serving).
    void set_delegations(std::shared_ptr<DelegationBreaker> d) { svc_.delegations = std::move(d); }

    // The descriptor cache, for the stats dump.
    const vfs::FdCache& files() const { return svc_.files; }

private:
    Services svc_;
};

}  // namespace nfsrdmad::nfs::v3
