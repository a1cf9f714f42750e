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
        bool udp = false;  // also served over UDP (udp, udp6), on the same port
    };
    // Registers each entry for tcp and tcp6 (and udp, udp6). When no rpcbind answers on
    // localhost, says so in the log and registers nothing.
    explicit RpcbindRegistration(std::vector<Entry> entries);
    ~RpcbindRegistration();  // unregisters what it registered
    bool active() const { return active_; }

private:
    std::vector<Entry> entries_;
    bool active_ = false;
};

bool rpcbind_running();

// What rpcbind is told: every (program, version) the registry holds, at the port
// `port_of` gives for its program; over UDP too where `over_udp` says so.
std::vector<RpcbindRegistration::Entry> rpcbind_entries(
    const ProgramRegistry& registry, const std::function<uint16_t(uint32_t prog)>& port_of,
    const std::function<bool(uint32_t prog)>& over_udp = {});

}  // namespace nfsrdmad::rpc
