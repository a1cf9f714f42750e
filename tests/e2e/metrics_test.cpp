// The Prometheus endpoint (daemon/metrics.h), scraped over HTTP while clients call: each
// counter rises by exactly the calls made, errors land under the status the client saw,
// payload bytes are the bytes moved, and each latency histogram counts every call once.
#include <curl/curl.h>

#include <nlohmann/json.hpp>

#include <cstdlib>
#include <cstring>
#include <fstream>
#include <map>
#include <regex>
#include <set>
#include <sstream>
#include <string>
#include <vector>

#include <gtest/gtest.h>

#include "tests/e2e/nfs4_fixture.h"
#include "tests/e2e/raw_nfs.h"
#include "tests/e2e/rpc_wire.h"

namespace nfsrdmad::e2e {
namespace {

// One scrape: every sample line, keyed by its series exactly as written
// (`name{label="v",...}`), or an error.
struct Scrape {
    std::string error;
    std::map<std::string, double> samples;
    std::set<std::string> families;  // from the `# TYPE name type` lines
    double at(const std::string& series) const {
        auto it = samples.find(series);
        return it == samples.end() ? 0 : it->second;
    }
};

size_t Append(char* p, size_t size, size_t n, void* out) {
    static_cast<std::string*>(out)->append(p, size * n);
    return size * n;
}

Scrape Get(uint16_t port) {
    Scrape s;
    std::string body;
    CURL* c = curl_easy_init();
    const std::string url = "http://127.0.0.1:" + std::to_string(port) + "/metrics";
    curl_easy_setopt(c, CURLOPT_URL, url.c_str());
    curl_easy_setopt(c, CURLOPT_WRITEFUNCTION, Append);
    curl_easy_setopt(c, CURLOPT_WRITEDATA, &body);
    curl_easy_setopt(c, CURLOPT_TIMEOUT, 10L);
    CURLcode rc = curl_easy_perform(c);
    long http = 0;
    curl_easy_getinfo(c, CURLINFO_RESPONSE_CODE, &http);
    curl_easy_cleanup(c);
    if (rc != CURLE_OK || http != 200) {
        s.error = url + ": " + curl_easy_strerror(rc) + ", HTTP " + std::to_string(http);
        return s;
    }
    std::istringstream in(body);
    for (std::string line; std::getline(in, line);) {
        if (line.starts_with("# TYPE ")) {
            s.families.insert(line.substr(7, line.find(' ', 7) - 7));
            continue;
        }
        if (line.empty() || line[0] == '#') continue;
        const size_t sp = line.rfind(' ');
        if (sp == std::string::npos) continue;
        s.samples[line.substr(0, sp)] = std::strtod(line.c_str() + sp + 1, nullptr);
    }
    return s;
}

std::string Series(const std::string& name, const std::string& program, const std::string& version,
                   const std::string& op, const std::string& status = "") {
    std::string s = name + "{program=\"" + program + "\",version=\"" + version + "\"";
    if (!op.empty()) s += ",operation=\"" + op + "\"";
    if (!status.empty()) s += ",status=\"" + status + "\"";
    return s + "}";
}

class MetricsTest : public Nfs4DaemonTest {
  protected:
    MetricsTest() { mount_client_ = true; }
    void SetUp() override {
        Nfs4DaemonTest::SetUp();
        if (HasFatalFailure()) return;
        // The fixture's raw connection is accepted by a reactor in its own time: on a busy
        // machine after a test's first scrape, which then counted two connections for its
        // one. A call answered on it means it was accepted.
        ASSERT_EQ(RpcCall(*conn_, 100003, 4, 0, {}).parse_error, "");
    }
    DaemonOptions Options() override {
        DaemonOptions o = Nfs4DaemonTest::Options();
        metrics_port_ = PickFreePorts(1).at(0);
        o.extra_args = {"--metrics", "127.0.0.1:" + std::to_string(metrics_port_)};
        o.extra_exports.push_back({"second", "rw,insecure"});
        return o;
    }
    Scrape Now() {
        Scrape s = Get(metrics_port_);
        EXPECT_EQ(s.error, "");
        return s;
    }
    // How much `series` rose from `a` to `b`.
    static double Rise(const Scrape& a, const Scrape& b, const std::string& series) {
        return b.at(series) - a.at(series);
    }
    uint16_t metrics_port_ = 0;
};

TEST_F(MetricsTest, Nfs3CallsErrorsBytesAndLatencyCountExactly) {
    const Scrape before = Now();
    ASSERT_EQ(before.error, "");
    for (int i = 0; i < 7; ++i) ASSERT_TRUE(NfsIs(Getattr(rpc(), root_), NFS3_OK));
    for (int i = 0; i < 3; ++i)
        ASSERT_TRUE(NfsIs(Lookup(rpc(), root_, "no-such-file"), NFS3ERR_NOENT));
    NewObjRes made = Create(rpc(), root_, "m", UNCHECKED);
    ASSERT_TRUE(NfsIs(made, NFS3_OK));
    ASSERT_TRUE(made.has_fh);
    const std::string data(1000, 'x');
    ASSERT_TRUE(NfsIs(Write(rpc(), made.fh, 0, data, FILE_SYNC), NFS3_OK));
    ReadRes rd = Read(rpc(), made.fh, 0, 4096);
    ASSERT_TRUE(NfsIs(rd, NFS3_OK));
    ASSERT_EQ(rd.data.size(), 1000u);
    const Scrape after = Now();
    ASSERT_EQ(after.error, "");

    auto calls = [&](const std::string& op) {
        return Rise(before, after, Series("nfsrdmad_calls_total", "nfs", "3", op));
    };
    EXPECT_EQ(calls("GETATTR"), 7);
    EXPECT_EQ(calls("LOOKUP"), 3);
    EXPECT_EQ(calls("CREATE"), 1);
    EXPECT_EQ(calls("WRITE"), 1);
    EXPECT_EQ(calls("READ"), 1);
    EXPECT_EQ(Rise(before, after,
                   Series("nfsrdmad_call_errors_total", "nfs", "3", "LOOKUP", "NFS3ERR_NOENT")),
              3);
    EXPECT_EQ(Rise(before, after,
                   Series("nfsrdmad_call_errors_total", "nfs", "3", "GETATTR", "NFS3ERR_NOENT")),
              0);
    EXPECT_EQ(Rise(before, after, Series("nfsrdmad_written_bytes_total", "nfs", "3", "")), 1000);
    EXPECT_EQ(Rise(before, after, Series("nfsrdmad_read_bytes_total", "nfs", "3", "")), 1000);

    // The histogram: its count is the calls, its +Inf bucket the same, its sum positive.
    const std::string h = "nfsrdmad_call_duration_seconds";
    const std::string labels = "{program=\"nfs\",version=\"3\",operation=\"GETATTR\"";
    EXPECT_EQ(after.at(h + "_count" + labels + "}"),
              after.at("nfsrdmad_calls_total" + labels + "}"));
    EXPECT_EQ(after.at(h + "_bucket" + labels + ",le=\"+Inf\"}"),
              after.at(h + "_count" + labels + "}"));
    EXPECT_GT(after.at(h + "_sum" + labels + "}"), 0);
    // Buckets never fall as `le` grows.
    double last = 0;
    int buckets = 0;
    for (const auto& [series, v] : after.samples)
        if (series.starts_with(h + "_bucket" + labels + ",le=\"0.00")) {
            ++buckets;
            last = std::max(last, v);
        }
    EXPECT_GE(buckets, 5);
    EXPECT_LE(last, after.at(h + "_count" + labels + "}"));
}

TEST_F(MetricsTest, Nfs41OperationsInsideCompoundCountOneByOne) {
    Establish();
    if (HasFatalFailure()) return;
    const Scrape before = Now();
    ASSERT_EQ(before.error, "");
    const size_t walk = ToExport().size() - 1;  // LOOKUPs to the export
    for (int i = 0; i < 4; ++i) {
        auto ops = ToExport();
        ops.insert(ops.begin(), Sequence());
        ops.push_back(op_getattr({x4::FATTR4_TYPE}));
        Res r = Compound(ops);
        ASSERT_EQ(r.error, "");
        ASSERT_EQ(r.status(), x4::NFS4_OK);
    }
    // One that stops at a missing name: LOOKUP fails, GETATTR after it never runs.
    auto ops = ToExport();
    ops.insert(ops.begin(), Sequence());
    const std::string absent = "absent";  // the op views it until the call is sent
    ops.push_back(op_lookup(view(absent)));
    ops.push_back(op_getattr({x4::FATTR4_TYPE}));
    Res r = Compound(ops);
    ASSERT_EQ(r.error, "");
    ASSERT_EQ(r.status(), x4::NFS4ERR_NOENT);
    const Scrape after = Now();
    ASSERT_EQ(after.error, "");

    auto op = [&](const std::string& name) {
        return Rise(before, after, Series("nfsrdmad_calls_total", "nfs", "4.1", name));
    };
    EXPECT_EQ(op("SEQUENCE"), 5);
    EXPECT_EQ(op("PUTROOTFH"), 5);
    EXPECT_EQ(op("LOOKUP"), double(5 * walk + 1));
    EXPECT_EQ(op("GETATTR"), 4);
    EXPECT_EQ(Rise(before, after,
                   Series("nfsrdmad_call_errors_total", "nfs", "4.1", "LOOKUP", "NFS4ERR_NOENT")),
              1);
    // The procedure: five COMPOUNDs, one answered with an error status.
    EXPECT_EQ(Rise(before, after, Series("nfsrdmad_calls_total", "nfs", "4", "COMPOUND")), 5);
    EXPECT_EQ(Rise(before, after,
                   Series("nfsrdmad_call_errors_total", "nfs", "4", "COMPOUND", "NFS4ERR_NOENT")),
              1);
}

TEST_F(MetricsTest, Nfs41ReadAndWriteBytesCountUnderCompound) {
    Establish();
    if (HasFatalFailure()) return;
    ASSERT_TRUE(WriteFile(daemon_->on_disk("v4file"), std::string(300, 'a')));
    const wire::Bytes root = ExportHandle();
    ASSERT_FALSE(root.empty());
    const Scrape before = Now();
    ASSERT_EQ(before.error, "");
    const std::string name = "v4file", data(700, 'w');
    const x4::stateid4 anon{};
    Res r = Compound({Sequence(), op_putfh(root), op_lookup(view(name)),
                      op_write(anon, 0, view(data)), op_read(anon, 0, 4096)});
    ASSERT_EQ(r.error, "");
    ASSERT_EQ(r.status(), x4::NFS4_OK);
    const Scrape after = Now();
    ASSERT_EQ(after.error, "");
    EXPECT_EQ(Rise(before, after, Series("nfsrdmad_written_bytes_total", "nfs", "4", "")), 700);
    EXPECT_EQ(Rise(before, after, Series("nfsrdmad_read_bytes_total", "nfs", "4", "")), 700);
    EXPECT_EQ(Rise(before, after, Series("nfsrdmad_calls_total", "nfs", "4.1", "WRITE")), 1);
    EXPECT_EQ(Rise(before, after, Series("nfsrdmad_calls_total", "nfs", "4.1", "READ")), 1);
    // Operation tables carry no byte counters of their own (the COMPOUND's hold them).
    EXPECT_EQ(after.samples.count(Series("nfsrdmad_read_bytes_total", "nfs", "4.1", "")), 0u);
}

// Per export, under its path as configured: NFSv3 procedures and NFSv4.1 COMPOUNDs (one
// call each), their errors, file bytes and latency; an export nobody called is listed at 0.
TEST_F(MetricsTest, CallsCountUnderTheirExport) {
    Establish();
    if (HasFatalFailure()) return;
    const wire::Bytes root = ExportHandle();
    ASSERT_FALSE(root.empty());
    const Scrape before = Now();
    ASSERT_EQ(before.error, "");
    for (int i = 0; i < 5; ++i) ASSERT_TRUE(NfsIs(Getattr(rpc(), root_), NFS3_OK));
    for (int i = 0; i < 2; ++i) ASSERT_TRUE(NfsIs(Lookup(rpc(), root_, "none"), NFS3ERR_NOENT));
    NewObjRes made = Create(rpc(), root_, "per-export", UNCHECKED);
    ASSERT_TRUE(NfsIs(made, NFS3_OK));
    ASSERT_TRUE(made.has_fh);
    ASSERT_TRUE(NfsIs(Write(rpc(), made.fh, 0, std::string(500, 'e'), FILE_SYNC), NFS3_OK));
    ASSERT_TRUE(NfsIs(Read(rpc(), made.fh, 0, 4096), NFS3_OK));
    Res r = Compound({Sequence(), op_putfh(root), op_getattr({x4::FATTR4_TYPE})});
    ASSERT_EQ(r.error, "");
    ASSERT_EQ(r.status(), x4::NFS4_OK);
    const Scrape after = Now();
    ASSERT_EQ(after.error, "");

    const std::string l = "{export=\"" + daemon_->export_dir() + "\"}";
    EXPECT_EQ(Rise(before, after, "nfsrdmad_export_calls_total" + l), 5 + 2 + 3 + 1);
    EXPECT_EQ(Rise(before, after, "nfsrdmad_export_call_errors_total" + l), 2);
    EXPECT_EQ(Rise(before, after, "nfsrdmad_export_written_bytes_total" + l), 500);
    EXPECT_EQ(Rise(before, after, "nfsrdmad_export_read_bytes_total" + l), 500);
    EXPECT_EQ(after.at("nfsrdmad_export_call_duration_seconds_count" + l),
              after.at("nfsrdmad_export_calls_total" + l));
    const std::string second =
        "nfsrdmad_export_calls_total{export=\"" + daemon_->extra_export_dir("second") + "\"}";
    ASSERT_EQ(after.samples.count(second), 1u) << "an export nobody called is listed";
    EXPECT_EQ(after.at(second), 0);
}

TEST_F(MetricsTest, UndecodableArgumentsCountAsGarbageArgs) {
    const Scrape before = Now();
    ASSERT_EQ(before.error, "");
    // GETATTR with two bytes of arguments: not a file handle.
    wire::Reply rep = wire::RoundTrip(daemon_->nfs_port(),
                                      wire::EncodeCall(wire::RootCall(91, 100003, 3, 1, {0, 1})));
    ASSERT_EQ(rep.parse_error, "");
    ASSERT_EQ(rep.accept_stat, wire::kGarbageArgs);
    const Scrape after = Now();
    ASSERT_EQ(after.error, "");
    EXPECT_EQ(Rise(before, after,
                   Series("nfsrdmad_call_errors_total", "nfs", "3", "GETATTR", "GARBAGE_ARGS")),
              1);
    EXPECT_EQ(Rise(before, after, "nfsrdmad_rpc_unsuccessful_total{reason=\"garbage_args\"}"), 1);
    EXPECT_EQ(Rise(before, after, "nfsrdmad_tcp_connections_accepted_total"), 1);
    // A short record fits its first buffer: nothing moved (transport/tcp/record_marking.h).
    ASSERT_EQ(after.samples.count("nfsrdmad_tcp_record_moved_bytes_total"), 1u);
    EXPECT_EQ(Rise(before, after, "nfsrdmad_tcp_record_moved_bytes_total"), 0);
}

// The loops and the worker pool (engine/): a CREATE and a FILE_SYNC WRITE run on pool
// threads, each handed over by the loop that read it (engine/worker_pool.h), and the loop
// sleeps between calls. The SIGUSR1 dump's engine line says the same.
TEST_F(MetricsTest, ReactorsSleepAndWorkersTakeCallsOver) {
    auto sum = [](const Scrape& s, const std::string& family) {
        double total = 0;
        for (const auto& [series, v] : s.samples)
            if (series.starts_with(family + "{")) total += v;
        return total;
    };
    const Scrape before = Now();
    ASSERT_EQ(before.error, "");
    NewObjRes made = Create(rpc(), root_, "engine", UNCHECKED);
    ASSERT_TRUE(NfsIs(made, NFS3_OK));
    ASSERT_TRUE(NfsIs(Write(rpc(), made.fh, 0, std::string(100, 'e'), FILE_SYNC), NFS3_OK));
    const Scrape after = Now();
    ASSERT_EQ(after.error, "");
    for (const char* f : {"nfsrdmad_reactor_sleeps_total", "nfsrdmad_reactor_wakeups_total",
                          "nfsrdmad_worker_threads", "nfsrdmad_worker_jobs",
                          "nfsrdmad_worker_threads_parked", "nfsrdmad_worker_hand_overs_total"})
        EXPECT_TRUE(after.families.count(f)) << f;
    // Each reply was followed by a wait for the next call.
    EXPECT_GE(
        sum(after, "nfsrdmad_reactor_sleeps_total") - sum(before, "nfsrdmad_reactor_sleeps_total"),
        2);
    EXPECT_GE(Rise(before, after, "nfsrdmad_worker_hand_overs_total"), 2);
    EXPECT_GT(after.at("nfsrdmad_worker_threads"), 0);
    EXPECT_LE(after.at("nfsrdmad_worker_threads_parked"), after.at("nfsrdmad_worker_threads"));
    // The TCP loops do not poll: no spin window is shown for them.
    EXPECT_FALSE(after.families.count("nfsrdmad_reactor_spin_window_seconds"));

    const auto threads = daemon_->StatsCounter("engine", "threads");
    ASSERT_TRUE(threads.has_value());
    EXPECT_EQ(double(*threads), after.at("nfsrdmad_worker_threads"));
    const auto hand_overs = daemon_->StatsCounter("engine", "hand_overs");
    ASSERT_TRUE(hand_overs.has_value());
    EXPECT_GE(double(*hand_overs), after.at("nfsrdmad_worker_hand_overs_total"));
}

// packaging/grafana/nfsrdmad.json: every metric a panel queries is one the daemon serves
// (a histogram by its family name plus _bucket, _sum or _count).
// What befell delegations is served beside the SIGUSR1 line's figures (their values are the
// same counters: the delegation tests read them from that line).
TEST_F(MetricsTest, DelegationEventsAreServedOneSeriesAnEvent) {
    const Scrape now = Now();
    ASSERT_EQ(now.error, "");
    EXPECT_TRUE(now.families.count("nfsrdmad_nfs4_delegations"));
    EXPECT_TRUE(now.families.count("nfsrdmad_nfs4_write_delegations"));
    EXPECT_TRUE(now.families.count("nfsrdmad_nfs4_delegation_recalls_total"));
    for (const char* event : {"granted", "returned", "revoked", "recall_failed", "cb_getattr",
                              "recall_any", "file_removed", "local_change"}) {
        const std::string series =
            std::string("nfsrdmad_nfs4_delegation_events_total{event=\"") + event + "\"}";
        EXPECT_TRUE(now.samples.count(series)) << series << " is not served";
    }
}

TEST_F(MetricsTest, DashboardNamesOnlyMetricsTheDaemonServes) {
    std::ifstream in(NFSRDMAD_SOURCE_DIR "/packaging/grafana/nfsrdmad.json");
    ASSERT_TRUE(in) << "packaging/grafana/nfsrdmad.json";
    const auto dash = nlohmann::json::parse(in, nullptr, false);
    ASSERT_FALSE(dash.is_discarded());
    const Scrape now = Now();
    ASSERT_EQ(now.error, "");
    const std::regex metric("nfsrdmad_[a-z0-9_]+");
    size_t names = 0, panels = 0;
    for (const auto& p : dash["panels"]) {
        if (!p.contains("targets")) continue;
        ++panels;
        for (const auto& t : p["targets"]) {
            const std::string expr = t["expr"];
            for (std::sregex_iterator it(expr.begin(), expr.end(), metric), end; it != end; ++it) {
                std::string name = it->str();
                for (const char* suffix : {"_bucket", "_sum", "_count"})
                    if (!now.families.count(name) && name.ends_with(suffix))
                        name.resize(name.size() - std::strlen(suffix));
                EXPECT_TRUE(now.families.count(name))
                    << p["title"].get<std::string>() << ": " << it->str() << " is not served";
                ++names;
            }
        }
    }
    EXPECT_GE(panels, 10u);
    EXPECT_GE(names, 30u);
}

}  // namespace
}  // namespace nfsrdmad::e2e
