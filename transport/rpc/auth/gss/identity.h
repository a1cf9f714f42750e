// identity.h — whom a Kerberos principal acts as on this server: the local user the
// Kerberos library maps it to (krb5.conf auth_to_local, by default "user@DEFAULT_REALM"
// -> "user"), looked up through NSS (getpwnam_r, getgrouplist), as the Linux server's
// gssd does. A machine principal of the server's default realm (host/<host> or
// nfs/<host>: the client's root acts through it, the Linux client's gssd takes it from the
// client's keytab) that auth_to_local leaves unmapped acts as root, which the export's
// root squash then turns into its anonymous id unless the export allows root
// (no_root_squash), as for AUTH_SYS root. Any other principal with no local user (users of
// other realms, other services) acts as the export's anonymous id (anonuid, anongid).
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <string_view>

#include "transport/rpc/call.h"

namespace nfsrdmad::rpc::gss {

// local_name: what SecContext::local_name() gave ("" if nothing); none when no such user.
std::optional<AuthSys> identity_of(const std::string& local_name);

// "host/<name>@<realm>" or "nfs/<name>@<realm>", two components, of `realm` (not empty).
bool is_machine_principal(std::string_view principal, std::string_view realm);

// Whom `principal` acts as: its local user, else root for a machine principal of `realm`,
// else none: the export's anonymous id (Credential::anonymous).
std::optional<AuthSys> identity_for(const std::string& principal, const std::string& local_name,
                                    std::string_view realm);

}  // namespace nfsrdmad::rpc::gss
