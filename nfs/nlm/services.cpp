#include "nfs/nlm/services.h"

#include <spdlog/spdlog.h>

#include <cstring>
#include <set>

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

void Services::monitor(const rpc::Peer* peer, std::string_view caller_name, int32_t state) {
    const std::string host = peer ? peer_host(*peer) : std::string();
    hosts.set_state(caller_name, host, state);
    if (hosts.mark_monitored(caller_name, host))
        if (rpc::CallbackSender* cb = callbacks())
            (void)monitor_host(*cb, std::string(HostTable::watch_of(caller_name, host)));
    if (!options.hosts_store || host.empty()) return;
    std::lock_guard g(store_mu_);
    if (auto r = options.hosts_store->add(host); !r)
        spdlog::warn("nlm: host {} could not be recorded for notification after a restart: {}",
                     host, std::strerror(r.error()));
}

void Services::check_state(std::string_view caller_name, std::string_view address, int32_t state) {
    auto known = hosts.state(caller_name, address);
    if (!known || *known == state) return;
    auto woken = free_all(caller_name, address);
    spdlog::info(
        "nsm: host '{}' at {} locks at NSM state {} (was {}): it rebooted; its earlier locks "
        "are released",
        log_text(caller_name), address, state, *known);
    hosts.set_state(caller_name, address, state);
    wake(std::move(woken));
}

void Services::nsm_rebooted(std::string_view mon_name, int32_t state) {
    // Our own restart notice, come back: a client on this very host shares its statd (and
    // rpcbind, so statd's calls for the client's lockd reach this daemon); statd tells every
    // watcher of "10.0.0.1" that it rebooted, the client's lockd's watch of its server
    // among them, at the state this daemon sent. Those locks were just reclaimed.
    if (const int32_t own = own_state_.load(std::memory_order_relaxed); own != 0 && state == own) {
        spdlog::info(
            "nsm: a reboot notice for '{}' at our own NSM state {}: our restart, echoed "
            "back by a statd a client on this host shares: ignored",
            log_text(mon_name), state);
        return;
    }
    // statd names what it watches as it was asked (watch_of()): an address, or a name.
    // A statd that kept a watch from an older daemon may name a host by its caller_name.
    std::vector<HostTable::Named> there = hosts.at(mon_name);
    if (there.empty()) there = hosts.named(mon_name);
    if (there.empty())
        spdlog::info("nsm: host '{}' rebooted: it holds nothing here", log_text(mon_name));
    for (const HostTable::Named& h : there) {
        if (hosts.state(h.name, h.address) == state) {
            spdlog::info(
                "nsm: host '{}' ({}) rebooted, and has locked since at its new state {}: kept",
                log_text(mon_name), log_text(h.name), state);
            continue;
        }
        auto woken = free_all(h.name, h.address);
        spdlog::info("nsm: host '{}' ({}) rebooted: its locks are released", log_text(mon_name),
                     log_text(h.name));
        wake(std::move(woken));
    }
}

bool Services::host_idle(uint64_t id) const {
    const vs::ClientKey k{vs::Protocol::Nlm, id};
    return locks.lock_count(k) == 0 && locks.waiter_count(k) == 0 && shares.share_count(k) == 0;
}

std::optional<uint64_t> Services::host_id(std::string_view name, std::string_view address) {
    return hosts.id(name, address, [this](uint64_t id) { return host_idle(id); });
}

std::vector<vs::Waiter> Services::free_all(std::string_view name, std::string_view address) {
    auto id = hosts.forget(name, address);
    if (!id) return {};
    // Nothing of it is left to reclaim after a restart of ours.
    unrecord(std::string(address));
    const vs::ClientKey k{vs::Protocol::Nlm, *id};
    (void)shares.release_client(k);
    blocked.drop_client(k);
    {
        std::lock_guard l(grants_mu_);
        std::erase_if(pending_grants_, [&k](const auto& e) { return e.second.client == k; });
    }
    return locks.release_client(k);
}

bool Services::share_conflict(const vfs::FileHandle& fh, uint32_t access, uint32_t deny) const {
    auto ref = exports->snapshot()->find_by_handle(fh.data());
    if (!ref) return false;
    // An owner no NLM share has (NFSv4.1, id 0): every NLM share is another owner's.
    const vs::ShareBits want{static_cast<uint8_t>(access & vs::kShareBoth),
                             static_cast<uint8_t>(deny & vs::kShareBoth)};
    return shares.check(vs::FileKey::of(ref->decoded), vs::StateOwner{}, want).has_value();
}

vfs::Result<vs::LockReply> Services::lock(const vs::FileKey& file, const vs::StateOwner& owner,
                                          const vs::Lock& want, std::optional<uint64_t> wait,
                                          vs::LockMirror* mirror) {
    for (size_t reaped = 0;; ++reaped) {
        auto r = locks.lock(file, owner, want, wait, mirror);
        if (!r || !r->denied || reaped == kMaxCourtesyReaps || !options.reap_lock_holder ||
            !options.reap_lock_holder(*r->denied))
            return r;
    }
}

vfs::Result<std::optional<vs::Conflict>> Services::test(const vs::FileKey& file,
                                                        const vs::StateOwner& owner,
                                                        const vs::Lock& want,
                                                        vs::LockMirror* mirror) {
    for (size_t reaped = 0;; ++reaped) {
        auto r = locks.test(file, owner, want, mirror);
        if (!r || !*r || reaped == kMaxCourtesyReaps || !options.reap_lock_holder ||
            !options.reap_lock_holder(**r))
            return r;
    }
}

void Services::unrecord(const std::string& address) {
    if (!options.hosts_store || address.empty()) return;
    std::lock_guard g(store_mu_);
    if (hosts.address_in_use(address)) return;
    if (auto r = options.hosts_store->remove(address); !r)
        spdlog::warn("nlm: the record of hosts to notify could not be rewritten: {}",
                     std::strerror(r.error()));
}

void Services::set_reboot_notices(std::unique_ptr<RebootNotices> n) {
    if (n) own_state_.store(n->state(), std::memory_order_relaxed);
    std::lock_guard l(notices_mu_);
    notices_ = std::move(n);
}

size_t Services::reboot_notices_pending() const {
    std::lock_guard l(notices_mu_);
    return notices_ ? notices_->pending() : 0;
}

std::chrono::milliseconds Services::housekeep(Clock::time_point now) {
    rpc::CallbackSender* cb = callbacks();
    bool notifying = false;
    {
        std::lock_guard l(notices_mu_);
        if (notices_ && cb) {
            (void)notices_->send_due(*cb, now);
            notifying = notices_->pending() > 0;
            if (!notifying) notices_.reset();  // every host answered or was given up on
        }
    }
    std::set<std::string> unwatched;  // one SM_UNMON per watch, however many hosts left it
    for (const HostTable::Gone& g :
         hosts.take_idle([this](uint64_t id) { return host_idle(id); }, now - kHostExpire)) {
        // statd watches the address while any host there is monitored. A host that locks
        // there again while SM_UNMON is on its way is watched again once statd has
        // answered: its SM_MON may have reached statd first.
        const std::string watch(HostTable::watch_of(g.name, g.address));
        auto again = [this, cb, watch] {
            if (hosts.watched(watch)) (void)monitor_host(*cb, watch);
        };
        if (g.monitored && cb && !hosts.watched(watch) && unwatched.insert(watch).second &&
            !unmonitor_host(*cb, watch, again))
            spdlog::warn("nsm: too many calls in flight: SM_UNMON of '{}' not sent",
                         log_text(watch));
        unrecord(g.address);
    }
    // Notices are retried from 2 s on (nsm_notify.h); the sweep needs no hurry.
    return notifying ? std::chrono::milliseconds(1000) : std::chrono::milliseconds(10000);
}

}  // namespace nfsrdmad::nfs::nlm
