// The MOUNT program, versions 1 and 3 (RFC 1813 §5, RFC 1094 appendix A): how a
// client turns an export path into its first file handle.
#pragma once

#include <memory>
#include <mutex>
#include <set>
#include <string>
#include <utility>

#include "nfs/vfs/export.h"
#include "transport/rpc/program.h"

namespace nfsrdmad::nfs::mount {

// Who has mounted what (MOUNTPROC_DUMP); advisory, like every server's.
class MountList {
public:
    void add(const std::string& host, const std::string& dir);
    void remove(const std::string& host, const std::string& dir);
    void remove_host(const std::string& host);
    std::set<std::pair<std::string, std::string>> snapshot() const;

private:
    mutable std::mutex mu_;
    std::set<std::pair<std::string, std::string>> entries_;
};

class MountProgram : public rpc::Program {
public:
    explicit MountProgram(std::shared_ptr<vfs::ExportRegistry> exports)
        : exports_(std::move(exports)) {}

    uint32_t number() const override;
    uint32_t min_version() const override { return 1; }
    uint32_t max_version() const override { return 3; }
    rpc::ProcedureInfo procedure(uint32_t vers, uint32_t proc) const override;
    rpc::Outcome call(rpc::CallContext& ctx) override;

    const MountList& mounts() const { return mounts_; }

private:
    std::shared_ptr<vfs::ExportRegistry> exports_;
    MountList mounts_;

    friend struct MountProcedures;
};

}  // namespace nfsrdmad::nfs::mount
