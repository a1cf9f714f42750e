#include "config/overrides.h"

#include <algorithm>
#include <functional>
#include <limits>
#include <map>

#include "config/export_options.h"
#include "config/parse.h"

namespace nfsrdmad::config {

namespace {

constexpr std::string_view kSupported =
    "rw, ro, root_squash, no_root_squash, all_squash, secure, insecure, anonuid=N, anongid=N, "
    "sec=FLAVOR[:FLAVOR...], fsid=N, mp, clients=SPEC; and as the default behaviour: sync, "
    "no_subtree_check, wdelay, no_wdelay, hide, no_all_squash, secure_locks, no_acl";

bool fail(std::string* why, std::string msg) {
    if (why) *why = std::move(msg);
    return false;
}

// Option name -> group; two options of one group may not be combined.
std::optional<std::string_view> option_group(std::string_view name) {
    if (name == "rw" || name == "ro") return "access";
    if (name == "root_squash" || name == "no_root_squash" || name == "all_squash") return "squash";
    if (name == "secure" || name == "insecure") return "secure";
    if (name == "mp" || name == "mountpoint") return "mp";
    for (std::string_view n : {"anonuid", "anongid", "sec", "fsid", "clients"}) {
        if (name == n) return n;
    }
    return std::nullopt;
}

bool takes_value(std::string_view group) {
    return group != "access" && group != "squash" && group != "secure" && group != "mp";
}

bool parse_sec_value(std::string_view value, std::vector<SecFlavor>& out, std::string* why) {
    out.clear();
    size_t pos = 0;
    while (pos <= value.size()) {
        size_t end = std::min(value.find(':', pos), value.size());
        std::string_view word = value.substr(pos, end - pos);
        auto f = parse_sec(word);
        if (!f) {
            return fail(why, "unknown security flavor '" + std::string(word) +
                                 "' (expected one of: " + std::string(kSecWords) + ")");
        }
        if (std::find(out.begin(), out.end(), *f) != out.end()) {
            return fail(why, "duplicate security flavor '" + std::string(word) + "'");
        }
        out.push_back(*f);
        pos = end + 1;
    }
    return true;
}

bool set_uint32(std::string_view name, std::string_view value, uint32_t& out, std::string* why) {
    std::string reason;
    auto n = parse_uint(value, 0, std::numeric_limits<uint32_t>::max(), &reason);
    if (!n) return fail(why, "bad " + std::string(name) + ": " + reason);
    out = uint32_t(*n);
    return true;
}

}  // namespace

bool apply_export_options(std::string_view opts, Export& exp, ClientRule& rule, std::string* why,
                          std::vector<std::string>* settings) {
    std::map<std::string_view, std::string_view> seen;  // group -> option that set it
    size_t pos = 0;
    while (pos <= opts.size()) {
        size_t end = std::min(opts.find(',', pos), opts.size());
        std::string_view opt = opts.substr(pos, end - pos);
        pos = end + 1;
        size_t eq = opt.find('=');
        std::string_view name = opt.substr(0, eq);
        if (opt.empty()) return fail(why, "empty export option (stray comma?)");
        auto group = option_group(name);
        if (!group) {
            // exports(5) words: what nfsrdmad always does passes; the rest says why not.
            if (const auto* known = find_export_option(name)) {
                if (known->support == OptionSupport::Default && eq == std::string_view::npos)
                    continue;
                if (known->support == OptionSupport::Refused)
                    return fail(why, "export option '" + std::string(name) +
                                         "' is not supported: " + std::string(known->note));
            }
            return fail(why, "unknown export option '" + std::string(opt) +
                                 "' (supported: " + std::string(kSupported) + ")");
        }
        if (takes_value(*group) != (eq != std::string_view::npos)) {
            return fail(why, "option '" + std::string(name) +
                                 (takes_value(*group) ? "' needs a value" : "' takes no value"));
        }
        if (auto [it, fresh] = seen.emplace(*group, opt); !fresh) {
            return fail(why, "option '" + std::string(opt) + "' conflicts with earlier '" +
                                 std::string(it->second) + "'");
        }
        std::string_view value = eq == std::string_view::npos ? "" : opt.substr(eq + 1);
        if (!apply_export_option(name, value, exp, rule, why)) return false;
        if (settings) settings->emplace_back(*group);
    }
    return true;
}

namespace {

using ErrorFn = std::function<void(std::string)>;

// --tcp, --rdma, --metrics, --mount-port, --state-dir, --log-level.
void apply_scalars(Config& out, const Overrides& o, const ErrorFn& error) {
    std::string why;
    if (o.rdma) {
        if (*o.rdma == "off") {
            out.rdma.clear();
        } else if (auto l = parse_listener(*o.rdma, &why)) {
            out.rdma = {*l};
        } else {
            error("--rdma " + *o.rdma + ": " + why);
        }
    }
    if (o.metrics) {
        if (*o.metrics == "off") {
            out.metrics.reset();
        } else if (auto l = parse_listener(*o.metrics, &why)) {
            out.metrics = *l;
        } else {
            error("--metrics " + *o.metrics + ": " + why);
        }
    }
    if (o.tcp) {
        auto l = parse_listener(*o.tcp, &why);
        if (l) {
            out.tcp = {*l};
        } else {
            error("--tcp " + *o.tcp + ": " + why);
        }
    }
    if (o.mount_port) {
        if (*o.mount_port == 0) {
            error("--mount-port: port must be 1-65535");
        } else {
            out.mount_port = *o.mount_port;
        }
    }
    if (o.state_dir) {
        if (o.state_dir->empty()) {
            error("--state-dir: must not be empty");
        } else {
            out.state_dir = *o.state_dir;
        }
    }
    if (o.log_level) {
        if (is_log_level(*o.log_level)) {
            out.log_level = *o.log_level;
        } else {
            error("--log-level " + *o.log_level +
                  ": expected one of: " + std::string(kLogLevelWords));
        }
    }
}

// One --export, checked against the exports already in `out`.
void add_export(Config& out, const std::string& arg, const ErrorFn& error) {
    std::string why;
    auto exp = parse_export_option(arg, &why);
    if (!exp) {
        error("--export " + arg + ": " + why);
        return;
    }
    for (const auto& e : out.exports) {
        if (e.path == exp->path) {
            error("--export " + arg + ": '" + e.path + "' is already exported");
        }
        if (exp->fsid && e.fsid == exp->fsid) {
            error("--export " + arg + ": fsid " + std::to_string(*exp->fsid) +
                  " is already used by '" + e.path + "'");
        }
    }
    out.exports.push_back(std::move(*exp));
}

}  // namespace

std::optional<Export> parse_export_option(std::string_view arg, std::string* why) {
    size_t eq = arg.find('=');
    auto path = normalize_export_path(arg.substr(0, eq), why);
    if (!path) return std::nullopt;
    Export exp{*path, std::nullopt, {}};
    ClientRule rule;
    rule.access = Access::ReadWrite;
    if (eq != std::string_view::npos) {
        if (eq + 1 == arg.size()) {
            fail(why, "missing options after '='");
            return std::nullopt;
        }
        if (!apply_export_options(arg.substr(eq + 1), exp, rule, why)) return std::nullopt;
    }
    exp.clients.push_back(std::move(rule));
    return exp;
}

bool apply_export_option(std::string_view name, std::string_view value, Export& exp,
                         ClientRule& rule, std::string* why) {
    if (name == "rw" || name == "ro") {
        rule.access = name == "rw" ? Access::ReadWrite : Access::ReadOnly;
    } else if (name == "root_squash" || name == "no_root_squash" || name == "all_squash") {
        rule.squash = name == "all_squash"    ? Squash::All
                      : name == "root_squash" ? Squash::Root
                                              : Squash::None;
    } else if (name == "secure" || name == "insecure") {
        rule.secure = name == "secure";
    } else if (name == "mp" || name == "mountpoint") {
        exp.mountpoint = true;
    } else if (name == "anonuid") {
        return set_uint32(name, value, rule.anonuid, why);
    } else if (name == "anongid") {
        return set_uint32(name, value, rule.anongid, why);
    } else if (name == "fsid") {
        uint32_t fsid = 0;
        if (!set_uint32(name, value, fsid, why)) return false;
        exp.fsid = fsid;
    } else if (name == "sec") {
        return parse_sec_value(value, rule.sec, why);
    } else {  // clients
        std::string reason;
        auto m = parse_client_match(value, &reason);
        if (!m) return fail(why, "bad client '" + std::string(value) + "': " + reason);
        rule.match = std::move(*m);
    }
    return true;
}

std::vector<Error> apply_overrides(Config& cfg, const Overrides& o) {
    std::vector<Error> errors;
    auto error = [&](std::string msg) { errors.push_back({kOverridesFile, 0, 0, std::move(msg)}); };
    Config out = cfg;
    apply_scalars(out, o, error);
    for (const auto& arg : o.exports) add_export(out, arg, error);
    for (const auto& l : out.tcp) {
        if (l.port == out.mount_port) {
            error("mount port " + std::to_string(out.mount_port) +
                  " is also used by TCP listener " + to_string(l));
        }
    }
    if (errors.empty()) cfg = std::move(out);
    return errors;
}

}  // namespace nfsrdmad::config
