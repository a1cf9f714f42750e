// nsm_monitor.h — asking this host's rpc.statd to watch a client (NSM, XNFS "Network
// Status Monitor Protocol": SM_MON, program 100024 version 1 procedure 2), so that when
// the client reboots and its sm-notify reaches our statd, statd calls us back and the
// client's locks go (as knfsd's lockd has statd do). The callback statd makes is the
// one Linux's lockd takes: NLM program, version 4, procedure 16 (kNsmNotifyProc) with
// {mon_name, state, priv[16]} (the XNFS "status" of SM_MON's my_id), from this host.
// SM_UNMON (procedure 3) stops the watch once the host holds nothing and has been
// idle a while (Services::housekeep), so statd's list does not grow with every client
// that ever locked.
#pragma once

#include <cstdint>
#include <functional>
#include <string>

#include "transport/rpc/callback.h"

namespace nfsrdmad::nfs::nlm {

inline constexpr uint32_t kNsmNotifyProc = 16;

// SM_MON {mon_name, my_id {my_name "127.0.0.1", NLM, 4, kNsmNotifyProc}, priv} to the
// statd at 127.0.0.1. Its result is logged. False: not sent (the sender's bound).
bool monitor_host(rpc::CallbackSender& sender, const std::string& mon_name);
// SM_UNMON {mon_name, the same my_id}; `after` runs once statd answered (or did not).
// False: not sent (the sender's bound).
bool unmonitor_host(rpc::CallbackSender& sender, const std::string& mon_name,
                    std::function<void()> after = {});

}  // namespace nfsrdmad::nfs::nlm
