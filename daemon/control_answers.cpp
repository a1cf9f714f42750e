#include "daemon/control_answers.h"

#include <spdlog/spdlog.h>
#include <nlohmann/json.hpp>

#include "nfs/mount/mount_program.h"
#include "nfs/v4/nfs4_program.h"
#include "nfs/vfs/export.h"
#include "transport/rdma/server.h"
#include "transport/tcp/server.h"

namespace nfsrdmad::daemon {

namespace {

using json = nlohmann::json;

json stats(const MetricsSources& s) {
    json families = json::array();
    for (const auto& f : collect_metrics(s)) {
        json samples = json::array();
        for (const auto& m : f.metric) {
            json labels = json::object();
            for (const auto& l : m.label) labels[l.name] = l.value;
            json sample = {{"labels", labels}};
            switch (f.type) {
                case prometheus::MetricType::Counter:
                    sample["value"] = m.counter.value;
                    break;
                case prometheus::MetricType::Gauge:
                    sample["value"] = m.gauge.value;
                    break;
                case prometheus::MetricType::Histogram:
                    sample["count"] = m.histogram.sample_count;
                    sample["sum"] = m.histogram.sample_sum;
                    break;
                default:
                    continue;
            }
            samples.push_back(std::move(sample));
        }
        families.push_back({{"name", f.name}, {"help", f.help}, {"samples", samples}});
    }
    return {{"metrics", families}};
}

json exports(const vfs::ExportRegistry& registry) {
    json out = json::array();
    const auto table = registry.snapshot();
    for (const auto& e : table->exports()) {
        json rules = json::array();
        for (const auto& r : e->spec().rules) {
            json sec = json::array();
            for (uint32_t f : r.flavors.empty() ? std::vector<uint32_t>{vfs::kAuthSys} : r.flavors)
                sec.push_back(vfs::flavor_name(f));
            rules.push_back({{"clients", vfs::to_string(r.match)},
                             {"access", r.read_write ? "rw" : "ro"},
                             {"squash", r.squash == vfs::ClientRule::None   ? "none"
                                        : r.squash == vfs::ClientRule::Root ? "root"
                                                                            : "all"},
                             {"anonuid", r.anonuid},
                             {"anongid", r.anongid},
                             {"sec", sec},
                             {"secure", r.secure}});
        }
        out.push_back({{"path", e->path()},
                       {"fsid", e->fsid()},
                       {"fsid_source", e->fsid_source()},
                       {"rules", rules}});
    }
    return {{"exports", out}};
}

json clients(const ControlSources& s) {
    json conns = json::array();
    for (const auto& p : s.metrics.tcp.peers())
        conns.push_back({{"transport", "tcp"}, {"peer", p}});
    if (s.metrics.rdma)
        for (const auto& p : s.metrics.rdma->peers())
            conns.push_back({{"transport", "rdma"}, {"peer", p.peer}, {"credits", p.credits}});
    json mounts = json::array();
    for (const auto& [host, dir] : s.mounts.snapshot())
        mounts.push_back({{"host", host}, {"path", dir}});
    json out = {{"connections", conns}, {"mounts", mounts}};
    if (s.metrics.nfs4) {
        const auto n = s.metrics.nfs4->services().clients.totals();
        out["nfs4"] = {{"clients", n.clients}, {"sessions", n.sessions}};
    }
    return out;
}

json log_level(const std::string& arg) {
    const std::string was(spdlog::level::to_string_view(spdlog::get_level()).data());
    if (!arg.empty()) {
        const auto l = spdlog::level::from_str(arg);
        // from_str answers "off" for any word it does not know: only "off" may mean off.
        if (l == spdlog::level::off && arg != "off")
            return {{"error", "unknown log level '" + arg +
                                  "' (trace, debug, info, warn, error, critical, off)"}};
        spdlog::set_level(l);
        spdlog::warn("log level set to {} (was {}) through the control socket", arg, was);
    }
    return {{"level", std::string(spdlog::level::to_string_view(spdlog::get_level()).data())},
            {"was", was}};
}

}  // namespace

std::string control_answer(const std::string& request, const ControlSources& sources) {
    const size_t sp = request.find(' ');
    const std::string verb = request.substr(0, sp);
    const std::string arg = sp == std::string::npos ? "" : request.substr(sp + 1);
    json out;
    if (verb == "stats" && arg.empty())
        out = stats(sources.metrics);
    else if (verb == "exports" && arg.empty())
        out = exports(sources.exports);
    else if (verb == "clients" && arg.empty())
        out = clients(sources);
    else if (verb == "log-level")
        out = log_level(arg);
    else
        out = {{"error", "unknown request '" + request.substr(0, 64) +
                             "' (stats, exports, clients, log-level [LEVEL])"}};
    // A request's bytes are the caller's: invalid UTF-8 is replaced, never thrown on.
    return out.dump(-1, ' ', false, json::error_handler_t::replace);
}

}  // namespace nfsrdmad::daemon
