#include "daemon/metrics.h"

#include <prometheus/collectable.h>
#include <prometheus/exposer.h>
#include <prometheus/metric_family.h>

#include <exception>
#include <initializer_list>
#include <utility>
#include <vector>

#include "daemon/fd_limits.h"
#include "nfs/v4/nfs4_program.h"
#include "nfs/vfs/fd_cache.h"
#include "nfs/vfs/fd_pressure.h"
#include "transport/engine/reactor.h"
#include "transport/engine/worker_pool.h"
#include "transport/rdma/server.h"
#include "transport/rpc/dispatcher.h"
#include "transport/tcp/server.h"

namespace nfsrdmad::daemon {

namespace {

namespace prom = prometheus;
using Labels = std::vector<prom::ClientMetric::Label>;

// The families of one scrape, each made on first use.
class Families {
  public:
    prom::MetricFamily& family(const std::string& name, const std::string& help,
                               prom::MetricType type) {
        for (auto& f : out_)
            if (f.name == name) return f;
        out_.push_back({name, help, type, {}});
        return out_.back();
    }
    void counter(const std::string& name, const std::string& help, double v, Labels l = {}) {
        prom::ClientMetric m;
        m.label = std::move(l);
        m.counter.value = v;
        family(name, help, prom::MetricType::Counter).metric.push_back(std::move(m));
    }
    void gauge(const std::string& name, const std::string& help, double v, Labels l = {}) {
        prom::ClientMetric m;
        m.label = std::move(l);
        m.gauge.value = v;
        family(name, help, prom::MetricType::Gauge).metric.push_back(std::move(m));
    }
    std::vector<prom::MetricFamily> take() { return std::move(out_); }

  private:
    std::vector<prom::MetricFamily> out_;
};

double d(uint64_t v) {
    return static_cast<double>(v);
}
template <class A>
double d(const A& atomic) {
    return static_cast<double>(atomic.load(std::memory_order_relaxed));
}

// Calls, latency and errors per operation, payload bytes per protocol version.
constexpr const char* kErrorsHelp =
    "Calls answered with an error: the protocol's status, or the RPC outcome (GARBAGE_ARGS, "
    "SYSTEM_ERR, AUTH_ERROR, DROPPED)";

// A Prometheus histogram of OpStats' latency buckets (counts per bucket, not cumulative).
template <class Buckets>
prom::ClientMetric latency_histogram(Labels l, const Buckets& buckets, double seconds) {
    prom::ClientMetric m;
    m.label = std::move(l);
    uint64_t cumulative = 0;
    for (size_t b = 0; b < rpc::OpStats::kBuckets.size(); ++b) {
        cumulative += buckets[b];
        m.histogram.bucket.push_back({cumulative, rpc::OpStats::kBuckets[b]});
    }
    m.histogram.sample_count = cumulative + buckets.back();
    m.histogram.sample_sum = seconds;
    return m;
}

void op_tables(Families& f, const rpc::ProgramRegistry& programs) {
    // Present before the first error too: a dashboard's query names a family that exists.
    f.family("nfsrdmad_call_errors_total", kErrorsHelp, prom::MetricType::Counter);
    for (const auto& table : programs.stats()) {
        const auto s = table->snapshot();
        const Labels base{{"program", table->protocol()}, {"version", table->version()}};
        for (const auto& op : s.ops) {
            Labels l = base;
            l.push_back({"operation", op.name});
            f.counter("nfsrdmad_calls_total",
                      "Calls (procedures; NFSv4.1: operations inside COMPOUND) that ran",
                      d(op.calls), l);
            f.family("nfsrdmad_call_duration_seconds",
                     "Time a call (or NFSv4.1 operation) ran on a worker, decode to encode",
                     prom::MetricType::Histogram)
                .metric.push_back(latency_histogram(l, op.buckets, op.seconds));
        }
        for (const auto& e : s.errors) {
            Labels l = base;
            l.push_back({"operation", e.op});
            l.push_back({"status", e.status});
            f.counter("nfsrdmad_call_errors_total", kErrorsHelp, d(e.count), l);
        }
        if (table->counts_payload() && table->protocol() == "nfs") {
            f.counter("nfsrdmad_read_bytes_total", "File data read for clients", d(s.bytes_read),
                      base);
            f.counter("nfsrdmad_written_bytes_total", "File data written for clients",
                      d(s.bytes_written), base);
        }
    }
}

// Per export (its path as configured): every protocol's calls that named a file of it.
void export_counters(Families& f, const rpc::ExportStats& stats) {
    constexpr const char* kCalls = "nfsrdmad_export_calls_total";
    constexpr const char* kCallsHelp =
        "Calls (NFSv3 procedures, NFSv4.1 COMPOUNDs, NLM) admitted to the export (a COMPOUND "
        "that crosses exports: the last one)";
    constexpr const char* kErrors = "nfsrdmad_export_call_errors_total";
    constexpr const char* kErrorsHelp = "Calls of the export answered with an error";
    constexpr const char* kDuration = "nfsrdmad_export_call_duration_seconds";
    constexpr const char* kDurationHelp = "Time the export's calls ran on a worker";
    constexpr const char* kRead = "nfsrdmad_export_read_bytes_total";
    constexpr const char* kWritten = "nfsrdmad_export_written_bytes_total";
    // Present with no export too: a dashboard's query names a family that exists.
    f.family(kCalls, kCallsHelp, prom::MetricType::Counter);
    f.family(kErrors, kErrorsHelp, prom::MetricType::Counter);
    f.family(kDuration, kDurationHelp, prom::MetricType::Histogram);
    f.family(kRead, "File data read from the export", prom::MetricType::Counter);
    f.family(kWritten, "File data written to the export", prom::MetricType::Counter);
    for (const auto& e : stats.snapshot()) {
        const Labels l{{"export", e.path}};
        f.counter(kCalls, kCallsHelp, d(e.calls), l);
        f.counter(kErrors, kErrorsHelp, d(e.errors), l);
        f.family(kDuration, kDurationHelp, prom::MetricType::Histogram)
            .metric.push_back(latency_histogram(l, e.buckets, e.seconds));
        f.counter(kRead, "File data read from the export", d(e.bytes_read), l);
        f.counter(kWritten, "File data written to the export", d(e.bytes_written), l);
    }
}

void rpc_counters(Families& f, const rpc::Dispatcher& disp) {
    const auto& c = disp.counters();
    f.counter("nfsrdmad_rpc_messages_total", "RPC messages the dispatcher received", d(c.calls));
    const std::pair<const char*, const std::atomic<uint64_t>*> refused[] = {
        {"dropped", &c.dropped},
        {"garbage_args", &c.garbage_args},
        {"auth_error", &c.auth_errors},
        {"prog_unavail", &c.prog_unavail},
        {"prog_mismatch", &c.prog_mismatch},
        {"proc_unavail", &c.proc_unavail},
        {"system_err", &c.system_errors}};
    for (const auto& [reason, v] : refused)
        f.counter("nfsrdmad_rpc_unsuccessful_total",
                  "RPC messages not answered with a program's results, by reason (RFC 5531 §9)",
                  d(*v), {{"reason", reason}});
    f.counter("nfsrdmad_rpc_drc_replays_total",
              "Retransmissions answered from the duplicate request cache", d(c.cache_replays));
    f.gauge("nfsrdmad_rpc_drc_entries", "Replies held in the duplicate request cache",
            d(disp.reply_cache().size()));
    f.counter("nfsrdmad_rpc_nowait_calls_total",
              "Calls offered to a reactor, without blocking: answered there, given up to a worker "
              "after some work, or declined before any",
              d(c.nowait_answered), {{"result", "answered"}});
    f.counter("nfsrdmad_rpc_nowait_calls_total",
              "Calls offered to a reactor, without blocking: answered there, given up to a worker "
              "after some work, or declined before any",
              d(c.nowait_given_up), {{"result", "given_up"}});
    f.counter("nfsrdmad_rpc_nowait_calls_total",
              "Calls offered to a reactor, without blocking: answered there, given up to a worker "
              "after some work, or declined before any",
              d(c.nowait_declined), {{"result", "declined"}});
    static constexpr const char* kDeferredHelp =
        "Runs of calls put off for a moment instead of answered NFS3ERR_JUKEBOX, "
        "NLM4_DENIED_GRACE_PERIOD or NFS4ERR_DELAY (a delegation being recalled); calls "
        "answered so at once "
        "because a bound on calls put off was reached, or after their last run; runs woken "
        "before their time because what held them up was gone";
    f.counter("nfsrdmad_rpc_deferred_total", kDeferredHelp, d(c.deferred), {{"result", "put_off"}});
    f.counter("nfsrdmad_rpc_deferred_total", kDeferredHelp, d(c.defer_full),
              {{"result", "bound_full"}});
    f.counter("nfsrdmad_rpc_deferred_total", kDeferredHelp, d(c.defer_gave_up),
              {{"result", "gave_up"}});
    f.counter("nfsrdmad_rpc_deferred_total", kDeferredHelp, d(disp.deferred_wakes()->woken()),
              {{"result", "woken"}});
    f.gauge("nfsrdmad_rpc_deferred_calls", "Calls put off, waiting to run again",
            d(disp.deferred_now()));
    f.gauge("nfsrdmad_rpc_deferred_kept_bytes",
            "Arguments decrypted (krb5p) that calls put off keep until they run again",
            d(disp.kept_bytes()));
    f.counter("nfsrdmad_rpc_gss_control_calls_total",
              "RPCSEC_GSS context calls (INIT, CONTINUE_INIT, DESTROY)", d(c.control_calls));
    f.counter("nfsrdmad_rpc_gss_protected_bytes_total", "Result bytes wrapped for krb5i or krb5p",
              d(c.protected_bytes));
}

void tcp_counters(Families& f, const tcp::Server& server) {
    const auto& t = server.counters();
    f.counter("nfsrdmad_tcp_connections_accepted_total", "TCP connections accepted", d(t.accepted));
    f.counter("nfsrdmad_tcp_connections_closed_total", "TCP connections closed", d(t.closed));
    f.counter("nfsrdmad_tcp_connections_rejected_total",
              "TCP connections refused over tcp.max_connections", d(t.rejected));
    f.counter("nfsrdmad_tcp_connections_idle_closed_total",
              "TCP connections closed after tcp.idle_timeout", d(t.idle_closed));
    // Refused ones are never counted as accepted; closed is read first, so never above.
    const double closed = d(t.closed);
    f.gauge("nfsrdmad_tcp_connections", "Open TCP connections", d(t.accepted) - closed);
    f.counter("nfsrdmad_tcp_received_bytes_total", "Bytes received on TCP connections",
              d(t.bytes_in));
    f.counter("nfsrdmad_tcp_sent_bytes_total", "Bytes sent on TCP connections", d(t.bytes_out));
    f.counter("nfsrdmad_tcp_worker_replies_total",
              "Replies written by the worker that ran the call, without a reactor hop",
              d(t.worker_replies));
    f.counter("nfsrdmad_tcp_reactor_calls_total",
              "Calls answered on the connection's loop, without a worker (no disk needed)",
              d(t.reactor_calls));
    f.counter("nfsrdmad_tcp_record_moved_bytes_total",
              "Bytes of incoming records moved into a larger buffer while they arrived",
              d(t.record_moved_bytes));
}

// With RDMA off the families are still there, at zero: one dashboard fits every server.
void rdma_counters(Families& f, rdma::Server* server) {
    static const rdma::verbs::RdmaCounters none;
    const auto& c = server ? server->counters() : none;
    const auto p = server ? server->pools() : rdma::Server::Pools{};
    f.counter("nfsrdmad_rdma_connections_accepted_total", "RPC-over-RDMA connections established",
              d(c.connections));
    f.counter("nfsrdmad_rdma_connections_rejected_total",
              "RDMA connection requests refused at CONNECT_REQUEST", d(c.rejected_connections));
    f.counter("nfsrdmad_rdma_disconnects_total", "RDMA connections ended", d(c.disconnects));
    f.gauge("nfsrdmad_rdma_connections", "Open RDMA connections", d(p.open_connections));
    f.gauge("nfsrdmad_rdma_credits_granted", "The last credit grant sent (RFC 8166 §3.3.1)",
            d(c.credits_granted));
    for (const auto& [kind, chunks, bytes] :
         {std::tuple{"read", &c.read_chunks, &c.read_bytes},
          std::tuple{"write", &c.write_chunks, &c.write_bytes},
          std::tuple{"reply", &c.reply_chunks, &c.reply_bytes}}) {
        f.counter("nfsrdmad_rdma_chunks_total", "RDMA chunks moved, by kind (RFC 8166 §3.4)",
                  d(*chunks), {{"kind", kind}});
        f.counter("nfsrdmad_rdma_chunk_bytes_total", "Bytes moved through RDMA chunks, by kind",
                  d(*bytes), {{"kind", kind}});
    }
    f.counter("nfsrdmad_rdma_inline_replies_total", "Replies sent inline in one RDMA Send",
              d(c.inline_replies));
    f.counter("nfsrdmad_rdma_reactor_calls_total",
              "Calls answered on the reactor, without a worker (no disk needed)",
              d(c.reactor_calls));
    f.counter("nfsrdmad_rdma_worker_replies_total",
              "Replies posted by the worker that made them, while their reactor slept",
              d(c.worker_replies));
    f.counter("nfsrdmad_rdma_cq_arms_total",
              "Requests for a connection's completion event, made before its reactor sleeps "
              "where none stands",
              d(c.cq_arms));
    f.counter("nfsrdmad_rdma_errors_total", "RDMA_ERROR replies sent, by kind (RFC 8166 §4.5)",
              d(c.err_vers), {{"kind", "vers"}});
    f.counter("nfsrdmad_rdma_errors_total", "RDMA_ERROR replies sent, by kind (RFC 8166 §4.5)",
              d(c.err_chunk), {{"kind", "chunk"}});
    f.counter("nfsrdmad_rdma_credit_overruns_total", "Calls past the credits granted",
              d(c.credit_overruns));
    f.counter("nfsrdmad_rdma_completion_errors_total", "Work completions with an error status",
              d(c.completion_errors));
    f.counter("nfsrdmad_rdma_buffer_waits_total",
              "Times a call or reply waited for registered memory", d(c.buffer_waits));
    f.counter("nfsrdmad_rdma_send_queue_waits_total",
              "Attempts to post a reply, RDMA_ERROR, reverse call or RDMA Read that found "
              "the connection's send queue full (each retry counts)",
              d(c.send_queue_waits));
    f.counter("nfsrdmad_rdma_reply_parts_total",
              "Parts of RDMA Writes posted ahead of their reply's Send, for replies longer "
              "than the connection's send queue",
              d(c.reply_parts));
    f.gauge("nfsrdmad_rdma_calls_waiting", "Calls waiting for a payload buffer now",
            d(c.calls_waiting));
    f.gauge("nfsrdmad_rdma_buffers_in_use", "Registered buffers held by calls and replies",
            d(p.buffers_in_use));
    f.gauge("nfsrdmad_rdma_registered_bytes", "Memory registered with the RDMA devices",
            d(p.registered_bytes));
    f.gauge("nfsrdmad_rdma_receives_posted", "Receives posted on the shared receive queues",
            d(p.receives_posted));
    f.counter(
        "nfsrdmad_rdma_async_events_total",
        "Asynchronous events of the RDMA devices (port up or down, fatal errors), each logged",
        d(p.async_events));
    f.counter("nfsrdmad_rdma_receive_strays_total",
              "Receives reaped after their connection had closed (buffers given back)",
              d(p.receive_strays));
    f.gauge("nfsrdmad_rdma_read_bytes_in_flight", "Bytes of RDMA Read issued and not complete",
            d(p.read_bytes_in_flight));
}

void fd_counters(Families& f, const vfs::FdCache& files, uint64_t limit) {
    f.gauge("nfsrdmad_open_fds", "File descriptors the daemon holds", d(open_fd_count()));
    f.gauge("nfsrdmad_max_fds", "RLIMIT_NOFILE (soft) after start-up", d(limit));
    f.gauge("nfsrdmad_fd_cache_entries",
            "Open files kept: for READ and WRITE, directories, and files held for GETATTR",
            d(files.size()));
    f.gauge("nfsrdmad_fd_cache_path_entries",
            "Regular files held (O_PATH) for GETATTR and the like, closed when idle",
            d(files.path_entries()));
    f.counter("nfsrdmad_fd_cache_idle_closed_total",
              "Regular files held for GETATTR closed after a second or two unused",
              d(files.idle_closed()));
    f.gauge("nfsrdmad_fd_cache_capacity", "Most open files kept", d(files.capacity()));
    f.counter("nfsrdmad_fd_cache_evictions_total", "Cached open files closed to make room",
              d(files.evictions()));
    const auto fp = vfs::fd_pressure_stats();
    f.counter("nfsrdmad_fd_exhausted_total",
              "Opens that found no descriptor even after evicting (answered JUKEBOX/DELAY)",
              d(fp.exhausted));
}

void nfs4_state(Families& f, nfs::v4::Nfs4Program& nfs4) {
    auto& v4 = nfs4.services();
    const auto n = v4.clients.totals();
    f.gauge("nfsrdmad_nfs4_clients", "NFSv4.1 clients (EXCHANGE_ID) held", d(n.clients));
    f.gauge("nfsrdmad_nfs4_sessions", "NFSv4.1 sessions", d(n.sessions));
    f.gauge("nfsrdmad_nfs4_stateids", "NFSv4.1 stateids", d(n.stateids));
    f.gauge("nfsrdmad_nfs4_opens", "NFSv4.1 open files", d(v4.opens.size()));
    f.gauge("nfsrdmad_nfs4_locked_files", "Files with NFSv4.1 byte-range locks",
            d(v4.locks.file_count()));
    f.gauge("nfsrdmad_nfs4_delegations", "Delegations held by clients", d(v4.delegations.size()));
    f.gauge("nfsrdmad_nfs4_write_delegations", "Write delegations held by clients",
            d(v4.delegations.writes()));
    const auto& ds = v4.delegation_stats;
    f.counter("nfsrdmad_nfs4_delegation_recalls_total", "Delegations recalled (CB_RECALL)",
              d(ds.recalls));
    // What else befell delegations (the SIGUSR1 line `stats: nfs4_delegations`).
    const char* const help =
        "Delegation events: granted, returned (DELEGRETURN), revoked (not returned a lease "
        "after a recall), recall_failed (a CB_RECALL the client did not take, each try), "
        "cb_getattr, recall_any "
        "(CB_RECALL_ANY sent), file_removed (ended with their file), local_change (a change "
        "made on the server, not through NFS, recalled them)";
    const std::pair<const char*, const std::atomic<uint64_t>*> events[] = {
        {"granted", &ds.granted},      {"returned", &ds.returned},
        {"revoked", &ds.revoked},      {"recall_failed", &ds.recall_failures},
        {"cb_getattr", &ds.getattrs},  {"recall_any", &ds.recall_any},
        {"file_removed", &ds.removed}, {"local_change", &ds.local_changes}};
    for (const auto& [event, n] : events)
        f.counter("nfsrdmad_nfs4_delegation_events_total", help, d(n->load()), {{"event", event}});
}

// The loops and the threads: whether reactors sleep or spin, and whether calls wait for
// a worker (engine/reactor.h, engine/worker_pool.h).
void engine_counters(Families& f, const engine::ReactorGroup* reactors,
                     const engine::WorkerPool* workers) {
    if (reactors) {
        const auto all = reactors->stats();
        for (size_t i = 0; i < all.size(); ++i) {
            const auto& r = all[i];
            const std::string id = std::to_string(i);
            f.counter("nfsrdmad_reactor_sleeps_total",
                      "Times a reactor's loop found nothing to do and waited for an event",
                      d(r.sleeps), {{"reactor", id}});
            f.counter("nfsrdmad_reactor_wakeups_total",
                      "Times work handed to a sleeping reactor had to wake it", d(r.wakeups),
                      {{"reactor", id}});
            if (r.spins)
                f.gauge("nfsrdmad_reactor_spin_window_seconds",
                        "How long a polling reactor (adaptive mode) spins after its last work "
                        "before it sleeps: between 0 and engine.spin_us, sized by its sleeps",
                        double(r.spin_window_ns) / 1e9, {{"reactor", id}});
        }
    }
    if (workers) {
        const auto w = workers->stats();
        f.gauge("nfsrdmad_worker_threads", "Threads of the worker pool (reactor loops included)",
                d(w.threads));
        f.gauge("nfsrdmad_worker_jobs", "Jobs of the worker pool, by state", d(w.queued),
                {{"state", "queued"}});
        f.gauge("nfsrdmad_worker_jobs", "Jobs of the worker pool, by state", d(w.running),
                {{"state", "running"}});
        f.gauge("nfsrdmad_worker_threads_parked", "Worker threads asleep, waiting for a job",
                d(w.parked));
        f.counter("nfsrdmad_worker_hand_overs_total",
                  "Calls run by the thread their bytes woke, a parked worker taking its loop",
                  d(w.hand_overs));
    }
}

class Collector final : public prom::Collectable {
  public:
    explicit Collector(const MetricsSources& s) : s_(s) {}
    std::vector<prom::MetricFamily> Collect() const override { return collect_metrics(s_); }

  private:
    MetricsSources s_;
};

class Endpoint final : public MetricsEndpoint {
  public:
    Endpoint(std::unique_ptr<prom::Exposer> exposer, std::shared_ptr<Collector> collector)
        : exposer_(std::move(exposer)), collector_(std::move(collector)) {
        exposer_->RegisterCollectable(collector_, "/metrics");
    }
    ~Endpoint() override { exposer_.reset(); }  // its threads stop before the collector goes
    uint16_t port() const override {
        auto ports = exposer_->GetListeningPorts();
        return ports.empty() ? 0 : static_cast<uint16_t>(ports.front());
    }

  private:
    std::unique_ptr<prom::Exposer> exposer_;
    std::shared_ptr<Collector> collector_;
};

}  // namespace

std::vector<prometheus::MetricFamily> collect_metrics(const MetricsSources& s) {
    Families f;
    op_tables(f, s.dispatcher.registry());
    export_counters(f, s.dispatcher.export_stats());
    rpc_counters(f, s.dispatcher);
    tcp_counters(f, s.tcp);
    rdma_counters(f, s.rdma);
    fd_counters(f, s.files, s.nofile_limit);
    if (s.nfs4) nfs4_state(f, *s.nfs4);
    engine_counters(f, s.reactors, s.workers);
    return f.take();
}

std::unique_ptr<MetricsEndpoint> MetricsEndpoint::start(const std::string& address, uint16_t port,
                                                        const MetricsSources& sources,
                                                        std::string* why) {
    const std::string bind =
        (address.find(':') != std::string::npos ? "[" + address + "]" : address) + ":" +
        std::to_string(port);
    try {
        // Two threads answer scrapes; each scrape reads atomics and takes a few locks.
        auto exposer = std::make_unique<prom::Exposer>(bind, 2);
        return std::make_unique<Endpoint>(std::move(exposer), std::make_shared<Collector>(sources));
    } catch (const std::exception& e) {
        if (why) *why = bind + ": " + e.what();
        return nullptr;
    }
}

}  // namespace nfsrdmad::daemon
