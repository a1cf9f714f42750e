#include "nfs/nlm/services.h"

namespace nfsrdmad::nfs::nlm {

namespace vs = vfs::state;

Services::Services(std::shared_ptr<vfs::ExportRegistry> e, const Options& o)
    : options(o),
      exports(std::move(e)),
      lock_table(o.locks ? o.locks : std::make_shared<vs::LockTable>()),
      locks(*lock_table),
      hosts(o.max_hosts),
      blocked(o.max_blocked) {}

std::optional<uint64_t> Services::host_id(std::string_view name) {
    return hosts.id(name, [this](uint64_t id) {
        const vs::ClientKey k{vs::Protocol::Nlm, id};
        return locks.lock_count(k) == 0 && locks.waiter_count(k) == 0 && shares.share_count(k) == 0;
    });
}

std::vector<vs::Waiter> Services::free_all(std::string_view name) {
    auto id = hosts.forget(name);
    if (!id) return {};
    const vs::ClientKey k{vs::Protocol::Nlm, *id};
    (void)shares.release_client(k);
    blocked.drop_client(k);
    return locks.release_client(k);
}

}  // namespace nfsrdmad::nfs::nlm
