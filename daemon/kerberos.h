// kerberos.h — when the daemon serves RPCSEC_GSS, and what is wrong with its keytab: used
// at start-up (warnings in the log) and by `nfsrdmad check-config` (printed; an unreadable
// or empty keytab fails the check).
#pragma once

#include <string>
#include <vector>

#include "config/config.h"

namespace nfsrdmad::daemon {

// An export lists krb5, krb5i or krb5p, or the `kerberos:` section is given.
bool kerberos_wanted(const config::Config& cfg);

struct KeytabFinding {
    bool error = false;  // Kerberos mounts cannot work at all
    std::string text;    // says what is wrong and what to do
};

// Nothing when Kerberos is not wanted or the keytab holds nfs/<this host>.
std::vector<KeytabFinding> check_keytab(const config::Config& cfg);

}  // namespace nfsrdmad::daemon
