// host_keys.h — this host's Kerberos setup as the server needs it, read through the MIT
// krb5 API (GSS-API has no call for either): the default realm, whose machine principals
// act as root where an export allows root (identity.h), and the service keys in the keytab,
// which `check-config` and start-up check for the key clients ask for, nfs/<this host>
// (the host-based service name "nfs@<host>" of RFC 2623's NFS over RPCSEC_GSS; the Linux
// client's gssd takes <host> from the mount's server name).
#pragma once

#include <string>
#include <vector>

namespace nfsrdmad::rpc::gss {

// The default realm of krb5.conf; "" when there is none.
std::string default_realm();

struct KeytabReport {
    std::string error;                    // why the keytab could not be read ("" if it was)
    bool permission = false;              // `error` is a permission denied (not the daemon?)
    std::vector<std::string> principals;  // its distinct principals, in keytab order
    std::string expected;                 // nfs/<this host's canonical name>, without realm
    bool has_expected = false;            // a key for this host: `expected`, or nfs/ of its
                                          // host name or its canonical name, in any realm
};

// `path`: "" for the default keytab (KRB5_KTNAME, else /etc/krb5.keytab).
KeytabReport inspect_keytab(const std::string& path);

}  // namespace nfsrdmad::rpc::gss
