// The MOUNT program, versions 1 and 3 (RFC 1813 §5, RFC 1094 appendix A): how a
// client turns an export path into its first file handle.
#pragma once

#include <deque>
#include <memory>
#include <mutex>
#include <set>
#include <string>
#include <utility>

#include "nfs/vfs/export.h"
#include "transport/rpc/program.h"

namespace nfsrdmad::nfs::mount {

// Who has mounted what (MOUNTPROC_DUMP); advisory, like every server's. Directories
// are stored in normal form (one spelling per directory), and the list is bounded so
// that what a client can make it hold (and DUMP send) does not grow with its calls:
// past `per_host` entries of one host, or `max_entries` in all, the oldest goes.
class MountList {
  public:
    static constexpr size_t kMaxEntries = 4096;
    static constexpr size_t kPerHost = 16;
    explicit MountList(size_t max_entries = kMaxEntries, size_t per_host = kPerHost)
        : max_entries_(max_entries), per_host_(per_host) {}

    void add(const std::string& host, const std::string& dir);
    void remove(const std::string& host, const std::string& dir);
    void remove_host(const std::string& host);
    std::set<std::pair<std::string, std::string>> snapshot() const;

  private:
    const size_t max_entries_, per_host_;
    mutable std::mutex mu_;
    std::deque<std::pair<std::string, std::string>> entries_;  // oldest first, no duplicates
};

class MountProgram : public rpc::Program {
  public:
    explicit MountProgram(std::shared_ptr<vfs::ExportRegistry> exports)
        : exports_(std::move(exports)) {}

    uint32_t number() const override;
    std::vector<uint32_t> versions() const override { return {1, 3}; }
    const char* name() const override { return "mountd"; }
    rpc::ProcedureInfo procedure(uint32_t vers, uint32_t proc) const override;
    rpc::OpStats::StatusName status_name(uint32_t vers) const override;
    rpc::Outcome call(rpc::CallContext& ctx) override;

    const MountList& mounts() const { return mounts_; }

  private:
    std::shared_ptr<vfs::ExportRegistry> exports_;
    MountList mounts_;

    friend struct MountProcedures;
};

}  // namespace nfsrdmad::nfs::mount
