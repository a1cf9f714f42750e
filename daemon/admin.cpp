#include "daemon/admin.h"

#include <nlohmann/json.hpp>

#include <cstdio>
#include <map>
#include <string>
#include <tuple>

#include "daemon/control.h"

namespace nfsrdmad::daemon {

namespace {

using json = nlohmann::json;

const json* family(const json& metrics, const std::string& name) {
    for (const auto& f : metrics)
        if (f.value("name", "") == name) return &f;
    return nullptr;
}

std::string label(const json& sample, const char* name) {
    return sample["labels"].value(name, "");
}

std::string duration(double seconds) {
    char buf[32];
    if (seconds < 1e-3)
        std::snprintf(buf, sizeof buf, "%.0f us", seconds * 1e6);
    else if (seconds < 1)
        std::snprintf(buf, sizeof buf, "%.2f ms", seconds * 1e3);
    else
        std::snprintf(buf, sizeof buf, "%.2f s", seconds);
    return buf;
}

// Per program and version, like `nfsstat -s`: calls, errors, share and mean time.
void print_stats(const json& metrics) {
    using Key = std::tuple<std::string, std::string, std::string>;  // program, version, op
    struct Row {
        double calls = 0, errors = 0, seconds = 0;
    };
    std::map<Key, Row> rows;
    auto each = [&](const char* name, auto fn) {
        if (const json* f = family(metrics, name))
            for (const auto& s : (*f)["samples"])
                fn(Key{label(s, "program"), label(s, "version"), label(s, "operation")}, s);
    };
    each("nfsrdmad_calls_total", [&](const Key& k, const json& s) { rows[k].calls = s["value"]; });
    each("nfsrdmad_call_errors_total",
         [&](const Key& k, const json& s) { rows[k].errors += s["value"].get<double>(); });
    each("nfsrdmad_call_duration_seconds",
         [&](const Key& k, const json& s) { rows[k].seconds = s["sum"]; });
    std::map<std::pair<std::string, std::string>, double> totals;
    for (const auto& [k, r] : rows) totals[{std::get<0>(k), std::get<1>(k)}] += r.calls;
    std::pair<std::string, std::string> current;
    bool first = true;
    for (const auto& [k, r] : rows) {
        const auto pv = std::make_pair(std::get<0>(k), std::get<1>(k));
        if (first || pv != current) {
            current = pv;
            std::printf("%s%s v%s: %.0f calls\n", first ? "" : "\n", pv.first.c_str(),
                        pv.second.c_str(), totals[pv]);
            first = false;
            std::printf("  %-22s %12s %6s %10s %10s\n", "operation", "calls", "share", "errors",
                        "mean");
        }
        std::printf("  %-22s %12.0f %5.1f%% %10.0f %10s\n", std::get<2>(k).c_str(), r.calls,
                    totals[pv] ? 100 * r.calls / totals[pv] : 0.0, r.errors,
                    duration(r.calls ? r.seconds / r.calls : 0).c_str());
    }
    std::printf("\n");
    auto value = [&](const char* name, const char* lname = nullptr, const char* lvalue = nullptr) {
        double v = 0;
        if (const json* f = family(metrics, name))
            for (const auto& s : (*f)["samples"])
                if (!lname || label(s, lname) == lvalue) v += s.value("value", 0.0);
        return v;
    };
    std::printf("file data: %.0f bytes read, %.0f bytes written\n",
                value("nfsrdmad_read_bytes_total"), value("nfsrdmad_written_bytes_total"));
    std::printf("rpc: %.0f messages, %.0f garbage args, %.0f auth errors, %.0f dropped\n",
                value("nfsrdmad_rpc_messages_total"),
                value("nfsrdmad_rpc_unsuccessful_total", "reason", "garbage_args"),
                value("nfsrdmad_rpc_unsuccessful_total", "reason", "auth_error"),
                value("nfsrdmad_rpc_unsuccessful_total", "reason", "dropped"));
    std::printf("connections: %.0f tcp, %.0f rdma; %.0f descriptors open\n",
                value("nfsrdmad_tcp_connections"), value("nfsrdmad_rdma_connections"),
                value("nfsrdmad_open_fds"));
}

// Like `exportfs -v`: one line per client rule.
void print_exports(const json& exports) {
    if (exports.empty()) std::printf("no exports\n");
    for (const auto& e : exports) {
        char fsid[16];
        std::snprintf(fsid, sizeof fsid, "%#x", e["fsid"].get<unsigned>());
        std::printf("%s  (fsid %s from %s)\n", e["path"].get<std::string>().c_str(), fsid,
                    e["fsid_source"].get<std::string>().c_str());
        for (const auto& r : e["rules"]) {
            std::string sec;
            for (const auto& f : r["sec"]) sec += (sec.empty() ? "" : ":") + f.get<std::string>();
            const std::string squash = r["squash"];
            std::printf("    %s(%s,%s,%s,sec=%s,anonuid=%u,anongid=%u)\n",
                        r["clients"].get<std::string>().c_str(),
                        r["access"].get<std::string>().c_str(),
                        squash == "none"   ? "no_root_squash"
                        : squash == "root" ? "root_squash"
                                           : "all_squash",
                        r["secure"].get<bool>() ? "secure" : "insecure", sec.c_str(),
                        r["anonuid"].get<unsigned>(), r["anongid"].get<unsigned>());
        }
    }
}

void print_clients(const json& c) {
    std::printf("%-10s %-48s %s\n", "transport", "peer", "credits");
    for (const auto& x : c["connections"])
        std::printf(
            "%-10s %-48s %s\n", x["transport"].get<std::string>().c_str(),
            x["peer"].get<std::string>().c_str(),
            x.contains("credits") ? std::to_string(x["credits"].get<unsigned>()).c_str() : "-");
    std::printf("\nmounts (MOUNT's list, advisory):\n");
    for (const auto& m : c["mounts"])
        std::printf("  %s:%s\n", m["host"].get<std::string>().c_str(),
                    m["path"].get<std::string>().c_str());
    if (c.contains("nfs4"))
        std::printf("\nnfsv4.1: %u client(s), %u session(s)\n",
                    c["nfs4"]["clients"].get<unsigned>(), c["nfs4"]["sessions"].get<unsigned>());
}

}  // namespace

int run_admin(const AdminCommand& c) {
    std::string reply, why;
    if (!control_request(c.socket, c.request, &reply, &why)) {
        std::fprintf(stderr, "nfsrdmad: %s\n", why.c_str());
        return 1;
    }
    json j = json::parse(reply, nullptr, false);
    if (j.is_discarded() || !j.is_object()) {
        std::fprintf(stderr, "nfsrdmad: the daemon's answer is not JSON\n");
        return 1;
    }
    if (j.contains("error")) {
        std::fprintf(stderr, "nfsrdmad: %s\n", j["error"].get<std::string>().c_str());
        return 1;
    }
    if (c.json) {
        std::printf("%s\n", j.dump(2).c_str());
        return 0;
    }
    try {
        const std::string verb = c.request.substr(0, c.request.find(' '));
        if (verb == "stats")
            print_stats(j["metrics"]);
        else if (verb == "exports")
            print_exports(j["exports"]);
        else if (verb == "clients")
            print_clients(j);
        else
            std::printf("log level: %s (was %s)\n", j["level"].get<std::string>().c_str(),
                        j["was"].get<std::string>().c_str());
    } catch (const json::exception& e) {
        std::fprintf(stderr, "nfsrdmad: unexpected answer from the daemon: %s\n", e.what());
        return 1;
    }
    return 0;
}

}  // namespace nfsrdmad::daemon
