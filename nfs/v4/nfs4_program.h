// The NFS version 4 program, minor version 1 (RFC 8881 §16): NULL and COMPOUND.
// The operations live one per file (op_*.cpp) and are listed in op_table.cpp.
#pragma once

#include <chrono>
#include <memory>

#include "nfs/common/delegation_breaker.h"
#include "nfs/v4/op_table.h"
#include "nfs/v4/services.h"
#include "transport/rpc/program.h"

namespace nfsrdmad::nfs::v4 {

class Nfs4Program : public rpc::Program, public DelegationBreaker {
  public:
    Nfs4Program(std::shared_ptr<vfs::ExportRegistry> exports, const Options& o = {});

    uint32_t number() const override;
    std::vector<uint32_t> versions() const override { return {4}; }
    const char* name() const override { return "nfs"; }
    rpc::ProcedureInfo procedure(uint32_t vers, uint32_t proc) const override;
    rpc::OpStats::StatusName status_name(uint32_t vers) const override;
    std::vector<std::shared_ptr<const rpc::OpStats>> op_stats() const override {
        return {op_stats_};
    }
    rpc::Outcome call(rpc::CallContext& ctx) override;
    void connection_closed(uint64_t conn) override;

    Services& services() { return svc_; }

    // NFSv3's access to files NFSv4.1 clients hold delegations of.
    bool any() const override { return !svc_.delegations.empty(); }
    bool conflict(const vfs::FileHandle& file, bool write) override {
        return svc_.delegation_conflict(file, 0, write);
    }
    bool write_delegated(const vfs::FileHandle& file) const override {
        return svc_.delegations.write_delegated(file);
    }
    HeldAttrs held_attrs(const vfs::FileHandle& file) override {
        auto a = svc_.delegated_attrs(file, 0);
        return {a.delay, a.size};
    }

    // The lease sweep (Services::expire_leases): the daemon calls it from a timer, off the
    // reactor (reaping closes files), and calls again after the delay it returns.
    std::chrono::milliseconds expire_leases() { return svc_.expire_leases(); }

  private:
    Services svc_;
    const OpTable ops_;
    const std::shared_ptr<rpc::OpStats> op_stats_;  // per operation, inside COMPOUND
};

// Every operation this server knows (op_table.cpp).
OpTable make_op_table();

}  // namespace nfsrdmad::nfs::v4
