// nsm_notify.h — after a restart, the hosts that held NLM locks are told (NSM, XNFS
// "Network Status Monitor Protocol": SM_NOTIFY, program 100024 version 1 procedure 6,
// sent to each host's rpc.statd, as sm-notify does for the kernel's lockd). Their statd
// passes it to their lockd, which reclaims its locks (nlm4_lockargs.reclaim) during the
// grace period NLM shares with NFSv4.1.
//
// The hosts are the addresses the previous boot recorded (vfs::RecoveryStore, file
// nlm-hosts: Services::monitor adds a host when it first takes a monitored lock). `state`
// is this boot's NSM state number: odd (the host is up) and greater than the last boot's.
// Each notification is an event through the CallbackSender; the result is logged.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "transport/rpc/callback.h"

namespace nfsrdmad::nfs::nlm {

// The NSM state number of a boot with this epoch (RecoveryStore::epoch()).
int32_t nsm_state(uint32_t epoch);

// SM_NOTIFY {mon_name = my_name, state} to each address ("10.0.0.7", "fd00::7").
// How many were sent (an unparsable address, or the sender's bound, skips one).
size_t notify_reboot(rpc::CallbackSender& sender, const std::vector<std::string>& addresses,
                     const std::string& my_name, int32_t state);

}  // namespace nfsrdmad::nfs::nlm
