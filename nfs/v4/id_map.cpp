#include "nfs/v4/id_map.h"

#include <grp.h>
#include <pwd.h>

#include <charconv>
#include <vector>

namespace nfsrdmad::nfs::v4 {

namespace x4 = xdr::nfs4;

namespace {

class SystemNames final : public NameService {
  public:
    std::optional<std::string> user_name(uint32_t uid) const override {
        std::vector<char> buf(16384);
        passwd pw{};
        passwd* out = nullptr;
        if (getpwuid_r(uid, &pw, buf.data(), buf.size(), &out) != 0 || !out) return std::nullopt;
        return std::string(pw.pw_name);
    }
    std::optional<std::string> group_name(uint32_t gid) const override {
        std::vector<char> buf(65536);
        group gr{};
        group* out = nullptr;
        if (getgrgid_r(gid, &gr, buf.data(), buf.size(), &out) != 0 || !out) return std::nullopt;
        return std::string(gr.gr_name);
    }
    std::optional<uint32_t> user_id(const std::string& name) const override {
        std::vector<char> buf(16384);
        passwd pw{};
        passwd* out = nullptr;
        if (getpwnam_r(name.c_str(), &pw, buf.data(), buf.size(), &out) != 0 || !out)
            return std::nullopt;
        return pw.pw_uid;
    }
    std::optional<uint32_t> group_id(const std::string& name) const override {
        std::vector<char> buf(65536);
        group gr{};
        group* out = nullptr;
        if (getgrnam_r(name.c_str(), &gr, buf.data(), buf.size(), &out) != 0 || !out)
            return std::nullopt;
        return gr.gr_gid;
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

}  // namespace

const NameService& system_name_service() {
    static const SystemNames names;
    return names;
}

std::string IdMap::owner(uint32_t uid) const {
    if (auto n = names_.user_name(uid)) return *n + "@" + domain_;
    return std::to_string(uid);
}

std::string IdMap::owner_group(uint32_t gid) const {
    if (auto n = names_.group_name(gid)) return *n + "@" + domain_;
    return std::to_string(gid);
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
        std::string_view dom = s.substr(at + 1);
        bool same = dom.size() == domain_.size();
        for (size_t i = 0; same && i < dom.size(); ++i)
            same = std::tolower(static_cast<unsigned char>(dom[i])) ==
                   std::tolower(static_cast<unsigned char>(domain_[i]));
        if (!same) return {x4::NFS4ERR_BADOWNER, 0};
        name = s.substr(0, at);
    }
    if (name.empty() || name.find('\0') != std::string_view::npos) return {x4::NFS4ERR_BADOWNER, 0};
    std::string n(name);
    auto id = group ? names_.group_id(n) : names_.user_id(n);
    if (!id) return {x4::NFS4ERR_BADOWNER, 0};
    return {x4::NFS4_OK, *id};
}

}  // namespace nfsrdmad::nfs::v4
