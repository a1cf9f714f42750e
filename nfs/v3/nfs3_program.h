// The NFS version 3 program (RFC 1813 §3): 22 procedures, one file each (proc_*.cpp).
#pragma once

#include <memory>
#include <utility>

#include "nfs/common/delegation_breaker.h"
#include "nfs/vfs/export.h"
#include "nfs/vfs/fd_cache.h"
#include "transport/rpc/program.h"

namespace nfsrdmad::nfs::v3 {

// What every procedure shares.
struct Services {
    Services(std::shared_ptr<vfs::ExportRegistry> e, std::shared_ptr<vfs::FdCache> f)
        : exports(std::move(e)),
          file_cache(f ? std::move(f) : std::make_shared<vfs::FdCache>()),
          files(*file_cache) {}

    std::shared_ptr<vfs::ExportRegistry> exports;
    // Open regular files for READ/WRITE/COMMIT. The daemon gives NFSv3 and NFSv4.1 the
    // same cache: one file, one descriptor, one budget of descriptors (fd_pressure.h).
    std::shared_ptr<vfs::FdCache> file_cache;
    vfs::FdCache& files;
    // NFSv4.1's delegations (set before serving; null: none to mind).
    std::shared_ptr<DelegationBreaker> delegations;
};

class Nfs3Program : public rpc::Program {
public:
  // files: the descriptor cache (null: one of its own, of FdCache::kDefaultCapacity).
  explicit Nfs3Program(std::shared_ptr<vfs::ExportRegistry> exports,
                       std::shared_ptr<vfs::FdCache> files = nullptr);

  uint32_t number() const override;
  std::vector<uint32_t> versions() const override { return {3}; }
  const char* name() const override { return "nfs"; }
  rpc::ProcedureInfo procedure(uint32_t vers, uint32_t proc) const override;
  rpc::OpStats::StatusName status_name(uint32_t vers) const override;
  rpc::Outcome call(rpc::CallContext& ctx) override;

  // NFSv4.1's delegations, recalled before NFSv3 touches their files (before serving).
  void set_delegations(std::shared_ptr<DelegationBreaker> d) { svc_.delegations = std::move(d); }

private:
    Services svc_;
};

}  // namespace nfsrdmad::nfs::v3
