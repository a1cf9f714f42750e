#include "config/load.h"

#include <yaml-cpp/eventhandler.h>
#include <yaml-cpp/parser.h>
#include <yaml-cpp/yaml.h>

#include <algorithm>
#include <cerrno>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <initializer_list>
#include <limits>
#include <map>
#include <set>
#include <sstream>
#include <tuple>

#include "config/overrides.h"
#include "config/parse.h"

namespace nfsrdmad::config {

namespace {

using Keys = std::initializer_list<std::string_view>;

// yaml-cpp 0.7 never returns from some malformed documents (" ," alone: its parser emits
// nodes forever until memory runs out; found by tests/fuzz/fuzz_config). Every event of a
// real document consumes input, so a first pass counts events and gives up past a bound
// proportional to the text; only then does YAML::LoadAll build the nodes.
class EventBudget : public YAML::EventHandler {
  public:
    explicit EventBudget(size_t text_size) : left_(4 * text_size + 64) {}
    void OnDocumentStart(const YAML::Mark& m) override { spend(m); }
    void OnDocumentEnd() override { spend(mark_); }
    void OnNull(const YAML::Mark& m, YAML::anchor_t) override { spend(m); }
    void OnAlias(const YAML::Mark& m, YAML::anchor_t) override { spend(m); }
    void OnScalar(const YAML::Mark& m, const std::string&, YAML::anchor_t,
                  const std::string&) override {
        spend(m);
    }
    void OnSequenceStart(const YAML::Mark& m, const std::string&, YAML::anchor_t,
                         YAML::EmitterStyle::value) override {
        spend(m);
    }
    void OnSequenceEnd() override { spend(mark_); }
    void OnMapStart(const YAML::Mark& m, const std::string&, YAML::anchor_t,
                    YAML::EmitterStyle::value) override {
        spend(m);
    }
    void OnMapEnd() override { spend(mark_); }

  private:
    void spend(const YAML::Mark& m) {
        mark_ = m;
        if (left_-- == 0) throw YAML::ParserException(m, "the document does not parse to an end");
    }
    size_t left_;
    YAML::Mark mark_ = YAML::Mark::null_mark();
};

// Throws YAML::Exception when `yaml` is not one or more well-formed documents.
void check_terminates(const std::string& yaml) {
    std::istringstream in(yaml);
    YAML::Parser parser(in);
    EventBudget budget(yaml.size());
    while (parser.HandleNextDocument(budget)) {
    }
}

// A node plus where to report problems with it. yaml-cpp marks an empty (null)
// value at the *next* token, so for map values we point at the key instead.
struct Val {
    YAML::Node node;
    YAML::Mark mark;
    YAML::Mark key_mark;  // the key for map values; same as `mark` for list items
};

Val list_item(const YAML::Node& n) {
    return {n, n.Mark(), n.Mark()};
}

std::string type_name(const YAML::Node& n) {
    switch (n.Type()) {
        case YAML::NodeType::Null:
            return "nothing";
        case YAML::NodeType::Scalar:
            return "a scalar";
        case YAML::NodeType::Sequence:
            return "a list";
        case YAML::NodeType::Map:
            return "a mapping";
        default:
            return "an undefined value";
    }
}

std::string join(Keys keys) {
    std::string out;
    for (auto k : keys) out += (out.empty() ? "" : ", ") + std::string(k);
    return out;
}

bool contains(Keys keys, std::string_view key) {
    for (auto k : keys)
        if (k == key) return true;
    return false;
}

// Identity of a client match, ignoring how it was written.
auto match_key(const ClientMatch& m) {
    return std::tie(m.kind, m.family, m.addr, m.prefix, m.hostname);
}

class Loader {
  public:
    explicit Loader(std::string file) : file_(std::move(file)) {}
    LoadResult run(std::string_view yaml);

  private:
    void error(const YAML::Mark& m, std::string msg) {
        errors_.push_back({file_, m.line + 1, m.column + 1, std::move(msg)});
    }
    bool is_map(const Val& v, std::string_view what, bool null_ok);
    bool is_list(const Val& v, std::string_view what, bool null_ok);
    template <class Fn>
    void for_each_key(const Val& v, std::string_view where, Keys allowed, Fn fn);
    std::optional<std::string> text(const Val& v, std::string_view what);
    std::optional<uint64_t> number(const Val& v, std::string_view what, uint64_t lo, uint64_t hi);
    std::optional<bool> flag(const Val& v, std::string_view what);

    void root(const Val& v);
    void listeners(const Val& v);
    void tcp_list(const Val& v);
    void rdma_list(const Val& v);
    void rdma_tuning(const Val& v);
    void tcp_tuning(const Val& v);
    void nfs4(const Val& v);
    void locks(const Val& v);
    void kerberos(const Val& v);
    void metrics(const Val& v);
    std::optional<TcpListener> tcp_listener(const Val& v, const std::string& kind = "TCP");
    void engine(const Val& v);
    void logging(const Val& v);
    void exports(const Val& v);
    std::optional<Export> export_entry(const Val& v);
    void rule_option(std::string_view key, const Val& v, ClientRule& rule);
    void options(const Val& v, const std::set<std::string, std::less<>>& keys, bool for_export,
                 Export& exp, ClientRule& rule);
    std::optional<std::vector<SecFlavor>> sec_list(const Val& v);
    void clients(const Val& v, const ClientRule& defaults, Export& exp);
    std::optional<ClientRule> client(const Val& v, const ClientRule& defaults);
    void check_mount_port();

    std::string file_;
    Config cfg_;
    std::vector<Error> errors_;
    std::optional<YAML::Mark> mount_port_mark_;
    std::vector<YAML::Mark> tcp_marks_;  // parallel to cfg_.tcp
    std::map<std::string, YAML::Mark> paths_;
    std::map<uint32_t, YAML::Mark> fsids_;
};

LoadResult Loader::run(std::string_view yaml) {
    std::vector<YAML::Node> docs;
    try {
        check_terminates(std::string(yaml));
        docs = YAML::LoadAll(std::string(yaml));
    } catch (const YAML::Exception& e) {
        error(e.mark, "YAML syntax error: " + e.msg);
    }
    if (!docs.empty()) root(list_item(docs[0]));
    for (size_t i = 1; i < docs.size(); ++i) {
        if (!docs[i].IsNull()) error(docs[i].Mark(), "expected a single YAML document");
    }
    LoadResult r;
    if (errors_.empty()) r.config = std::move(cfg_);
    r.errors = std::move(errors_);
    return r;
}

// ---- generic node helpers -------------------------------------------------

std::optional<bool> Loader::flag(const Val& v, std::string_view what) {
    auto s = text(v, what);
    if (!s) return std::nullopt;
    if (*s == "true" || *s == "yes") return true;
    if (*s == "false" || *s == "no") return false;
    error(v.mark, "expected true or false for " + std::string(what) + ", got '" + *s + "'");
    return std::nullopt;
}

bool Loader::is_map(const Val& v, std::string_view what, bool null_ok) {
    if (v.node.IsMap()) return true;
    if (!(null_ok && v.node.IsNull()))
        error(v.mark, "expected a mapping for " + std::string(what) + ", got " + type_name(v.node));
    return false;
}

bool Loader::is_list(const Val& v, std::string_view what, bool null_ok) {
    if (v.node.IsSequence()) return true;
    if (!(null_ok && v.node.IsNull()))
        error(v.mark, "expected a list for " + std::string(what) + ", got " + type_name(v.node));
    return false;
}

// Calls fn(key, value) for each entry; reports non-string, unknown and duplicate keys.
template <class Fn>
void Loader::for_each_key(const Val& v, std::string_view where, Keys allowed, Fn fn) {
    std::set<std::string> seen;
    for (const auto& kv : v.node) {
        // Copies: yaml-cpp's iterator proxies are temporaries.
        const YAML::Node k = kv.first;
        const YAML::Node val = kv.second;
        if (!k.IsScalar()) {
            error(k.Mark(), "keys " + std::string(where) + " must be strings");
            continue;
        }
        const std::string& key = k.Scalar();
        if (!contains(allowed, key)) {
            error(k.Mark(), "unknown key '" + key + "' " + std::string(where) +
                                " (expected one of: " + join(allowed) + ")");
        } else if (!seen.insert(key).second) {
            error(k.Mark(), "duplicate key '" + key + "' " + std::string(where));
        } else {
            fn(key, Val{val, val.IsNull() ? k.Mark() : val.Mark(), k.Mark()});
        }
    }
}

std::optional<std::string> Loader::text(const Val& v, std::string_view what) {
    if (v.node.IsScalar()) return v.node.Scalar();
    error(v.mark, "expected a value for " + std::string(what) + ", got " + type_name(v.node));
    return std::nullopt;
}

std::optional<uint64_t> Loader::number(const Val& v, std::string_view what, uint64_t lo,
                                       uint64_t hi) {
    auto s = text(v, what);
    if (!s) return std::nullopt;
    std::string why;
    auto n = parse_uint(*s, lo, hi, &why);
    if (!n) error(v.mark, "bad " + std::string(what) + ": " + why);
    return n;
}

// ---- sections ---------------------------------------------------------------

void Loader::root(const Val& v) {
    if (!is_map(v, "the top level", true)) return;
    Keys keys = {"listeners", "engine", "logging", "state_dir", "exports", "rdma",
                 "tcp",       "nfsv4",  "locks",   "kerberos",  "metrics"};
    for_each_key(v, "at top level", keys, [&](std::string_view key, const Val& val) {
        if (key == "listeners") {
            listeners(val);
        } else if (key == "engine") {
            engine(val);
        } else if (key == "logging") {
            logging(val);
        } else if (key == "rdma") {
            rdma_tuning(val);
        } else if (key == "tcp") {
            tcp_tuning(val);
        } else if (key == "nfsv4") {
            nfs4(val);
        } else if (key == "locks") {
            locks(val);
        } else if (key == "kerberos") {
            kerberos(val);
        } else if (key == "metrics") {
            metrics(val);
        } else if (key == "state_dir") {
            auto s = text(val, "'state_dir'");
            if (s && s->empty()) {
                error(val.mark, "'state_dir' must not be empty");
            } else if (s) {
                cfg_.state_dir = *s;
            }
        } else {
            exports(val);
        }
    });
    check_mount_port();
}

void Loader::listeners(const Val& v) {
    if (!is_map(v, "'listeners'", true)) return;
    Keys keys = {"tcp", "rdma", "mount_port", "max_record_size"};
    for_each_key(v, "in listeners", keys, [&](std::string_view key, const Val& val) {
        if (key == "tcp") {
            tcp_list(val);
        } else if (key == "rdma") {
            rdma_list(val);
        } else if (key == "mount_port") {
            if (auto p = number(val, "'mount_port'", 1, 65535)) cfg_.mount_port = uint16_t(*p);
            mount_port_mark_ = val.mark;
        } else {
            auto n = number(val, "'max_record_size'", kMinRecordSize, kMaxRecordSize);
            if (n) cfg_.max_record_size = uint32_t(*n);
        }
    });
}

// RDMA listeners: the same forms as tcp; an empty list turns RDMA off.
void Loader::rdma_list(const Val& v) {
    cfg_.rdma.clear();
    if (!is_list(v, "'rdma'", false)) return;
    for (const auto& item : v.node) {
        auto l = tcp_listener(list_item(item), "RDMA");
        if (!l) continue;
        for (const auto& seen : cfg_.rdma) {
            if (seen.address == l->address && seen.port == l->port)
                error(item.Mark(), "duplicate RDMA listener " + to_string(*l));
        }
        cfg_.rdma.push_back(*l);
    }
}

// The `rdma:` section: transport tuning.
void Loader::rdma_tuning(const Val& v) {
    if (!is_map(v, "'rdma'", true)) return;
    Keys keys = {"credits",      "inline_size",     "max_payload_buffers", "huge_pages",
                 "send_timeout", "max_connections", "receive_buffers",     "max_read_bytes"};
    auto& t = cfg_.rdma_tuning;
    for_each_key(v, "in rdma", keys, [&](std::string_view key, const Val& val) {
        if (key == "credits") {
            if (auto n = number(val, "'credits'", 1, 1024)) t.credits = uint32_t(*n);
        } else if (key == "inline_size") {
            auto n = number(val, "'inline_size'", 1024, 262144);
            if (n && *n % 1024 != 0)
                error(val.mark, "'inline_size' must be a multiple of 1024 (RFC 8797)");
            else if (n)
                t.inline_size = uint32_t(*n);
        } else if (key == "max_payload_buffers") {
            if (auto n = number(val, "'max_payload_buffers'", 1, 65536))
                t.max_payload_buffers = uint32_t(*n);
        } else if (key == "send_timeout") {
            if (auto n = number(val, "'send_timeout'", 0, 3600)) t.send_timeout = uint32_t(*n);
        } else if (key == "max_connections") {
            if (auto n = number(val, "'max_connections'", 1, 65536))
                t.max_connections = uint32_t(*n);
        } else if (key == "max_read_bytes") {
            // 0: as many bytes as the payload buffers hold (PoolSizes::read_budget()).
            auto n = number(val, "'max_read_bytes'", 0, 1u << 30);
            if (n && *n != 0 && *n < 65536)
                error(val.mark,
                      "'max_read_bytes' must be 0 (the payload pool's bytes) or at "
                      "least 65536");
            else if (n)
                t.max_read_bytes = uint32_t(*n);
        } else if (key == "receive_buffers") {
            if (auto n = number(val, "'receive_buffers'", 64, 1048576))
                t.receive_buffers = uint32_t(*n);
        } else if (auto b = flag(val, "'huge_pages'")) {
            t.huge_pages = *b;
        }
    });
    // Every connection is granted at least one credit out of the receive buffers the
    // shared receive queue does not keep posted (a quarter stay posted).
    const uint32_t budget = t.receive_buffers - std::max<uint32_t>(t.receive_buffers / 4, 1);
    if (t.max_connections > budget)
        error(v.mark, "'max_connections' (" + std::to_string(t.max_connections) +
                          ") exceeds the calls 'receive_buffers' can hold (" +
                          std::to_string(budget) + "): every connection needs one credit");
}

// The `tcp:` section: per-client bounds.
void Loader::tcp_tuning(const Val& v) {
    if (!is_map(v, "'tcp'", true)) return;
    Keys keys = {"max_connections", "idle_timeout", "max_pipes"};
    auto& t = cfg_.tcp_tuning;
    for_each_key(v, "in tcp", keys, [&](std::string_view key, const Val& val) {
        if (key == "max_connections") {
            if (auto n = number(val, "'max_connections'", 1, 1000000))
                t.max_connections = uint32_t(*n);
        } else if (key == "idle_timeout") {
            if (auto n = number(val, "'idle_timeout'", 0, 86400)) t.idle_timeout = uint32_t(*n);
        } else if (auto n = number(val, "'max_pipes'", 0, 65536)) {
            t.max_pipes = uint32_t(*n);
        }
    });
}

// The `nfsv4:` section.
void Loader::nfs4(const Val& v) {
    if (!is_map(v, "'nfsv4'", true)) return;
    Keys keys = {"enabled", "lease_time", "domain", "max_clients", "delegations",
                 "write_delegations"};
    auto& t = cfg_.nfs4;
    for_each_key(v, "in nfsv4", keys, [&](std::string_view key, const Val& val) {
        if (key == "enabled") {
            if (auto b = flag(val, "'enabled'")) t.enabled = *b;
        } else if (key == "delegations") {
            if (auto b = flag(val, "'delegations'")) t.delegations = *b;
        } else if (key == "write_delegations") {
            if (auto b = flag(val, "'write_delegations'")) t.write_delegations = *b;
        } else if (key == "lease_time") {
            if (auto n = number(val, "'lease_time'", 10, 3600)) t.lease_time = uint32_t(*n);
        } else if (key == "domain") {
            auto d = text(val, "'domain'");
            if (d && (d->empty() || d->find_first_of("@ \t") != std::string::npos))
                error(val.mark, "'domain' must be a DNS domain name, without '@' or spaces");
            else if (d)
                t.domain = *d;
        } else if (auto n = number(val, "'max_clients'", 1, 1000000)) {
            t.max_clients = uint32_t(*n);
        }
    });
}

// The `locks:` section.
void Loader::locks(const Val& v) {
    if (!is_map(v, "'locks'", true)) return;
    Keys keys = {"local", "max_files", "max_files_per_client", "nsm_name"};
    auto& t = cfg_.locks;
    for_each_key(v, "in locks", keys, [&](std::string_view key, const Val& val) {
        if (key == "local") {
            if (auto b = flag(val, "'local'")) t.local = *b;
        } else if (key == "nsm_name") {
            // SM_MAXSTRLEN (1024); a host name or an address, nothing else.
            auto n = text(val, "'nsm_name'");
            if (n && (n->empty() || n->size() > 1024 ||
                      n->find_first_of(" \t\n\r") != std::string::npos))
                error(val.mark, "'nsm_name' must be a host name or address of 1 to 1024 "
                                "characters, without spaces");
            else if (n)
                t.nsm_name = *n;
        } else if (key == "max_files") {
            if (auto n = number(val, "'max_files'", 1, 1000000)) t.max_files = uint32_t(*n);
        } else if (auto n = number(val, "'max_files_per_client'", 1, 1000000)) {
            t.max_files_per_client = uint32_t(*n);
        }
    });
    if (t.max_files_per_client > t.max_files)
        error(v.mark, "'max_files_per_client' must not exceed 'max_files'");
}

// The `metrics:` section: where the Prometheus endpoint listens.
void Loader::metrics(const Val& v) {
    if (!is_map(v, "'metrics'", true)) return;
    Keys keys = {"listen"};
    for_each_key(v, "in metrics", keys, [&](std::string_view, const Val& val) {
        auto s = text(val, "'listen'");
        if (!s) return;
        std::string why;
        if (auto l = parse_listener(*s, &why))
            cfg_.metrics = *l;
        else
            error(val.mark, "bad 'listen' in metrics: " + why);
    });
}

// The `kerberos:` section.
void Loader::kerberos(const Val& v) {
    if (!is_map(v, "'kerberos'", true)) return;
    Keys keys = {"keytab", "max_contexts", "seq_window"};
    auto& k = cfg_.kerberos;
    k.configured = true;
    for_each_key(v, "in kerberos", keys, [&](std::string_view key, const Val& val) {
        if (key == "keytab") {
            auto s = text(val, "'keytab'");
            if (s && s->empty())
                error(val.mark, "'keytab' must not be empty");
            else if (s)
                k.keytab = *s;
        } else if (key == "max_contexts") {
            if (auto n = number(val, "'max_contexts'", 1, 10000000)) k.max_contexts = uint32_t(*n);
        } else if (auto n = number(val, "'seq_window'", 32, 65536)) {
            k.seq_window = uint32_t(*n);
        }
    });
}

void Loader::tcp_list(const Val& v) {
    cfg_.tcp.clear();
    if (!is_list(v, "'tcp'", false)) return;
    if (v.node.size() == 0) error(v.mark, "'tcp' must list at least one listener");
    for (const auto& item : v.node) {
        auto l = tcp_listener(list_item(item));
        if (!l) continue;
        for (const auto& seen : cfg_.tcp) {
            if (seen.address == l->address && seen.port == l->port)
                error(item.Mark(), "duplicate TCP listener " + to_string(*l));
        }
        cfg_.tcp.push_back(*l);
        tcp_marks_.push_back(item.Mark());
    }
}

// "ADDR:PORT", "[V6]:PORT" or {address: ADDR, port: PORT}.
std::optional<TcpListener> Loader::tcp_listener(const Val& v, const std::string& kind) {
    std::string why;
    if (v.node.IsScalar()) {
        auto l = parse_listener(v.node.Scalar(), &why);
        if (!l) error(v.mark, "bad " + kind + " listener '" + v.node.Scalar() + "': " + why);
        return l;
    }
    if (!is_map(v, "a " + kind + " listener (or \"ADDR:PORT\")", false)) return std::nullopt;
    std::optional<std::string> addr;
    std::optional<uint64_t> port;
    bool bad = false;
    for_each_key(v, "in " + kind + " listener", {"address", "port"},
                 [&](std::string_view key, const Val& val) {
                     if (key == "port") {
                         port = number(val, "port", 1, 65535);
                         bad |= !port;
                     } else if (auto s = text(val, "address")) {
                         addr = canonical_ip(*s, &why);
                         if (!addr) error(val.mark, "bad " + kind + " listener address: " + why);
                         bad |= !addr;
                     }
                 });
    if (bad) return std::nullopt;
    if (!addr || !port) {
        error(v.mark, kind + " listener is missing '" + (addr ? "port" : "address") + "'");
        return std::nullopt;
    }
    return TcpListener{*addr, uint16_t(*port)};
}

void Loader::engine(const Val& v) {
    if (!is_map(v, "'engine'", true)) return;
    Keys keys = {"threads", "workers", "mode", "spin_us", "fd_cache", "reactor_calls"};
    for_each_key(v, "in engine", keys, [&](std::string_view key, const Val& val) {
        if (key == "threads") {
            if (auto n = number(val, "'threads'", 0, kMaxThreads))
                cfg_.engine_threads = unsigned(*n);
        } else if (key == "workers") {
            if (auto n = number(val, "'workers'", 1, kMaxWorkers)) cfg_.workers = unsigned(*n);
        } else if (key == "spin_us") {
            if (auto n = number(val, "'spin_us'", 0, 1000000)) cfg_.spin_us = uint32_t(*n);
        } else if (key == "fd_cache") {
            if (auto n = number(val, "'fd_cache'", 0, 1000000)) cfg_.fd_cache = uint32_t(*n);
        } else if (key == "reactor_calls") {
            if (auto b = flag(val, "'reactor_calls'")) cfg_.reactor_calls = *b;
        } else if (auto s = text(val, "'mode'")) {
            if (*s == "event")
                cfg_.engine_mode = EngineMode::Event;
            else if (*s == "adaptive")
                cfg_.engine_mode = EngineMode::Adaptive;
            else if (*s == "poll")
                cfg_.engine_mode = EngineMode::Poll;
            else
                error(val.mark,
                      "unknown engine mode '" + *s + "' (expected one of: event, poll, adaptive)");
        }
    });
}

void Loader::logging(const Val& v) {
    if (!is_map(v, "'logging'", true)) return;
    for_each_key(v, "in logging", {"level"}, [&](std::string_view, const Val& val) {
        auto s = text(val, "'level'");
        if (!s) return;
        if (is_log_level(*s)) {
            cfg_.log_level = *s;
        } else {
            error(val.mark, "unknown log level '" + *s +
                                "' (expected one of: " + std::string(kLogLevelWords) + ")");
        }
    });
}

void Loader::check_mount_port() {
    for (size_t i = 0; i < cfg_.tcp.size(); ++i) {
        const auto& l = cfg_.tcp[i];
        if (l.port != cfg_.mount_port) continue;
        // Blame mount_port if it was written, else the listener (tcp may be the default).
        YAML::Mark at = i < tcp_marks_.size() ? tcp_marks_[i] : YAML::Mark::null_mark();
        error(mount_port_mark_.value_or(at), "mount_port " + std::to_string(cfg_.mount_port) +
                                                 " is also used by TCP listener " + to_string(l));
    }
}

// ---- exports ----------------------------------------------------------------

void Loader::exports(const Val& v) {
    if (!is_list(v, "'exports'", true)) return;
    for (const auto& item : v.node) {
        if (auto e = export_entry(list_item(item))) cfg_.exports.push_back(std::move(*e));
    }
}

std::optional<Export> Loader::export_entry(const Val& v) {
    if (!is_map(v, "an export", false)) return std::nullopt;
    size_t errors_before = errors_.size();
    Export exp;
    ClientRule defaults;  // the export's access/squash/...; clients start from these
    std::optional<Val> clients_val, options_val;
    std::set<std::string, std::less<>> given;
    bool has_path = false;
    Keys keys = {"path",    "fsid", "mountpoint", "access",  "squash", "anonuid",
                 "anongid", "sec",  "secure",     "options", "clients"};
    for_each_key(v, "in export", keys, [&](std::string_view key, const Val& val) {
        given.emplace(key);
        if (key == "path") {
            has_path = true;
            auto s = text(val, "'path'");
            std::string why;
            auto p = s ? normalize_export_path(*s, &why) : std::nullopt;
            if (s && !p) error(val.mark, "bad export path '" + *s + "': " + why);
            if (p && !paths_.emplace(*p, val.mark).second) {
                error(val.mark, "duplicate export path '" + *p + "' (first at line " +
                                    std::to_string(paths_[*p].line + 1) + ")");
            }
            if (p) exp.path = *p;
        } else if (key == "fsid") {
            auto n = number(val, "'fsid'", 0, std::numeric_limits<uint32_t>::max());
            if (n && !fsids_.emplace(uint32_t(*n), val.mark).second) {
                error(val.mark, "duplicate fsid " + std::to_string(*n) + " (first at line " +
                                    std::to_string(fsids_[uint32_t(*n)].line + 1) + ")");
            }
            if (n) exp.fsid = uint32_t(*n);
        } else if (key == "mountpoint") {
            if (auto b = flag(val, "'mountpoint'")) exp.mountpoint = *b;
        } else if (key == "clients") {
            clients_val = val;
        } else if (key == "options") {
            options_val = val;
        } else {
            rule_option(key, val, defaults);
        }
    });
    if (options_val) options(*options_val, given, true, exp, defaults);
    if (!has_path) error(v.mark, "export has no 'path'");
    if (clients_val) {
        clients(*clients_val, defaults, exp);
    } else {
        exp.clients.push_back(defaults);  // clients: ["*"]
    }
    if (errors_.size() != errors_before) return std::nullopt;
    return exp;
}

// options: exports(5) words, as on the command line (config/export_options.h): a string
// "rw,no_root_squash,sec=krb5p" or a list [rw, no_root_squash, sec=krb5p]. A word may not
// set what a key of the same mapping sets (`access: ro` with `rw`); mp, fsid and clients
// are an export's, not a client's (a client's match is its `match`, an export's clients
// its `clients` list).
void Loader::options(const Val& v, const std::set<std::string, std::less<>>& keys, bool for_export,
                     Export& exp, ClientRule& rule) {
    std::string words;
    if (v.node.IsSequence()) {
        for (const auto& item : v.node) {
            auto w = text(list_item(item), "an export option");
            if (!w) return;
            words += (words.empty() ? "" : ",") + *w;
        }
    } else if (auto w = text(v, "'options'")) {
        words = *w;
    } else {
        return;
    }
    std::string why;
    std::vector<std::string> settings;
    Export e = exp;
    ClientRule r = rule;
    if (!apply_export_options(words, e, r, &why, &settings)) {
        error(v.mark, "options: " + why);
        return;
    }
    for (const auto& s : settings) {
        const std::string key = s == "mp" ? "mountpoint" : s;
        if (s == "clients") {
            error(v.mark, for_export ? "options: list an export's clients under 'clients'"
                                     : "options: a client's match is its 'match'");
            return;
        }
        if (!for_export && (s == "mp" || s == "fsid")) {
            error(v.mark, "options: '" + s + "' is an export's option, not a client's");
            return;
        }
        if (keys.contains(key)) {
            error(v.mark, "options: sets " + key + ", which '" + key + "' here sets too");
            return;
        }
    }
    if (e.fsid && e.fsid != exp.fsid && !fsids_.emplace(*e.fsid, v.mark).second) {
        error(v.mark, "duplicate fsid " + std::to_string(*e.fsid) + " (first at line " +
                          std::to_string(fsids_[*e.fsid].line + 1) + ")");
        return;
    }
    exp = std::move(e);
    rule = std::move(r);
}

// access / squash / anonuid / anongid / sec / secure, for an export's defaults or one client.
void Loader::rule_option(std::string_view key, const Val& v, ClientRule& rule) {
    if (key == "secure") {
        if (auto b = flag(v, "'secure'")) rule.secure = *b;
    } else if (key == "anonuid" || key == "anongid") {
        auto n = number(v, "'" + std::string(key) + "'", 0, std::numeric_limits<uint32_t>::max());
        if (n) (key == "anonuid" ? rule.anonuid : rule.anongid) = uint32_t(*n);
    } else if (key == "sec") {
        if (auto s = sec_list(v)) rule.sec = std::move(*s);
    } else if (key == "access") {
        auto s = text(v, "'access'");
        auto a = s ? parse_access(*s) : std::nullopt;
        if (a) rule.access = *a;
        if (s && !a) error(v.mark, "bad access '" + *s + "' (expected one of: ro, rw)");
    } else {
        auto s = text(v, "'squash'");
        auto q = s ? parse_squash(*s) : std::nullopt;
        if (q) rule.squash = *q;
        if (s && !q) error(v.mark, "bad squash '" + *s + "' (expected one of: none, root, all)");
    }
}

std::optional<std::vector<SecFlavor>> Loader::sec_list(const Val& v) {
    if (!is_list(v, "'sec'", false)) return std::nullopt;
    if (v.node.size() == 0) {
        error(v.mark, "'sec' must list at least one flavor");
        return std::nullopt;
    }
    size_t errors_before = errors_.size();
    std::vector<SecFlavor> out;
    for (const auto& item : v.node) {
        Val iv = list_item(item);
        auto s = text(iv, "a security flavor");
        auto f = s ? parse_sec(*s) : std::nullopt;
        if (s && !f) {
            error(iv.mark, "unknown security flavor '" + *s +
                               "' (expected one of: " + std::string(kSecWords) + ")");
        } else if (f && std::find(out.begin(), out.end(), *f) != out.end()) {
            error(iv.mark, "duplicate security flavor '" + *s + "'");
        } else if (f) {
            out.push_back(*f);
        }
    }
    if (errors_.size() != errors_before) return std::nullopt;
    return out;
}

void Loader::clients(const Val& v, const ClientRule& defaults, Export& exp) {
    if (!is_list(v, "'clients'", false)) return;
    if (v.node.size() == 0) error(v.mark, "'clients' must list at least one client");
    for (const auto& item : v.node) {
        auto rule = client(list_item(item), defaults);
        if (!rule) continue;
        for (const auto& seen : exp.clients) {
            if (match_key(seen.match) == match_key(rule->match)) {
                error(item.Mark(), "duplicate client '" + rule->match.text + "' (same as '" +
                                       seen.match.text + "')");
            }
        }
        exp.clients.push_back(std::move(*rule));
    }
}

// "SPEC" or {match: SPEC, access: ..., squash: ..., anonuid: ..., anongid: ..., sec: [...]}.
std::optional<ClientRule> Loader::client(const Val& v, const ClientRule& defaults) {
    ClientRule rule = defaults;
    auto set_match = [&](const Val& mv) {
        auto s = text(mv, "a client");
        if (!s) return false;
        std::string why;
        auto m = parse_client_match(*s, &why);
        if (!m) error(mv.mark, "bad client '" + *s + "': " + why);
        if (m) rule.match = std::move(*m);
        return m.has_value();
    };
    if (!v.node.IsMap()) return set_match(v) ? std::optional(rule) : std::nullopt;

    size_t errors_before = errors_.size();
    bool has_match = false;
    std::optional<Val> options_val;
    std::set<std::string, std::less<>> given;
    Keys keys = {"match", "access", "squash", "anonuid", "anongid", "sec", "secure", "options"};
    for_each_key(v, "in client", keys, [&](std::string_view key, const Val& val) {
        given.emplace(key);
        if (key == "match") {
            has_match = true;
            set_match(val);
        } else if (key == "options") {
            options_val = val;
        } else {
            rule_option(key, val, rule);
        }
    });
    if (options_val) {
        Export unused;
        options(*options_val, given, false, unused, rule);
    }
    if (!has_match) error(v.mark, "client has no 'match'");
    if (errors_.size() != errors_before) return std::nullopt;
    return rule;
}

}  // namespace

LoadResult load_string(std::string_view yaml, const std::string& name_for_errors) {
    return Loader(name_for_errors).run(yaml);
}

LoadResult load_file(const std::string& path) {
    auto fail = [&](std::string why) {
        LoadResult r;
        r.errors.push_back({path, 0, 0, "cannot read file: " + why});
        return r;
    };
    std::error_code ec;
    if (std::filesystem::is_directory(path, ec)) return fail("is a directory");
    std::ifstream in(path, std::ios::binary);
    if (!in) return fail(std::strerror(errno));
    std::ostringstream buf;
    buf << in.rdbuf();
    if (in.bad()) return fail("read error");
    return load_string(buf.str(), path);
}

}  // namespace nfsrdmad::config
