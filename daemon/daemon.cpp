#include "daemon/daemon.h"

#include <sys/stat.h>
#include <unistd.h>

#include <spdlog/spdlog.h>
#include <chrono>
#include <cstdlib>
#include <cstring>
#include <filesystem>
#include <functional>
#include <thread>

#include "config/load.h"
#include "daemon/control.h"
#include "daemon/control_answers.h"
#include "daemon/exports.h"
#include "daemon/fd_limits.h"
#include "daemon/kerberos.h"
#include "daemon/memlock.h"
#include "daemon/metrics.h"
#include "daemon/service_manager.h"
#include "daemon/signals.h"
#include "nfs/mount/mount_program.h"
#include "nfs/nlm/nlm_program.h"
#include "nfs/nlm/nsm_notify.h"
#include "nfs/v3/nfs3_program.h"
#include "nfs/v4/id_map.h"
#include "nfs/v4/nfs4_program.h"
#include "nfs/vfs/durability.h"
#include "nfs/vfs/file_watch.h"
#include "nfs/vfs/recovery_store.h"
#include "nfs/vfs/state/grace.h"
#include "nfs/vfs/state_lock.h"
#include "transport/engine/reactor.h"
#include "transport/engine/worker_pool.h"
#include "transport/rdma/server.h"
#include "transport/rpc/auth/gss/gss.h"
#include "transport/rpc/auth/gss/host_keys.h"
#include "transport/rpc/back_channel.h"
#include "transport/rpc/dispatcher.h"
#include "transport/rpc/latency_clock.h"
#include "transport/rpc/rpcbind.h"
#include "transport/tcp/callback_client.h"
#include "transport/tcp/server.h"
#include "transport/udp/server.h"
#include "xdr/mount_prot.h"
#include "xdr/nfs4_prot.h"
#include "xdr/nlm_prot.h"

namespace nfsrdmad::daemon {

namespace {

unsigned reactor_count(const config::Config& cfg) {
    if (cfg.engine_threads) return cfg.engine_threads;
    unsigned n = std::thread::hardware_concurrency();
    return n ? n : 1;
}

void log_exports(const vfs::ExportTable& t) {
    for (const auto& e : t.exports())
        spdlog::info("export {} (fsid {:#x} from {}, {} client rule(s))", e->path(), e->fsid(),
                     e->fsid_source(), e->spec().rules.size());
    if (t.exports().empty()) spdlog::warn("no exports configured: clients can mount nothing");
}

// SIGHUP: re-read the file (and the command line's additions). A bad new
// configuration is rejected as a whole and the running one stays (false).
// `gss_on`: RPCSEC_GSS was turned on at start; it is never turned on by a reload.
// `running`: the configuration the daemon started with (what a reload cannot change).
bool reload(const Options& opts, const config::Config& running, const vfs::HandleKey& key,
            vfs::ExportRegistry& registry, bool gss_on, rpc::ExportStats& stats) {
    config::Config cfg;
    if (opts.config_path) {
        auto loaded = config::load_file(*opts.config_path);
        if (!loaded.config) {
            for (auto& e : loaded.errors) spdlog::error("reload: {}", e.str());
            spdlog::error("reload: keeping the current exports");
            return false;
        }
        cfg = *loaded.config;
    }
    if (auto errs = config::apply_overrides(cfg, opts.overrides); !errs.empty()) {
        for (auto& e : errs) spdlog::error("reload: {}", e.str());
        return false;
    }
    std::string why;
    auto table = build_export_table(cfg, key, &why, &stats);
    if (!table) {
        spdlog::error("reload: {}; keeping the current exports", why);
        return false;
    }
    registry.replace(table);
    spdlog::info("reload: exports replaced");
    log_exports(*table);
    spdlog::set_level(spdlog::level::from_str(cfg.log_level));
    cfg.state_dir = std::filesystem::absolute(cfg.state_dir).lexically_normal().string();
    for (const auto& what : config::restart_only_changes(running, cfg))
        spdlog::warn(
            "reload: '{}' changed in the configuration: it takes effect when nfsrdmad "
            "restarts",
            what);
    if (kerberos_wanted(cfg) && !gss_on)
        spdlog::warn(
            "reload: the configuration asks for Kerberos (a krb5 flavor or the kerberos "
            "section), but RPCSEC_GSS is off since start: Kerberos mounts are refused until "
            "nfsrdmad is restarted");
    return true;
}

void dump_stats(const MetricsSources& s) {
    const auto& d = s.dispatcher;
    const auto& files = s.files;
    auto* nfs4 = s.nfs4;
    const uint64_t nofile = s.nofile_limit;
    const auto& c = d.counters();
    const auto& t = s.tcp.counters();
    spdlog::info(
        "stats: rpc calls={} dropped={} garbage_args={} auth_errors={} prog_unavail={} "
        "prog_mismatch={} proc_unavail={} system_errors={} drc_replays={} drc_entries={} "
        "control_calls={} protected_bytes={} inlined_payload_bytes={} unwrapped_bytes={} "
        "nowait_answered={} nowait_given_up={} nowait_declined={} deferred={} "
        "deferred_now={} deferred_woken={} deferred_kept_bytes={} defer_full={} "
        "defer_gave_up={}",
        c.calls.load(), c.dropped.load(), c.garbage_args.load(), c.auth_errors.load(),
        c.prog_unavail.load(), c.prog_mismatch.load(), c.proc_unavail.load(),
        c.system_errors.load(), c.cache_replays.load(), d.reply_cache().size(),
        c.control_calls.load(), c.protected_bytes.load(), c.inlined_payload_bytes.load(),
        c.unwrapped_bytes.load(), c.nowait_answered.load(), c.nowait_given_up.load(),
        c.nowait_declined.load(), c.deferred.load(), d.deferred_now(), d.deferred_wakes()->woken(),
        d.kept_bytes(), c.defer_full.load(), c.defer_gave_up.load());
    spdlog::info(
        "stats: tcp accepted={} closed={} rejected={} idle_closed={} accept_errors={} "
        "records={} oversize={} bytes_in={} bytes_out={} payload_spliced_bytes={} "
        "payload_copied_bytes={} record_moved_bytes={} back_calls={} back_failed={} "
        "stray_replies={} worker_replies={} reactor_calls={}",
        t.accepted.load(), t.closed.load(), t.rejected.load(), t.idle_closed.load(),
        t.accept_errors.load(), t.records.load(), t.oversize_records.load(), t.bytes_in.load(),
        t.bytes_out.load(), t.payload_spliced_bytes.load(), t.payload_copied_bytes.load(),
        t.record_moved_bytes.load(), t.back_calls.load(), t.back_failed.load(),
        t.stray_replies.load(), t.worker_replies.load(), t.reactor_calls.load());
    spdlog::info("stats: vfs metadata_commits={}", vfs::metadata_commits());
    const auto fp = vfs::fd_pressure_stats();
    spdlog::info(
        "stats: fds open={} limit={} cache_capacity={} cache_entries={} cache_evictions={} "
        "cache_reclaimed={} cache_path_entries={} cache_idle_closed={} emfile_retries={} "
        "emfile_exhausted={}",
        open_fd_count(), nofile, files.capacity(), files.size(), files.evictions(),
        files.reclaimed(), files.path_entries(), files.idle_closed(), fp.retries, fp.exhausted);
    if (nfs4) {
        // NFSv4.1 state: what a client holds (and what a leak would leave behind).
        auto& v4 = nfs4->services();
        const auto n = v4.clients.totals();
        spdlog::info(
            "stats: nfs4 clients={} sessions={} stateids={} opens={} lock_stateids={} "
            "locked_files={} mach_cred={}",
            n.clients, n.sessions, n.stateids, v4.opens.size(), v4.lock_states.size(),
            v4.locks.file_count(), n.mach_cred);
        const auto& d = v4.delegation_stats;
        spdlog::info(
            "stats: nfs4_delegations held={} write={} granted={} recalls={} recall_failures={} "
            "returned={} revoked={} cb_getattrs={} recall_any={} removed={} local_changes={}",
            v4.delegations.size(), v4.delegations.writes(), d.granted.load(), d.recalls.load(),
            d.recall_failures.load(), d.returned.load(), d.revoked.load(), d.getattrs.load(),
            d.recall_any.load(), d.removed.load(), d.local_changes.load());
    }
    if (s.rdma)
        for (const auto& line : s.rdma->stats()) spdlog::info("stats: {}", line);
    if (s.reactors && s.workers) {
        // The loops: sleeps and wake-ups summed, and each polling reactor's spin now.
        uint64_t sleeps = 0, wakeups = 0, lent = 0;
        std::string spins;
        for (const auto& r : s.reactors->stats()) {
            sleeps += r.sleeps;
            wakeups += r.wakeups;
            lent += r.lent;
            if (r.spins) spins += fmt::format("{}{}", spins.empty() ? "" : ",", r.spin_window_ns);
        }
        const auto w = s.workers->stats();
        spdlog::info(
            "stats: engine reactors={} sleeps={} wakeups={} lent={} spin_window_ns={} threads={} "
            "queued={} running={} parked={} hand_overs={} loops_taken_back={}",
            s.reactors->size(), sleeps, wakeups, lent, spins.empty() ? "-" : spins, w.threads,
            w.queued, w.running, w.parked, w.hand_overs, w.loops_taken_back);
    }
    // The dump's last line, numbered: whoever sent SIGUSR1 knows the whole dump is written
    // once dump=N+1 appears (tests/vm's nfsrdmad_dump waits for it instead of sleeping).
    static uint64_t dumps = 0;  // only the main thread dumps
    spdlog::info("stats: end dump={}", ++dumps);
}

engine::Mode engine_mode(config::EngineMode m) {
    switch (m) {
        case config::EngineMode::Event:
            return engine::Mode::Event;
        case config::EngineMode::Poll:
            return engine::Mode::Poll;
        case config::EngineMode::Adaptive:
            return engine::Mode::Adaptive;
    }
    return engine::Mode::Adaptive;
}

rdma::ServerOptions rdma_options(const config::Config& cfg) {
    rdma::ServerOptions o;
    o.credits = cfg.rdma_tuning.credits;
    o.max_connections = cfg.rdma_tuning.max_connections;
    o.pools = pool_sizes(cfg);
    o.reactor_calls = cfg.reactor_calls;
    // Test hooks (tests/vm): received RPC-over-RDMA messages written out as fuzz seeds;
    // the iWARP per-Read sink registration on any device; a shallow send queue.
    if (const char* e = std::getenv("NFSRDMAD_RDMA_CAPTURE_DIR"); e && *e) {
        o.capture_dir = e;
        spdlog::warn("rdma: received messages are written to {} (NFSRDMAD_RDMA_CAPTURE_DIR)", e);
    }
    if (const char* e = std::getenv("NFSRDMAD_RDMA_PER_READ_SINKS"); e && *e == '1') {
        o.pools.per_read_sinks = true;
        spdlog::warn("rdma: every RDMA Read registers its own sink (NFSRDMAD_RDMA_PER_READ_SINKS)");
    }
    // A shallow send queue, so that work waits for slots (send_queue.h): 3 (a Write, its
    // Send and a Read) to 65536. Replies with longer chains are posted in parts.
    if (const char* e = std::getenv("NFSRDMAD_RDMA_SEND_QUEUE_DEPTH"); e && *e) {
        char* end = nullptr;
        const unsigned long n = std::strtoul(e, &end, 10);
        if (*end || n < 3 || n > 65536) {
            spdlog::warn("rdma: NFSRDMAD_RDMA_SEND_QUEUE_DEPTH={} ignored (3 .. 65536)", e);
        } else {
            o.send_queue_depth = static_cast<uint32_t>(n);
            spdlog::warn("rdma: send queues of {} work requests (NFSRDMAD_RDMA_SEND_QUEUE_DEPTH)",
                         o.send_queue_depth);
        }
    }
    o.inline_size = cfg.rdma_tuning.inline_size;
    o.send_timeout = std::chrono::seconds(cfg.rdma_tuning.send_timeout);
    return o;
}

// The NFSv4.1 fore channel the server offers (RFC 8881 §18.36.3: CREATE_SESSION clamps
// the client's ca_maxrequestsize and ca_maxresponsesize to it) promises no more than each
// transport carries, since a session's requests may come on any of its connections. TCP:
// one record. RPC-over-RDMA: a call or reply beyond the inline size goes by chunks (RFC
// 8166 §3.5: a long call in a position-zero read chunk, a long reply in the reply chunk),
// so the bound is the chunk limits fitted to the payload buffers, not the inline size;
// only the backchannel is held to that (RFC 8167: reverse-direction messages travel
// inline, without chunks).
nfs::v4::state::ChannelLimits fore_channel(const config::Config& cfg) {
    nfs::v4::state::ChannelLimits fore;
    auto clamp = [](uint32_t& v, uint64_t bound) {
        v = static_cast<uint32_t>(std::min<uint64_t>(v, bound));
    };
    clamp(fore.max_request_size, cfg.max_record_size);
    if (!cfg.rdma.empty()) {
        const rdma::ServerOptions r = rdma_options(cfg);
        const rdma::Limits l = rdma::fit_to_buffer(r.limits, r.pools.payload_size);
        clamp(fore.max_request_size, l.max_call);
        clamp(fore.max_response_size, l.max_message);
    }
    return fore;
}

// RPC-over-RDMA listeners. nullptr (and a warning) when the host has no RDMA device;
// false when a listener the configuration asks for cannot be set up.
bool start_rdma(const config::Config& cfg, engine::ReactorGroup& reactors,
                engine::WorkerPool& workers, rpc::Dispatcher& dispatcher,
                std::shared_ptr<rpc::ChannelRegistry> channels,
                std::unique_ptr<rdma::Server>& out) {
    if (cfg.rdma.empty()) return true;
    if (rdma::Server::log_devices() == 0) {
        spdlog::warn("rdma: no RDMA device on this host: serving TCP only");
        return true;
    }
    auto opts = rdma_options(cfg);
    opts.channels = std::move(channels);  // RFC 8167: the NFSv4.1 backchannel over RDMA
    if (auto err = check_memlock(opts.pools); !err.empty()) {
        spdlog::critical("rdma: {}", err);
        return false;
    }
    out = std::make_unique<rdma::Server>(reactors, workers, dispatcher, opts);
    for (const auto& l : cfg.rdma) {
        if (auto err = out->listen(l.address, l.port); !err.empty()) {
            spdlog::critical("rdma {}:{}: {}", l.address, l.port, err);
            return false;
        }
    }
    return true;
}

// Periodic sweeps (NFSv4.1 leases, RFC 8881 §8.3; NLM's reboot notices and idle hosts): a
// timer on one reactor hands the sweep to a worker (reaping a client closes its files,
// a notice is a callback: no work for a reactor) and the worker hands the next arming
// back to the reactor, with the delay the sweep asked for. The chain ends when the
// reactor stops (a posted or pending timer then never runs).
void arm_sweep(engine::Reactor& reactor, engine::WorkerPool& workers,
               std::function<std::chrono::milliseconds()> sweep, std::chrono::milliseconds delay) {
    reactor.after(delay, [&reactor, &workers, sweep = std::move(sweep)]() mutable {
        workers.submit([&reactor, &workers, sweep = std::move(sweep)]() mutable {
            const std::chrono::milliseconds next = sweep();
            reactor.post([&reactor, &workers, sweep = std::move(sweep), next]() mutable {
                arm_sweep(reactor, workers, std::move(sweep), next);
            });
        });
    });
}

// RPCSEC_GSS (RFC 2203) when an export lists a krb5 flavor or the `kerberos:` section is
// given. Without service keys it stays off, said at error level: krb5 mounts are then
// refused (AUTH_BADCRED), AUTH_SYS ones go on. True when RPCSEC_GSS is on.
bool add_gss_flavor(const config::Config& cfg, rpc::Dispatcher& dispatcher) {
    if (!kerberos_wanted(cfg)) return false;
    for (const auto& f : check_keytab(cfg))
        if (!f.error) spdlog::warn("rpcsec_gss: {}", f.text);
    rpc::GssOptions o;
    o.keytab = cfg.kerberos.keytab;
    o.max_contexts = cfg.kerberos.max_contexts;
    o.seq_window = cfg.kerberos.seq_window;
    std::string why;
    auto gss = rpc::make_auth_gss(o, &why);
    if (!gss) {
        spdlog::error("rpcsec_gss: off: {}; Kerberos mounts will be refused", why);
        return false;
    }
    dispatcher.auth().add(std::move(gss));
    const std::string realm = rpc::gss::default_realm();
    spdlog::info("rpcsec_gss: on (keytab {}, window {}, at most {} contexts, realm {})", o.keytab,
                 o.seq_window, o.max_contexts, realm.empty() ? "none" : realm);
    if (realm.empty())
        spdlog::warn(
            "rpcsec_gss: krb5.conf names no default realm: machine principals "
            "(host/, nfs/) act as the exports' anonymous id, not as root");
    return true;
}

}  // namespace

int run(config::Config cfg, const Options& opts) {
    SignalWaiter signals;  // before any thread starts, so all inherit the mask

    const NofileLimit nofile = raise_nofile_limit();
    if (!nofile.error.empty())
        spdlog::warn("descriptors: cannot raise RLIMIT_NOFILE from {} to {}: {}", nofile.before,
                     nofile.hard, nofile.error);
    else
        spdlog::info("descriptors: RLIMIT_NOFILE {} (was {}, hard limit {})", nofile.soft,
                     nofile.before, nofile.hard);
    const unsigned reactor_threads = reactor_count(cfg);
    const unsigned rdma_reactor_threads = cfg.rdma.empty() ? 0 : reactor_threads;
    const vfs::FdReserve reserve = fd_reserve(cfg, reactor_threads + rdma_reactor_threads);
    const size_t fd_cache =
        cfg.fd_cache ? cfg.fd_cache : vfs::fd_cache_capacity(nofile.soft, reserve);
    spdlog::info(
        "descriptors: cache of {} open files ({}; {} reserved: {} connections, {} pipes x2, {} "
        "workers, {} exports, {} lock files, {} other)",
        fd_cache, cfg.fd_cache ? "engine.fd_cache" : "from the limit", reserve.total(),
        reserve.connections, reserve.pipes, reserve.workers, reserve.exports,
        reserve.lock_descriptions, reserve.other);
    if (reserve.total() + fd_cache > nofile.soft)
        spdlog::warn(
            "descriptors: RLIMIT_NOFILE {} is below what tcp.max_connections, tcp.max_pipes "
            "and workers may need ({}): past it, connections wait in the backlog and "
            "requests are answered NFS3ERR_JUKEBOX",
            nofile.soft, reserve.total() + fd_cache);

    std::string why;
    if (!vfs::make_state_dir(cfg.state_dir, &why)) {
        spdlog::critical("state directory: {}", why);
        return 1;
    }
    // Held until run() returns: the process ending drops it whatever the way.
    const auto state_lock = vfs::StateDirLock::acquire(cfg.state_dir, &why);
    if (!state_lock) {
        spdlog::critical("state directory: {}", why);
        return 1;
    }
    auto key = vfs::load_or_create_handle_key(cfg.state_dir, &why);
    if (!key) {
        spdlog::critical("handle key: {}", why);
        return 1;
    }
    rpc::Dispatcher dispatcher;
    auto table = build_export_table(cfg, *key, &why, &dispatcher.export_stats());
    if (!table) {
        spdlog::critical("exports: {}", why);
        return 1;
    }
    log_exports(*table);
    auto registry = std::make_shared<vfs::ExportRegistry>(table);

    const bool gss_on = add_gss_flavor(cfg, dispatcher);
    auto mounts = std::make_shared<nfs::mount::MountProgram>(registry);
    dispatcher.add(mounts);
    // One descriptor cache for NFSv3 and NFSv4.1: a file both protocols use is open once,
    // and fd_cache is the whole budget the limit left for open files.
    auto files = std::make_shared<vfs::FdCache>(fd_cache);
    auto nfs3 = std::make_shared<nfs::v3::Nfs3Program>(registry, files);
    dispatcher.add(nfs3);
    // One byte-range lock table for NLM and NFSv4.1: their locks conflict with each
    // other's, and (locks.local) with local processes' through OFD locks on the files.
    auto lock_table = std::make_shared<vfs::state::LockTable>();
    std::shared_ptr<vfs::state::OfdBudget> lock_files;
    if (cfg.locks.local)
        lock_files = std::make_shared<vfs::state::OfdBudget>(cfg.locks.max_files,
                                                             cfg.locks.max_files_per_client);
    // The hosts that held NLM locks before this boot: notified below (NSM), they reclaim in
    // the grace period NLM shares with NFSv4.1.
    auto nlm_hosts = vfs::RecoveryStore::open(cfg.state_dir, static_cast<uint32_t>(::time(nullptr)),
                                              &why, vfs::RecoveryStore::kNlmHostsFile);
    if (!nlm_hosts) {
        spdlog::critical("nlm: hosts to notify after a restart: {}", why);
        return 1;
    }
    std::shared_ptr<vfs::RecoveryStore> nlm_store = std::move(*nlm_hosts);
    const size_t nlm_previous = nlm_store->previous().size();
    // NLM grants its blocked locks when an NFSv4.1 unlock frees them too (set below).
    auto nlm_wake = std::make_shared<std::function<void(std::vector<vfs::state::Waiter>)>>();
    auto file_changed = std::make_shared<std::function<void(const vfs::FileHandle&)>>();
    std::shared_ptr<vfs::FileWatch> watch;
    // NFSv4.1's OPEN and NLM's SHARE see each other's share reservations (set below).
    auto nlm_shares =
        std::make_shared<std::function<bool(const vfs::FileHandle&, uint32_t, uint32_t)>>();
    // TCP and RDMA connections that carry calls to their clients: the NFSv4.1 backchannel.
    auto channels = std::make_shared<rpc::ChannelRegistry>();
    std::shared_ptr<nfs::v4::Nfs4Program> nfs4;
    if (cfg.nfs4.enabled) {
        nfs::v4::Options o;
        o.limits.lease = std::chrono::seconds(cfg.nfs4.lease_time);
        o.limits.max_clients = cfg.nfs4.max_clients;
        o.limits.fore = fore_channel(cfg);
        // RFC 8881 §5.9: owners go out as name@domain, and a client maps them back only
        // when its domain is the same; unset, take the one its nfsidmap would find here.
        std::string domain_from = "nfsv4.domain";
        o.domain = cfg.nfs4.domain;
        if (o.domain.empty()) {
            auto found = nfs::v4::system_id_domain();
            if (!found.warning.empty()) spdlog::warn("nfsv4.1: {}", found.warning);
            o.domain = found.domain;
            domain_from = found.source;
        }
        o.files = files;
        auto store = vfs::RecoveryStore::open(cfg.state_dir, static_cast<uint32_t>(::time(nullptr)),
                                              &why);
        if (!store) {
            spdlog::critical("nfsv4.1: client recovery records: {}", why);
            return 1;
        }
        o.recovery_store = std::move(*store);
        o.lock_files = lock_files;
        o.lock_table = lock_table;
        o.nlm_hosts = nlm_previous;
        o.woken = [nlm_wake](std::vector<vfs::state::Waiter> w) {
            if (*nlm_wake) (*nlm_wake)(std::move(w));
        };
        o.back_channels = channels;
        o.delegations = cfg.nfs4.delegations;
        // Calls put off by a delegation run again as soon as it is gone.
        o.held_calls_freed = [wakes = dispatcher.deferred_wakes()] { wakes->wake_all(); };
        // A delegation keeps its file open (I/O through its stateid after the client's
        // CLOSE): half the descriptor cache's worth at most.
        o.max_delegations = std::max<size_t>(16, fd_cache / 2);
        o.write_delegations = cfg.nfs4.write_delegations;
        if (o.delegations) {
            // Local changes to delegated files that a file lease does not see
            // (vfs/file_watch.h); the recalls go out from a worker (set below, once the
            // pool runs: no file is watched before a delegation is granted).
            auto w = vfs::FileWatch::start([file_changed](const vfs::FileHandle& h) {
                if (*file_changed) (*file_changed)(h);
            });
            if (w)
                watch = std::move(*w);
            else
                spdlog::warn(
                    "nfsv4.1: fanotify: {}: a local chmod, link, unlink or rename of a "
                    "delegated file on the server recalls nothing (the watch needs Linux 5.13, "
                    "or CAP_SYS_ADMIN)",
                    vfs::describe_error(w.error()));
            o.watch = watch;
        }
        o.foreign_shares = [nlm_shares](const vfs::FileHandle& fh, uint32_t access,
                                        uint32_t deny) {
            return *nlm_shares && (*nlm_shares)(fh, access, deny);
        };
        nfs4 = std::make_shared<nfs::v4::Nfs4Program>(registry, o);
        dispatcher.add(nfs4);
        nfs3->set_delegations(nfs4);  // NFSv3 access recalls NFSv4.1 delegations
        spdlog::info("nfsv4.1: lease {} s, id domain {} ({}), requests up to {} bytes, replies {}",
                     cfg.nfs4.lease_time, o.domain, domain_from, o.limits.fore.max_request_size,
                     o.limits.fore.max_response_size);
        if (size_t n = nfs4->services().recovery.previous_clients())
            spdlog::info("nfsv4.1: grace period of {} s for {} client(s) of the previous boot",
                         cfg.nfs4.lease_time, n);
    }
    nfs::nlm::Options nlm_options;
    nlm_options.locks = lock_table;
    nlm_options.lock_files = lock_files;
    nlm_options.hosts_store = nlm_store;
    // NFSv4.1's grace period holds NLM's new locks back too (XNFS: only reclaims then);
    // without NFSv4.1, one of NLM's own when hosts of the previous boot are to reclaim.
    if (nfs4) {
        nlm_options.in_grace = [v4 = nfs4.get()] { return v4->services().recovery.in_grace(); };
        nlm_options.foreign_shares = [v4 = nfs4.get()](const vfs::FileHandle& fh, uint8_t access,
                                                       uint8_t deny) {
            return v4->services().check_open_shares(fh, access, deny, std::nullopt) !=
                   xdr::nfs4::NFS4_OK;
        };
        nlm_options.share_admission = [v4 = nfs4.get()](const vfs::FileHandle& fh) {
            return std::unique_lock<std::mutex>(v4->services().opens.admission(fh));
        };
        nlm_options.reap_lock_holder = [v4 = nfs4.get()](const vfs::state::Conflict& c) {
            return v4->services().reap_lock_holder(c);
        };
        nlm_options.delegations = nfs4;  // NLM access recalls NFSv4.1 delegations
    } else if (nlm_previous) {
        auto grace = std::make_shared<vfs::state::Grace>(
            std::chrono::steady_clock::now(), std::chrono::seconds(cfg.nfs4.lease_time),
            vfs::state::Grace::Known{{}, nlm_previous});
        nlm_options.in_grace = [grace] {
            return grace->in_grace(std::chrono::steady_clock::now());
        };
    }
    auto nlm = std::make_shared<nfs::nlm::NlmProgram>(registry, nlm_options);
    dispatcher.add(nlm);
    *nlm_wake = [n = nlm.get()](std::vector<vfs::state::Waiter> w) {
        n->services().wake(std::move(w));
    };
    *nlm_shares = [n = nlm.get()](const vfs::FileHandle& fh, uint32_t access, uint32_t deny) {
        return n->services().share_conflict(fh, access, deny);
    };

    // The reactor loops run on the pool's threads too (engine/reactor.h: a call's loop
    // thread runs it while a parked worker takes the loop over), one more thread each.
    engine::WorkerPool workers(cfg.workers, /*io_flusher=*/true, reactor_threads);
    if (int err = workers.io_flusher_error())
        spdlog::warn(
            "workers: PR_SET_IO_FLUSHER: {} (a client mounting this server from the "
            "same host can deadlock under memory pressure)",
            std::strerror(err));
    if (watch)
        *file_changed = [&workers, n = nfs4.get()](const vfs::FileHandle& h) {
            workers.submit([n, h] { n->services().file_changed(h); });
        };
    // Before the reactors and the first call: the counter's rate is measured here, once.
    rpc::latency::init();
    if (rpc::latency::uses_tsc())
        spdlog::info(
            "latency: calls are timed, and reactors' spins measured, with the time-stamp "
            "counter (the clock source has no vDSO reader: CLOCK_MONOTONIC would be a "
            "system call per reading)");
    // RDMA's reactors on threads of their own (engine/reactor.h: the kernel's rdma_cm and
    // uverbs want a thread that never switched identity), as many more when configured.
    engine::ReactorGroup reactors(reactor_threads, engine_mode(cfg.engine_mode),
                                  std::chrono::microseconds(cfg.spin_us), rdma_reactor_threads,
                                  &rpc::latency::now_ns);
    reactors.start(workers);
    if (nfs4) {
        engine::Reactor& r = reactors.next();
        r.post([&r, &workers, nfs4] {
            arm_sweep(r, workers, [nfs4] { return nfs4->expire_leases(); },
                      std::chrono::seconds(1));
        });
    }
    // NLM's GRANTED callbacks to clients whose blocked locks became free: events on a
    // reactor, results on a worker (transport/tcp/callback_client.h). Declared after both,
    // so destroyed first, once run() has stopped them: nothing calls it any more then.
    tcp::CallbackClient::Options cbo;
    // Test hook (tests/e2e/nlm_test): the clients' rpcbind on another port than 111.
    if (const char* e = std::getenv("NFSRDMAD_CALLBACK_RPCBIND_PORT"); e && *e) {
        cbo.rpcbind_port = static_cast<uint16_t>(std::atoi(e));
        spdlog::warn(
            "callbacks: clients' rpcbind asked on port {} (NFSRDMAD_CALLBACK_RPCBIND_PORT)",
            cbo.rpcbind_port);
    }
    tcp::CallbackClient callbacks(
        reactors.next(), [&workers](std::function<void()> f) { workers.submit(std::move(f)); },
        cbo);
    nlm->services().set_callbacks(&callbacks);
    tcp::ServerOptions topts;
    topts.max_record = cfg.max_record_size;
    topts.channels = channels;
    topts.max_connections = cfg.tcp_tuning.max_connections;
    topts.idle_timeout = std::chrono::seconds(cfg.tcp_tuning.idle_timeout);
    topts.max_pipes = cfg.tcp_tuning.max_pipes;
    topts.reactor_calls = cfg.reactor_calls;
    tcp::Server server(reactors, workers, dispatcher, topts);

    std::unique_ptr<rdma::Server> rdma_server;
    auto stop_everything = [&] {
        server.stop_accepting();
        if (rdma_server) rdma_server->stop_accepting();
        dispatcher.deferred_wakes()->close();  // no waker posts to a stopping reactor
        reactors.stop();
        workers.shutdown();
    };
    for (const auto& l : cfg.tcp) {
        if (auto err = server.listen(l.address, l.port); !err.empty()) {
            spdlog::critical("tcp {}:{}: {}", l.address, l.port, err);
            stop_everything();
            return 1;
        }
    }
    if (cfg.mount_port != cfg.tcp.front().port) {
        if (auto err = server.listen(cfg.tcp.front().address, cfg.mount_port); !err.empty()) {
            spdlog::critical("mount port {}: {}", cfg.mount_port, err);
            stop_everything();
            return 1;
        }
    }
    if (!start_rdma(cfg, reactors, workers, dispatcher, channels, rdma_server)) {
        stop_everything();
        return 1;
    }
    // Asked for and not served is a start-up error, as for any listener. Reads what it
    // reports until it is reset, before the transports and programs go.
    // What the metrics, the control socket's stats and the SIGUSR1 dump read.
    const MetricsSources sources{dispatcher, server,      rdma_server.get(), *files,
                                 nfs4.get(), nofile.soft, &reactors,         &workers};
    std::unique_ptr<MetricsEndpoint> metrics;
    if (cfg.metrics) {
        std::string why;
        metrics = MetricsEndpoint::start(cfg.metrics->address, cfg.metrics->port, sources, &why);
        if (!metrics) {
            spdlog::error("metrics: cannot listen on {}", why);
            stop_everything();
            return 1;
        }
        spdlog::info("metrics: Prometheus endpoint on http://{}:{}/metrics",
                     cfg.metrics->address.find(':') != std::string::npos
                         ? "[" + cfg.metrics->address + "]"
                         : cfg.metrics->address,
                     metrics->port());
    }
    // NLM over UDP too (XNFS: clients' lockd and rpc.statd may call that way), on the NFS
    // ports. NFS itself stays on TCP and RDMA. Not fatal: NLM over TCP still works.
    udp::Server udp_server(reactors.next(), workers, dispatcher, {{xdr::nlm::NLM_PROG}});
    bool nlm_udp = false;
    bool loopback = false;
    for (const auto& l : cfg.tcp) {
        if (auto err = udp_server.listen(l.address, l.port); !err.empty()) {
            spdlog::warn("nlm: not served over UDP on {}:{}: {}", l.address, l.port, err);
        } else {
            nlm_udp = true;
            // statd calls 127.0.0.1; IPv6 sockets here are V6ONLY, so "::" does not cover it.
            loopback |= l.address == "0.0.0.0" || l.address.starts_with("127.");
        }
    }
    // rpc.statd calls back (a host rebooted: procedure 16) over UDP to 127.0.0.1 at the
    // port rpcbind gives for NLM; a daemon bound to other addresses only listens there too.
    if (nlm_udp && !loopback) {
        const uint16_t port = cfg.tcp.front().port;
        if (auto err = udp_server.listen("127.0.0.1", port); !err.empty())
            spdlog::warn(
                "nlm: no UDP listener on 127.0.0.1:{} ({}): rpc.statd cannot tell us of a "
                "client's reboot, so its locks stay until it reclaims or FREE_ALL",
                port, err);
    }
    std::optional<rpc::RpcbindRegistration> rpcbind;
    // Every registered program and version; MOUNT on its own port, the rest on the first
    // TCP listener's.
    if (!opts.rpcbind)
        spdlog::info("rpcbind: not asked (--no-rpcbind): clients must name the ports");
    else
        rpcbind.emplace(rpc::rpcbind_entries(
            dispatcher.registry(),
            [&](uint32_t prog) {
                return prog == xdr::mount::MOUNT_PROGRAM ? cfg.mount_port : cfg.tcp.front().port;
            },
            [&](uint32_t prog) { return nlm_udp && prog == xdr::nlm::NLM_PROG; }));
    // After the listeners and rpcbind: a notified host reclaims at once.
    if (nlm_previous) {
        // The name clients know us by (locks.nsm_name), else the host name.
        std::string host = cfg.locks.nsm_name;
        if (host.empty()) {
            char name[256] = {};
            host = ::gethostname(name, sizeof name - 1) == 0 ? name : "localhost";
        }
        const int32_t state = nfs::nlm::nsm_state(nlm_store->epoch());
        auto notices = std::make_unique<nfs::nlm::RebootNotices>(nlm_store->previous(), host, state);
        const size_t n = notices->send_due(callbacks);
        nlm->services().set_reboot_notices(std::move(notices));
        spdlog::info(
            "nlm: {} host(s) held locks before this boot: {} notified (NSM state {}; asked "
            "again until they answer, for up to {} s), grace period of {} s to reclaim them",
            nlm_previous, n, state, nfs::nlm::RebootNotices::kGiveUp.count(),
            cfg.nfs4.lease_time);
    }
    // The descriptor cache's regular files held for GETATTR (path entries, fd_cache.h) are
    // closed 1 to 2 s after their last use: a removed file's blocks are not held longer.
    {
        engine::Reactor& r = reactors.next();
        r.post([&r, &workers, files] {
            arm_sweep(
                r, workers,
                [files] {
                    files->close_idle();
                    return std::chrono::milliseconds(1000);
                },
                std::chrono::seconds(1));
        });
    }
    // NLM's upkeep: reboot notices sent again, idle hosts forgotten (SM_UNMON).
    {
        engine::Reactor& r = reactors.next();
        r.post([&r, &workers, nlm] {
            arm_sweep(r, workers, [nlm] { return nlm->services().housekeep(); },
                      std::chrono::seconds(1));
        });
    }
    // The admin commands' way in. Not fatal: NFS is served without it, and the log says so.
    const std::string control_path =
        (std::filesystem::path(cfg.state_dir) / kControlSocketName).string();
    std::string control_why;
    auto control = ControlServer::start(
        control_path,
        [src = ControlSources{sources, *registry, mounts->mounts()}](const std::string& request) {
            return control_answer(request, src);
        },
        &control_why);
    if (!control)
        spdlog::error(
            "control: no control socket ({}): nfsrdmad stats, exports, clients and "
            "log-level cannot reach this daemon",
            control_why);
    spdlog::info("nfsrdmad ready: {} reactor(s), {} worker(s)", reactors.size(), cfg.workers);
    // Destroyed before the reactors: its watchdog thread posts to them.
    ServiceManager service;
    auto serving = [&registry] {
        return fmt::format("serving {} export(s)", registry->snapshot()->exports().size());
    };
    service.ready(serving());
    service.start_watchdog(reactors);

    for (;;) {
        int lease_fd = -1;
        Signal s = signals.wait(&lease_fd);
        if (s == Signal::LeaseBreak || s == Signal::LeasesOverflow) {
            // A local process wants a file under a read delegation (vfs/lease.h): the
            // recall goes out from a worker.
            if (nfs4)
                workers.submit([nfs4, s, lease_fd] {
                    if (s == Signal::LeaseBreak)
                        nfs4->services().lease_broken(lease_fd);
                    else
                        nfs4->services().check_leases();
                });
        } else if (s == Signal::Reload) {
            service.reloading();
            const bool ok = reload(opts, cfg, *key, *registry, gss_on, dispatcher.export_stats());
            service.reloaded(ok ? serving()
                                : serving() + "; the last reload was rejected (see the log)");
        } else if (s == Signal::DumpStats) {
            dump_stats(sources);
        } else {
            break;
        }
    }

    // SIGTERM: stop accepting, let calls in flight finish and their replies go out.
    service.stopping();
    spdlog::info("shutting down: finishing calls in flight");
    // civetweb's stop waits out its listener's poll (up to 2 s): overlapped with the drain.
    std::thread metrics_stop([&metrics] { metrics.reset(); });
    control.reset();
    rpcbind.reset();
    server.stop_accepting();
    if (rdma_server) rdma_server->stop_accepting();
    auto deadline = std::chrono::steady_clock::now() + std::chrono::seconds(10);
    while ((workers.in_flight() > 0 || !server.idle()) &&
           std::chrono::steady_clock::now() < deadline)
        std::this_thread::sleep_for(std::chrono::milliseconds(10));
    if (rdma_server) {
        // Replies have gone out; now release every QP, buffer and registration.
        rdma_server->disconnect_all();
        while (rdma_server->connections() > 0 && std::chrono::steady_clock::now() < deadline)
            std::this_thread::sleep_for(std::chrono::milliseconds(10));
    }
    dump_stats(sources);
    metrics_stop.join();
    service.stop_watchdog();
    if (watch) watch->stop();  // its callback submits to the workers
    // A worker still finishing a call (past the drain's deadline) may let a delegation go:
    // its wake-up must not post to a reactor that is stopping (deferred_wakes.h).
    dispatcher.deferred_wakes()->close();
    reactors.stop();
    workers.shutdown();
    spdlog::info("nfsrdmad stopped");
    return 0;
}

}  // namespace nfsrdmad::daemon
