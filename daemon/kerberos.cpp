#include "daemon/kerberos.h"

#include "transport/rpc/auth/gss/host_keys.h"

namespace nfsrdmad::daemon {

bool kerberos_wanted(const config::Config& cfg) {
    if (cfg.kerberos.configured) return true;
    for (const auto& e : cfg.exports)
        for (const auto& rule : e.clients)
            for (config::SecFlavor f : rule.sec)
                if (f == config::SecFlavor::Krb5 || f == config::SecFlavor::Krb5i ||
                    f == config::SecFlavor::Krb5p)
                    return true;
    return false;
}

std::vector<KeytabFinding> check_keytab(const config::Config& cfg) {
    std::vector<KeytabFinding> out;
    if (!kerberos_wanted(cfg)) return out;
    const std::string& path = cfg.kerberos.keytab;
    const auto r = rpc::gss::inspect_keytab(path);
    const std::string where = "kerberos.keytab " + (path.empty() ? "(default)" : path);
    if (r.permission) {  // check-config run by another user than the daemon's (root)
        out.push_back({false, where + ": cannot be read by this user (" + r.error +
                                  "): not checked; the daemon must be able to read it"});
        return out;
    }
    if (!r.error.empty()) {
        out.push_back({true, where + ": cannot be used: " + r.error +
                                 "; Kerberos mounts will be refused (add the service key "
                                 "nfs/<this host> with kadmin's ktadd, readable by the daemon)"});
        return out;
    }
    if (r.expected.empty()) {
        out.push_back({false, where + ": this host's name for nfs/<host> could not be made "
                                      "(hostname and krb5.conf); not checked"});
    } else if (!r.has_expected) {
        std::string keys;
        for (const auto& p : r.principals) keys += (keys.empty() ? "" : ", ") + p;
        out.push_back({false, where + ": no key for " + r.expected + " (it holds " + keys +
                                  "); clients that mount this host by that name will fail to "
                                  "set up a context: add it with kadmin's ktadd"});
    }
    return out;
}

}  // namespace nfsrdmad::daemon
