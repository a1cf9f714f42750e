#include "transport/rpc/auth/gss/identity.h"

#include <grp.h>
#include <pwd.h>
#include <unistd.h>

#include <cerrno>
#include <vector>

namespace nfsrdmad::rpc::gss {

std::optional<AuthSys> identity_of(const std::string& local_name) {
    if (local_name.empty()) return std::nullopt;
    AuthSys id;
    struct passwd pw {};
    struct passwd* found = nullptr;
    std::vector<char> buf(16384);
    int rc;
    while ((rc = ::getpwnam_r(local_name.c_str(), &pw, buf.data(), buf.size(), &found)) == ERANGE &&
           buf.size() < (1u << 24))
        buf.resize(buf.size() * 2);
    if (rc != 0 || !found) return std::nullopt;
    id.uid = pw.pw_uid;
    id.gid = pw.pw_gid;
    std::vector<gid_t> groups(64);
    int n = static_cast<int>(groups.size());
    while (::getgrouplist(local_name.c_str(), pw.pw_gid, groups.data(), &n) < 0) {
        if (n <= static_cast<int>(groups.size())) {  // no growth reported: give up on them
            n = 0;
            break;
        }
        groups.resize(static_cast<size_t>(n));
    }
    for (int i = 0; i < n; ++i)
        if (groups[static_cast<size_t>(i)] != pw.pw_gid)
            id.gids.push_back(groups[static_cast<size_t>(i)]);
    return id;
}

bool is_machine_principal(std::string_view principal, std::string_view realm) {
    if (realm.empty()) return false;
    const size_t at = principal.rfind('@');
    if (at == std::string_view::npos || principal.substr(at + 1) != realm) return false;
    const std::string_view name = principal.substr(0, at);
    // Quoted characters (RFC 1964 §2.1.1 display form) never make a machine name.
    if (name.find('\\') != std::string_view::npos) return false;
    const size_t slash = name.find('/');
    if (slash == std::string_view::npos) return false;
    const std::string_view service = name.substr(0, slash), host = name.substr(slash + 1);
    return (service == "host" || service == "nfs") && !host.empty() &&
           host.find('/') == std::string_view::npos;
}

std::optional<AuthSys> identity_for(const std::string& principal, const std::string& local_name,
                                    std::string_view realm) {
    if (!local_name.empty()) return identity_of(local_name);
    if (is_machine_principal(principal, realm)) {
        AuthSys root;
        root.uid = 0;
        root.gid = 0;
        return root;
    }
    return std::nullopt;
}

}  // namespace nfsrdmad::rpc::gss
