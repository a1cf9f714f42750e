#include "daemon/exports.h"

#include <spdlog/spdlog.h>

#include "nfs/vfs/fs_identity.h"

namespace nfsrdmad::daemon {

namespace {

uint32_t flavor_number(config::SecFlavor f) {
    switch (f) {
        case config::SecFlavor::None:
            return vfs::kAuthNone;
        case config::SecFlavor::Sys:
            return vfs::kAuthSys;
        case config::SecFlavor::Krb5:
            return vfs::kAuthKrb5;
        case config::SecFlavor::Krb5i:
            return vfs::kAuthKrb5i;
        case config::SecFlavor::Krb5p:
            return vfs::kAuthKrb5p;
    }
    return vfs::kAuthSys;
}

vfs::ClientRule to_rule(const config::ClientRule& c) {
    vfs::ClientRule r;
    using K = config::ClientMatch::Kind;
    r.match.kind = c.match.kind == K::Any    ? vfs::ClientRule::Match::Any
                   : c.match.kind == K::Cidr ? vfs::ClientRule::Match::Cidr
                                             : vfs::ClientRule::Match::Hostname;
    r.match.family = c.match.family;
    r.match.addr = c.match.addr;
    r.match.prefix = c.match.prefix;
    r.match.hostname = c.match.hostname;
    r.read_write = c.access == config::Access::ReadWrite;
    r.squash = c.squash == config::Squash::None   ? vfs::ClientRule::None
               : c.squash == config::Squash::Root ? vfs::ClientRule::Root
                                                  : vfs::ClientRule::All;
    r.anonuid = c.anonuid;
    r.anongid = c.anongid;
    r.secure = c.secure;
    for (auto f : c.sec) r.flavors.push_back(flavor_number(f));
    return r;
}

}  // namespace

std::vector<vfs::ExportSpec> to_export_specs(const std::vector<config::Export>& exports,
                                             rpc::ExportStats* stats) {
    std::vector<vfs::ExportSpec> specs;
    for (const auto& e : exports) {
        vfs::ExportSpec s;
        s.path = e.path;
        s.fsid = e.fsid.value_or(0);
        for (const auto& c : e.clients) s.rules.push_back(to_rule(c));
        if (stats) s.stats_slot = stats->slot_for(e.path);
        specs.push_back(std::move(s));
    }
    return specs;
}

std::shared_ptr<const vfs::ExportTable> build_export_table(const config::Config& cfg,
                                                           const vfs::HandleKey& key,
                                                           std::string* why,
                                                           rpc::ExportStats* stats) {
    // exports(5) `mp`: an export whose filesystem is not mounted is left out (its clients'
    // MOUNT is refused, their handles are stale), not served from the directory beneath,
    // and the others are served. Mounting it and reloading (SIGHUP) brings it in.
    std::vector<config::Export> mounted;
    for (const auto& e : cfg.exports) {
        if (e.mountpoint) {
            auto root = vfs::is_mount_root(e.path);
            if (!root || !*root) {
                spdlog::error(
                    "export {}: {} (mp): not served until its filesystem is mounted there and "
                    "the daemon reloaded",
                    e.path, root ? "not a mount point" : vfs::describe_error(root.error()));
                continue;
            }
        }
        mounted.push_back(e);
    }
    auto table = vfs::ExportTable::create(to_export_specs(mounted, stats), key, why);
    if (!table) return nullptr;
    if (stats)
        for (const auto& e : (*table)->exports()) stats->publish(e->spec().stats_slot);
    return *table;
}

std::vector<std::string> check_exports(const config::Config& cfg) {
    std::vector<std::string> problems;
    const vfs::HandleKey key{};  // handles are made, not kept: any key will do
    for (const auto& e : cfg.exports) {
        if (e.mountpoint) {
            auto root = vfs::is_mount_root(e.path);
            if (!root || !*root) {
                problems.push_back(
                    "export " + e.path + ": " +
                    (root ? "not a mount point" : vfs::describe_error(root.error())) +
                    " (mp): it would not be served until its filesystem is mounted");
                continue;
            }
        }
        std::string why;
        if (!vfs::ExportTable::create(to_export_specs({e}), key, &why)) problems.push_back(why);
    }
    return problems;
}

}  // namespace nfsrdmad::daemon
