// Turns the validated configuration's exports into the vfs export table.
#pragma once

#include <memory>
#include <string>
#include <vector>

#include "config/config.h"
#include "nfs/vfs/export.h"
#include "nfs/vfs/secret.h"
#include "transport/rpc/op_stats.h"

namespace nfsrdmad::daemon {

// With `stats`, each export gets its slot there (by path: the same one after a reload).
std::vector<vfs::ExportSpec> to_export_specs(const std::vector<config::Export>& exports,
                                             rpc::ExportStats* stats = nullptr);

// Opens every export; on failure returns nullptr and sets *why. With `stats`, the table's
// exports are counted there (and listed in the metrics from now on).
std::shared_ptr<const vfs::ExportTable> build_export_table(const config::Config& cfg,
                                                           const vfs::HandleKey& key,
                                                           std::string* why,
                                                           rpc::ExportStats* stats = nullptr);

// `check-config --strict`: each export opened as the daemon would open it (the path
// exists, is a directory, gives file handles; with `mp`, is a mount point). One problem
// per export that could not be served, each saying what is wrong; empty when all can.
std::vector<std::string> check_exports(const config::Config& cfg);

}  // namespace nfsrdmad::daemon
