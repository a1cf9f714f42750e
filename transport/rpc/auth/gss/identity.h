// identity.h — whom a Kerberos principal acts as on this server: the local user the
// Kerberos library maps it to (krb5.conf auth_to_local, by default "user@DEFAULT_REALM"
// -> "user"), looked up through NSS (getpwnam_r, getgrouplist), as the Linux server's
// gssd does. A principal with no local user (machine principals such as nfs/<host> or
// host/<host>, users of other realms) acts as the anonymous id.
#pragma once

#include <cstdint>
#include <string>

#include "transport/rpc/call.h"

namespace nfsrdmad::rpc::gss {

// local_name: what SecContext::local_name() gave ("" if nothing).
AuthSys identity_of(const std::string& local_name, uint32_t anon_uid, uint32_t anon_gid);

}  // namespace nfsrdmad::rpc::gss
