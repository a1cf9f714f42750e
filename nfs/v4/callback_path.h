// callback_path.h — whether this server can call a client back (RFC 8881 §2.10.3.1: the
// backchannel runs over the connections the client bound to it; §18.46.3:
// SEQ4_STATUS_CB_PATH_DOWN tells the client it has none that works).
//
// One path per client (as knfsd keeps cl_cb_state): the connections bound to its
// backchannels, the one callbacks go on, and what the client asked to be called with
// (CallbackParams: program, AUTH_NONE/AUTH_SYS). A connection bound to a backchannel
// (CREATE_SESSION with CONN_BACK_CHAN granted, BIND_CONN_TO_SESSION for BACK or BOTH) is
// probed with CB_NULL unless the client's path is up already, so a client that makes a
// thousand sessions costs one probe, not a thousand. The probe's answer sets the path up
// or down. When the path's connection closes, the next one bound is probed; with none
// left the path is down, and SEQUENCE carries SEQ4_STATUS_CB_PATH_DOWN ("no operational
// backchannel path for any session", §18.46.3) until the client binds a connection again
// (the Linux client does BIND_CONN_TO_SESSION on that flag).
// Not tracked yet: a connection rebound to the fore channel only, or DESTROY_SESSION of
// the session a path's connection served (the connection stays a path until it closes).
//
// Owner: Services; a client's path lives until the client record goes (forget). Thread-
// safe. Calls go through rpc::BackChannels (the daemon's connection registry): an event,
// whose answer comes back later on a worker.
#pragma once

#include <chrono>
#include <cstdint>
#include <memory>
#include <mutex>
#include <unordered_map>
#include <vector>

#include "nfs/v4/state/session.h"
#include "nfs/v4/state/types.h"
#include "transport/rpc/back_channel.h"

namespace nfsrdmad::nfs::v4 {

class CallbackPaths {
  public:
    enum class State { Unknown, Probing, Up, Down };
    // The NFS4_CALLBACK program's version (RFC 8881 §18.36.3: csa_cb_program's "version 1").
    static constexpr uint32_t kCbVersion = 1, kCbNull = 0, kCbCompound = 1;

    // `channels` null: no backchannel (nothing is probed; no path is ever up).
    CallbackPaths(std::shared_ptr<rpc::BackChannels> channels, std::chrono::milliseconds timeout)
        : channels_(std::move(channels)), timeout_(timeout) {}

    bool enabled() const { return channels_ != nullptr; }
    // `conn` was bound to a backchannel of `client`'s session, which calls back with `cb`.
    void bound(state::ClientId client, state::ConnId conn, const state::CallbackParams& cb);
    void connection_closed(state::ConnId conn);
    void forget(state::ClientId client);
    // SEQ4_STATUS_CB_PATH_DOWN while the client's path is down (it had one that worked,
    // or one was bound and did not answer); 0 otherwise.
    uint32_t status_flags(state::ClientId client) const;
    State state(state::ClientId client) const;

  private:
    struct Path {
        State state = State::Unknown;
        state::ConnId conn = 0;            // the one callbacks go on
        std::vector<state::ConnId> conns;  // bound to a backchannel, oldest first
        state::CallbackParams cb;
        uint64_t probe = 0;  // which probe is the latest (an older answer changes nothing)
    };
    struct Probe {
        state::ClientId client = 0;
        state::ConnId conn = 0;
        uint64_t id = 0;
        rpc::BackCall call;
    };
    Probe start_probe(state::ClientId client, Path& p);  // mu_ held
    void send(Probe pr);                                 // mu_ not held

    const std::shared_ptr<rpc::BackChannels> channels_;
    const std::chrono::milliseconds timeout_;
    mutable std::mutex mu_;
    std::unordered_map<state::ClientId, Path> paths_;
    uint64_t probes_ = 0;
};

}  // namespace nfsrdmad::nfs::v4
