#include "transport/rpc/auth/gss/identity.h"

#include <grp.h>
#include <pwd.h>
#include <unistd.h>

#include <cerrno>
#include <vector>

namespace nfsrdmad::rpc::gss {

AuthSys identity_of(const std::string& local_name, uint32_t anon_uid, uint32_t anon_gid) {
    AuthSys id;
    id.uid = anon_uid;
    id.gid = anon_gid;
    if (local_name.empty()) return id;
    struct passwd pw {};
    struct passwd* found = nullptr;
    std::vector<char> buf(16384);
    int rc;
    while ((rc = ::getpwnam_r(local_name.c_str(), &pw, buf.data(), buf.size(), &found)) == ERANGE &&
           buf.size() < (1u << 24))
        buf.resize(buf.size() * 2);
    if (rc != 0 || !found) return id;
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

}  // namespace nfsrdmad::rpc::gss
