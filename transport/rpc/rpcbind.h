// Registration with the system rpcbind (RFC 1833) through libtirpc, so that
// `rpcinfo -p`, `showmount -e` and clients that ask rpcbind find our programs.
#pragma once

#include <cstdint>
#include <functional>
#include <utility>
#include <vector>

#include "transport/rpc/registry.h"

namespace nfsrdmad::rpc {

class RpcbindRegistration {
public:
    struct Entry {
        uint32_t prog, vers;
        uint16_t port;
        bool udp = false;    // also served over UDP (udp, udp6), on the same port
        bool owned = false;  // registered by this process (set by the constructor)
    };
    // Registers each entry for tcp and tcp6 (and udp, udp6), unless another server that
    // still answers holds it (rpcbind_claim). When no rpcbind answers on localhost, says
    // so in the log and registers nothing.
    explicit RpcbindRegistration(std::vector<Entry> entries);
    // Unregisters what it registered and rpcbind still gives with our port: never another
    // server's entries (a second daemon on other ports, one started since).
    ~RpcbindRegistration();
    bool active() const { return active_; }

private:
    std::vector<Entry> entries_;
    bool active_ = false;
};

bool rpcbind_running();

// rpcbind already maps a program version we serve on port `ours` to port `registered`
// (0: nothing). Ours from an earlier run (same port) or a dead server's is taken over.
// One whose port still answers is left to it when another NFS server runs on this host
// (`other_nfs_server`: NFS registered on a live port not ours; a second nfsrdmad, the
// kernel nfsd), and taken otherwise: the kernel's lockd of this host's own NFS mounts
// registers NLM too, and NLM calls to an NFS server host are for its NFS server.
enum class RpcbindClaim { Take, LeaveToOther };
RpcbindClaim rpcbind_claim(uint16_t ours, uint16_t registered, bool registered_answers,
                           bool other_nfs_server);

// What rpcbind is told: every (program, version) the registry holds, at the port
// `port_of` gives for its program; over UDP too where `over_udp` says so.
std::vector<RpcbindRegistration::Entry> rpcbind_entries(
    const ProgramRegistry& registry, const std::function<uint16_t(uint32_t prog)>& port_of,
    const std::function<bool(uint32_t prog)>& over_udp = {});

}  // namespace nfsrdmad::rpc
