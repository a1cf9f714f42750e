#include "nfs/nlm/services.h"

#include <spdlog/spdlog.h>

#include <cstring>

#include "nfs/common/authorize.h"
#include "nfs/common/log_text.h"
#include "nfs/nlm/nsm_monitor.h"

namespace nfsrdmad::nfs::nlm {

namespace vs = vfs::state;

Services::Services(std::shared_ptr<vfs::ExportRegistry> e, const Options& o)
    : options(o),
      exports(std::move(e)),
      lock_table(o.locks ? o.locks : std::make_shared<vs::LockTable>()),
      locks(*lock_table),
      hosts(o.max_hosts),
      blocked(o.max_blocked) {}

bool Services::in_grace() {
    if (grace_over_.load(std::memory_order_relaxed)) return false;
    if (options.in_grace && options.in_grace()) return true;
    if (!grace_over_.exchange(true) && options.hosts_store)
        if (auto r = options.hosts_store->end_grace(); !r)
            spdlog::warn("nlm: the record of hosts to notify could not be rewritten: {}",
                         std::strerror(r.error()));
    return false;
}

void Services::monitor(const rpc::Peer* peer, std::string_view caller_name) {
    if (hosts.mark_monitored(caller_name))
        if (rpc::CallbackSender* cb = callbacks())
            (void)monitor_host(*cb, std::string(caller_name));
    if (!options.hosts_store || !peer) return;
    const std::string host = peer_host(*peer);
    if (host.empty()) return;
    if (auto r = options.hosts_store->add(host); !r)
        spdlog::warn("nlm: host {} could not be recorded for notification after a restart: {}",
                     host, std::strerror(r.error()));
}

void Services::nsm_rebooted(std::string_view mon_name) {
    auto woken = free_all(mon_name);
    spdlog::info("nsm: host '{}' rebooted: its locks are released", log_text(mon_name));
    wake(std::move(woken));
}

std::optional<uint64_t> Services::host_id(std::string_view name, std::string_view address) {
    auto idle = [this](uint64_t id) {
        const vs::ClientKey k{vs::Protocol::Nlm, id};
        return locks.lock_count(k) == 0 && locks.waiter_count(k) == 0 && shares.share_count(k) == 0;
    };
    return hosts.id(name, idle, address);
}

std::vector<vs::Waiter> Services::free_all(std::string_view name) {
    auto id = hosts.forget(name);
    if (!id) return {};
    const vs::ClientKey k{vs::Protocol::Nlm, *id};
    (void)shares.release_client(k);
    blocked.drop_client(k);
    {
        std::lock_guard l(grants_mu_);
        std::erase_if(pending_grants_, [&k](const auto& e) { return e.second == k; });
    }
    return locks.release_client(k);
}

}  // namespace nfsrdmad::nfs::nlm
