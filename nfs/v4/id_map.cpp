#include "nfs/v4/id_map.h"

#include <grp.h>
#include <netdb.h>
#include <pwd.h>
#include <unistd.h>

#include <cctype>
#include <cerrno>
#include <charconv>
#include <fstream>
#include <sstream>
#include <vector>

namespace nfsrdmad::nfs::v4 {

namespace x4 = xdr::nfs4;

namespace {

class SystemNames final : public NameService {
  public:
    std::optional<std::string> user_name(uint32_t uid) const override {
        return lookup<passwd>(getpwuid_r, uid,
                              [](const passwd& p) { return std::string(p.pw_name); });
    }
    std::optional<std::string> group_name(uint32_t gid) const override {
        return lookup<group>(getgrgid_r, gid,
                             [](const group& g) { return std::string(g.gr_name); });
    }
    std::optional<uint32_t> user_id(const std::string& name) const override {
        return lookup<passwd>(getpwnam_r, name.c_str(), [](const passwd& p) { return p.pw_uid; });
    }
    std::optional<uint32_t> group_id(const std::string& name) const override {
        return lookup<group>(getgrnam_r, name.c_str(), [](const group& g) { return g.gr_gid; });
    }

  private:
    // The NSS reentrant calls, with a buffer that grows while they answer ERANGE (a group
    // with many members outgrows any fixed size), up to 16 MiB.
    template <class Entry, class Call, class Key, class Take>
    static auto lookup(Call call, Key key, Take take) -> std::optional<decltype(take(Entry{}))> {
        std::vector<char> buf(16384);
        for (;;) {
            Entry entry{};
            Entry* out = nullptr;
            int rc = call(key, &entry, buf.data(), buf.size(), &out);
            if (rc == ERANGE && buf.size() < (16u << 20)) {
                buf.resize(buf.size() * 4);
                continue;
            }
            if (rc != 0 || !out) return std::nullopt;
            return take(entry);  // copied out before buf goes
        }
    }
};

// A decimal number with nothing else, as the Linux client sends for unmapped ids.
std::optional<uint32_t> numeric(std::string_view s) {
    if (s.empty() || s.size() > 10 || (s.size() > 1 && s[0] == '0')) return std::nullopt;
    uint32_t v = 0;
    auto [end, ec] = std::from_chars(s.data(), s.data() + s.size(), v);
    if (ec != std::errc() || end != s.data() + s.size()) return std::nullopt;
    return v;
}

std::string_view trim(std::string_view s) {
    while (!s.empty() && std::isspace(static_cast<unsigned char>(s.front()))) s.remove_prefix(1);
    while (!s.empty() && std::isspace(static_cast<unsigned char>(s.back()))) s.remove_suffix(1);
    return s;
}

bool same_text(std::string_view a, std::string_view b) {
    if (a.size() != b.size()) return false;
    for (size_t i = 0; i < a.size(); ++i)
        if (std::tolower(static_cast<unsigned char>(a[i])) !=
            std::tolower(static_cast<unsigned char>(b[i])))
            return false;
    return true;
}

// A usable domain: not empty, no '@', no spaces (what the YAML loader also demands).
bool usable_domain(std::string_view d) {
    if (d.empty()) return false;
    for (char c : d)
        if (c == '@' || std::isspace(static_cast<unsigned char>(c)) || c == '\0') return false;
    return true;
}

}  // namespace

IdDomain id_domain_from(std::string_view conf, std::string_view host) {
    // idmapd.conf(5), read as nfs-utils' conffile does: "[Section]" headers and
    // "Tag = value" lines; '#' and ';' start a comment, also after an unquoted value; a
    // value in quotes loses them; section and tag names compare without case; a tag set
    // twice keeps the last value.
    bool general = false;
    std::optional<std::string_view> found;
    while (!conf.empty()) {
        size_t nl = conf.find('\n');
        std::string_view line = trim(conf.substr(0, nl));
        conf = nl == std::string_view::npos ? std::string_view{} : conf.substr(nl + 1);
        if (line.empty() || line[0] == '#' || line[0] == ';') continue;
        if (line.front() == '[') {
            size_t end = line.find(']');
            general = end != std::string_view::npos &&
                      same_text(trim(line.substr(1, end - 1)), "General");
            continue;
        }
        size_t eq = line.find('=');
        if (!general || eq == std::string_view::npos) continue;
        if (!same_text(trim(line.substr(0, eq)), "Domain")) continue;
        std::string_view value = trim(line.substr(eq + 1));
        if (!value.empty() && (value[0] == '"' || value[0] == '\'')) {
            size_t close = value.find(value[0], 1);
            value = close == std::string_view::npos ? value.substr(1) : value.substr(1, close - 1);
        } else {
            value = trim(value.substr(0, value.find_first_of("#;")));
        }
        found = value;
    }
    if (found && usable_domain(*found)) return {std::string(*found), "idmapd.conf", {}};
    // A Domain we cannot send (empty, spaces, '@') is passed over, loudly: the client's
    // nfsidmap may use it as it is.
    std::string warning;
    if (found)
        warning = "idmapd.conf's Domain \"" + std::string(*found) +
                  "\" is not a usable domain name: not used";
    if (size_t dot = host.find('.'); dot != std::string_view::npos) {
        std::string_view d = host.substr(dot + 1);
        while (!d.empty() && d.back() == '.') d.remove_suffix(1);  // an absolute name's root
        if (usable_domain(d)) return {std::string(d), "host name " + std::string(host), warning};
    }
    return {"localdomain", "the default: no Domain in idmapd.conf, no domain in the host name",
            warning};
}

IdDomain system_id_domain() {
    std::string conf;
    if (std::ifstream in("/etc/idmapd.conf"); in) {
        std::ostringstream all;
        all << in.rdbuf();
        conf = all.str();
    }
    // A Domain in the file needs no host name (whose canonical form may ask DNS).
    if (auto d = id_domain_from(conf, ""); d.source == "idmapd.conf") return d;
    char name[256] = {};
    std::string host;
    if (gethostname(name, sizeof name - 1) == 0) {
        host = name;
        addrinfo hints{};
        hints.ai_flags = AI_CANONNAME;
        addrinfo* res = nullptr;
        if (getaddrinfo(name, nullptr, &hints, &res) == 0) {
            if (res && res->ai_canonname) host = res->ai_canonname;
            freeaddrinfo(res);
        }
    }
    return id_domain_from(conf, host);
}

const NameService& system_name_service() {
    static const SystemNames names;
    return names;
}

std::string IdMap::owner(uint32_t uid) const {
    return cached(users_, uid, false);
}

std::string IdMap::owner_group(uint32_t gid) const {
    return cached(groups_, gid, true);
}

std::string IdMap::cached(Cache& cache, uint32_t id, bool group) const {
    const state::Time now = clock_.now();
    {
        std::lock_guard lock(mu_);
        if (auto it = cache.find(id); it != cache.end() && it->second.expires > now)
            return it->second.wire;
    }
    auto name = group ? names_.group_name(id) : names_.user_name(id);
    std::string wire = name ? *name + "@" + domain_ : std::to_string(id);
    std::lock_guard lock(mu_);
    if (cache.size() >= kMaxCached && !cache.contains(id)) {
        std::erase_if(cache, [&](const auto& kv) { return kv.second.expires <= now; });
        if (cache.size() >= kMaxCached) cache.clear();
    }
    cache.insert_or_assign(id, Cached{wire, now + (name ? kTtl : kMissTtl)});
    return wire;
}

IdMap::Parsed IdMap::uid_of(std::string_view owner) const {
    return parse(owner, false);
}
IdMap::Parsed IdMap::gid_of(std::string_view group) const {
    return parse(group, true);
}

IdMap::Parsed IdMap::parse(std::string_view s, bool group) const {
    if (auto n = numeric(s)) return {x4::NFS4_OK, *n};
    std::string_view name = s;
    if (auto at = s.rfind('@'); at != std::string_view::npos) {
        // RFC 8881 §5.9: the domain part must be ours (compared without case, as DNS is).
        if (!same_text(s.substr(at + 1), domain_)) return {x4::NFS4ERR_BADOWNER, 0};
        name = s.substr(0, at);
    }
    if (name.empty() || name.find('\0') != std::string_view::npos) return {x4::NFS4ERR_BADOWNER, 0};
    std::string n(name);
    auto id = group ? names_.group_id(n) : names_.user_id(n);
    if (!id) return {x4::NFS4ERR_BADOWNER, 0};
    return {x4::NFS4_OK, *id};
}

}  // namespace nfsrdmad::nfs::v4
