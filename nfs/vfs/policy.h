// policy.h — which client rule applies to a peer, and how its credentials are squashed.
#pragma once

#include <sys/socket.h>

#include <cstdint>
#include <string_view>

#include "nfs/vfs/export.h"
#include "nfs/vfs/identity.h"

namespace nfsrdmad::vfs {

// First rule of spec.rules that matches the peer, or nullptr (access denied).
//   Any      matches everyone;
//   Cidr     peer address within addr/prefix; an IPv4-mapped IPv6 peer (::ffff:a.b.c.d)
//            matches IPv4 rules and vice versa;
//   Hostname fnmatch(3) of the pattern (* ?) against the peer's verified host name,
//            case-insensitive, trailing dot ignored. An empty hostname matches nothing.
const ClientRule* match(const ExportSpec& spec, const sockaddr* peer, std::string_view hostname);

bool matches(const ClientRule::Match& m, const sockaddr* peer, std::string_view hostname);

// Whether the rule accepts this RPC auth flavor. An empty flavor list means AUTH_SYS only.
bool flavor_allowed(const ClientRule& rule, uint32_t flavor);

// Credentials to act with (cf. exports(5)):
//   AUTH_NONE callers, anonymous ones (a Kerberos principal with no local user) and
//   Squash::All -> anonuid/anongid, no supplementary groups;
//   Squash::Root -> uid 0 becomes anonuid, gid 0 (primary or supplementary) anongid;
//   Squash::None -> unchanged.
Identity squash(const ClientRule& rule, Identity from_client, uint32_t flavor = kAuthSys,
                bool anonymous = false);
// The same in place (every call authorizes: no Identity moved in and out).
void squash_in_place(const ClientRule& rule, Identity& id, uint32_t flavor, bool anonymous);

}  // namespace nfsrdmad::vfs
