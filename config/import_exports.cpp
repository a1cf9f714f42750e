#include "config/import_exports.h"

#include <yaml-cpp/yaml.h>

#include <map>

#include "config/export_options.h"
#include "config/overrides.h"
#include "config/parse.h"

namespace nfsrdmad::config {

namespace {

// One line of the file with its continuations joined, comments gone.
struct Logical {
    int line = 0;
    std::string text;
};

std::vector<Logical> logical_lines(std::string_view text) {
    std::vector<Logical> out;
    Logical cur;
    int line = 0;
    size_t pos = 0;
    while (pos <= text.size()) {
        size_t end = std::min(text.find('\n', pos), text.size());
        std::string_view l = text.substr(pos, end - pos);
        pos = end + 1;
        ++line;
        if (cur.text.empty()) cur.line = line;
        // '#' outside quotes starts a comment (exportfs reads them so).
        bool quoted = false;
        size_t cut = l.size();
        for (size_t i = 0; i < l.size(); ++i) {
            if (l[i] == '"') quoted = !quoted;
            if (l[i] == '#' && !quoted) {
                cut = i;
                break;
            }
        }
        l = l.substr(0, cut);
        const bool continues = !l.empty() && l.back() == '\\';
        if (continues) l.remove_suffix(1);
        cur.text += std::string(l) + " ";
        if (!continues) {
            if (cur.text.find_first_not_of(" \t\r") != std::string::npos) out.push_back(cur);
            cur = {};
        }
        if (end == text.size()) break;
    }
    if (cur.text.find_first_not_of(" \t\r") != std::string::npos) out.push_back(cur);
    return out;
}

// Whitespace-separated words; "..." keeps spaces (and stays part of its word).
std::vector<std::string> words(const std::string& s) {
    std::vector<std::string> out;
    std::string w;
    bool quoted = false;
    for (char c : s) {
        if (c == '"') {
            quoted = !quoted;
            continue;
        }
        if (!quoted && (c == ' ' || c == '\t' || c == '\r')) {
            if (!w.empty()) out.push_back(std::move(w));
            w.clear();
            continue;
        }
        w += c;
    }
    if (!w.empty()) out.push_back(std::move(w));
    return out;
}

// exportfs's octal escapes ("\040" is a space).
std::string unescape(const std::string& s) {
    std::string out;
    for (size_t i = 0; i < s.size(); ++i) {
        if (s[i] == '\\' && i + 3 < s.size() && s[i + 1] >= '0' && s[i + 1] <= '3' &&
            s[i + 2] >= '0' && s[i + 2] <= '7' && s[i + 3] >= '0' && s[i + 3] <= '7') {
            out += char((s[i + 1] - '0') * 64 + (s[i + 2] - '0') * 8 + (s[i + 3] - '0'));
            i += 3;
        } else {
            out += s[i];
        }
    }
    return out;
}

class Importer {
  public:
    explicit Importer(const std::string& file) : file_(file) {}

    void line(const Logical& l) {
        line_ = l.line;
        auto w = words(l.text);
        if (w.empty()) return error("a line with no export path (only quotes?)");
        std::string why;
        auto path = normalize_export_path(unescape(w.at(0)), &why);
        if (!path) return error("bad export path '" + w[0] + "': " + why);
        size_t at = 1;
        std::string defaults;
        if (at < w.size() && w[at].starts_with("-")) defaults = w[at++].substr(1);
        Export& exp = export_for(*path);
        if (at == w.size()) {
            warn(*path + ": no client named: exported to everyone (\"*\"), as exportfs does");
            client(exp, "*", defaults, "");
        }
        for (; at < w.size(); ++at) {
            const std::string& spec = w[at];
            const size_t open = spec.find('(');
            if (open == std::string::npos) {
                client(exp, spec, defaults, "");
                continue;
            }
            if (spec.back() != ')')
                return error("'" + spec + "': options must be in parentheses after the client");
            std::string host = spec.substr(0, open);
            if (host.empty()) {
                warn(*path + ": options with no client name: exported to everyone (\"*\")");
                host = "*";
            }
            client(exp, host, defaults, spec.substr(open + 1, spec.size() - open - 2));
        }
    }

    ImportResult finish() {
        ImportResult r;
        r.errors = std::move(errors_);
        r.warnings = std::move(warnings_);
        if (!r.errors.empty()) return r;
        YAML::Emitter y;
        y << YAML::Comment("imported by nfsrdmad import-exports from " + file_) << YAML::Newline;
        y << YAML::BeginMap << YAML::Key << "exports" << YAML::Value << YAML::BeginSeq;
        for (const auto& path : order_) {
            if (exports_.at(path).clients.empty()) {
                r.warnings.push_back({file_, 0, 0, path + ": not imported: no client left"});
                continue;
            }
            emit(y, exports_.at(path));
        }
        y << YAML::EndSeq << YAML::EndMap;
        r.yaml = std::string(y.c_str()) + "\n";
        return r;
    }

  private:
    Export& export_for(const std::string& path) {
        auto [it, fresh] = exports_.try_emplace(path);
        if (fresh) {
            it->second.path = path;
            order_.push_back(path);
        }
        return it->second;
    }

    // One client entry: the line's defaults, then its own options (later words win, as
    // in exportfs).
    void client(Export& exp, const std::string& host, const std::string& defaults,
                const std::string& own) {
        std::string why;
        auto match = parse_client_match(host, &why);
        if (!match) {
            warn(exp.path + ": client '" + host + "' dropped: " + why);
            return;
        }
        ClientRule rule;
        rule.match = *match;
        const auto fsid_before = exp.fsid;
        for (const std::string* opts : {&defaults, &own}) {
            size_t pos = 0;
            while (pos < opts->size()) {
                size_t end = std::min(opts->find(',', pos), opts->size());
                option(exp, rule, host, opts->substr(pos, end - pos));
                pos = end + 1;
            }
        }
        if (fsid_before && exp.fsid != fsid_before)
            return error(exp.path + ": fsid " + std::to_string(*exp.fsid) +
                         " differs from the fsid " + std::to_string(*fsid_before) +
                         " an earlier client gave it");
        exp.clients.push_back(std::move(rule));
    }

    void option(Export& exp, ClientRule& rule, const std::string& host, const std::string& opt) {
        if (opt.empty()) return;
        const size_t eq = opt.find('=');
        const std::string name = opt.substr(0, eq);
        const std::string value = eq == std::string::npos ? "" : opt.substr(eq + 1);
        const auto* info = find_export_option(name);
        const std::string where = exp.path + " " + host + ": ";
        if (!info) return warn(where + "unknown option '" + opt + "' dropped");
        if (info->support == OptionSupport::Default) return;
        if (info->support == OptionSupport::Refused)
            return warn(where + "option '" + opt + "' dropped: " + std::string(info->note));
        std::string why;
        if (!apply_export_option(name, value, exp, rule, &why))
            warn(where + "option '" + opt + "' dropped: " + why);
    }

    static void emit(YAML::Emitter& y, const Export& e) {
        y << YAML::BeginMap << YAML::Key << "path" << YAML::Value << e.path;
        if (e.fsid) y << YAML::Key << "fsid" << YAML::Value << *e.fsid;
        if (e.mountpoint) y << YAML::Key << "mountpoint" << YAML::Value << true;
        y << YAML::Key << "clients" << YAML::Value << YAML::BeginSeq;
        const ClientRule defaults;
        for (const auto& c : e.clients) {
            y << YAML::BeginMap << YAML::Key << "match" << YAML::Value << c.match.text;
            y << YAML::Key << "access" << YAML::Value << std::string(to_string(c.access));
            y << YAML::Key << "squash" << YAML::Value << std::string(to_string(c.squash));
            if (c.anonuid != defaults.anonuid)
                y << YAML::Key << "anonuid" << YAML::Value << c.anonuid;
            if (c.anongid != defaults.anongid)
                y << YAML::Key << "anongid" << YAML::Value << c.anongid;
            if (c.sec != defaults.sec) {
                y << YAML::Key << "sec" << YAML::Value << YAML::Flow << YAML::BeginSeq;
                for (auto f : c.sec) y << std::string(to_string(f));
                y << YAML::EndSeq;
            }
            if (!c.secure) y << YAML::Key << "secure" << YAML::Value << false;
            y << YAML::EndMap;
        }
        y << YAML::EndSeq << YAML::EndMap;
    }

    void error(std::string m) { errors_.push_back({file_, line_, 1, std::move(m)}); }
    void warn(std::string m) { warnings_.push_back({file_, line_, 1, std::move(m)}); }

    std::string file_;
    int line_ = 0;
    std::map<std::string, Export> exports_;
    std::vector<std::string> order_;
    std::vector<Error> errors_, warnings_;
};

}  // namespace

ImportResult import_exports(std::string_view text, const std::string& file) {
    Importer im(file);
    for (const auto& l : logical_lines(text)) im.line(l);
    return im.finish();
}

}  // namespace nfsrdmad::config
