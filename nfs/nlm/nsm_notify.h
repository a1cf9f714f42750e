// nsm_notify.h — after a restart, the hosts that held NLM locks are told (NSM, XNFS
// "Network Status Monitor Protocol": SM_NOTIFY, program 100024 version 1 procedure 6,
// sent to each host's rpc.statd, as sm-notify does for the kernel's lockd). Their statd
// passes it to their lockd, which reclaims its locks (nlm4_lockargs.reclaim) during the
// grace period NLM shares with NFSv4.1.
//
// The hosts are the addresses the previous boot recorded (vfs::RecoveryStore, file
// nlm-hosts: Services::monitor adds a host when it first takes a monitored lock). `state`
// is this boot's NSM state number: odd (the host is up) and greater than the last boot's.
//
// A host that is down or not reachable yet is asked again, as sm-notify does: after 2 s,
// then twice as long each time up to a minute, for 15 minutes (sm-notify's default
// retry time); a host the callback bound left out waits for the next round. Each
// notification is an event through the CallbackSender; nothing waits for a host.
#pragma once

#include <chrono>
#include <cstdint>
#include <memory>
#include <mutex>
#include <string>
#include <vector>

#include "transport/rpc/callback.h"

namespace nfsrdmad::nfs::nlm {

// The NSM state number of a boot with this epoch (RecoveryStore::epoch()).
int32_t nsm_state(uint32_t epoch);

class RebootNotices {
  public:
    using Clock = std::chrono::steady_clock;
    static constexpr std::chrono::seconds kFirstRetry{2}, kMaxRetry{60}, kGiveUp{15 * 60};

    // SM_NOTIFY {mon_name = my_name, state} is owed to each address ("10.0.0.7",
    // "fd00::7"); an unparsable one is logged and dropped.
    RebootNotices(const std::vector<std::string>& addresses, std::string my_name, int32_t state,
                  Clock::time_point now = Clock::now());

    // Sends the notifications that are due (not answered, not in flight, their retry time
    // come); gives up on hosts past kGiveUp. How many were sent.
    size_t send_due(rpc::CallbackSender& sender, Clock::time_point now = Clock::now());
    size_t pending() const;  // hosts not notified yet and not given up on
    int32_t state() const { return state_; }  // this boot's NSM state, as notified

  private:
    struct Host {
        std::string address;
        sockaddr_storage peer{};
        socklen_t peer_len = 0;
        Clock::time_point next;
        std::chrono::seconds backoff{0};
        bool in_flight = false, done = false;
    };
    struct State {
        std::mutex mu;
        std::vector<Host> hosts;
    };
    const std::string my_name_;
    const int32_t state_;
    const Clock::time_point give_up_;
    std::shared_ptr<State> s_;  // shared with the calls in flight
};

}  // namespace nfsrdmad::nfs::nlm
