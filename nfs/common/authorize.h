// Which rule of an export applies to a call, and with whose credentials it runs
// (exports(5) semantics: first matching client rule, squash, sec= flavors).
#pragma once

#include <string>

#include "nfs/vfs/export.h"
#include "nfs/vfs/identity.h"
#include "transport/rpc/program.h"

namespace nfsrdmad::nfs {

struct Caller {
    const vfs::ClientRule* rule = nullptr;
    vfs::Identity id;
    bool read_write = false;
};

enum class Verdict {
    Ok,
    NotAllowed,    // no rule matches this client: ACCES
    WeakAuth,      // a rule matches, but not with this auth flavor: AUTH_TOOWEAK (RFC 2623 §2.3)
    InsecurePort,  // a `secure` rule matches a call from port >= 1024: PERM, as knfsd answers
};

// `any_flavor`: the export's sec= list is not checked (NFSv4.1 operations a client's
// SP4_MACH_CRED allows with its machine credential).
Verdict authorize(const vfs::Export& exp, const rpc::CallHeader& h, Caller& out,
                  bool any_flavor = false);

// Whether authorize() and client_rule() may wait for a name lookup (the export has a
// hostname rule): a caller that must not block (rpc::CallContext::nowait) leaves the call
// to a worker then.
bool may_look_up_names(const vfs::Export& exp);

// The client rule only (MOUNT: the flavors to offer, whether it may mount at all).
const vfs::ClientRule* client_rule(const vfs::Export& exp, const rpc::Peer& peer);

// exports(5) `secure`: false when the rule asks for a reserved source port (< 1024) and
// the peer's is not one. RPC-over-RDMA peers always pass, as with knfsd.
bool port_allowed(const vfs::ClientRule& rule, const rpc::Peer& peer);

// "10.0.0.7" (no port), for the mount list.
std::string peer_host(const rpc::Peer& peer);

// Forward-confirmed reverse DNS name of the peer, cached (HostnameCache); "" when it has
// none, or when too many lookups are running to start one without waiting.
std::string verified_hostname(const rpc::Peer& peer);

}  // namespace nfsrdmad::nfs
