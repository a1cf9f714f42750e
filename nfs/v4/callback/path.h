// callback/path.h — whether this server can call a client back (RFC 8881 §2.10.3.1: the
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
// A session that had a backchannel and has no connection bound to it any more (or whose
// client's path is down) is told so on its own SEQUENCE too: SEQ4_STATUS_CB_PATH_DOWN_SESSION
// ("the session has no operational backchannel", §18.46.3). BACKCHANNEL_CTL (§18.33)
// replaces a session's program and security for the calls that follow. A connection
// bound to a backchannel stays so: BIND_CONN_TO_SESSION refuses to take a channel away
// (NFS4ERR_INVAL, Session::bind), and SEQUENCE on it adds the fore channel.
//
// CB_COMPOUND calls (compound(): CB_RECALL ...) go on the path's connection with
// CB_SEQUENCE on a free slot of that connection's session (§2.10.6.3: the backchannel has
// its slots as the fore channel; csr_back_chan_attrs' ca_maxrequests of them, at most
// kMaxSlots used). A slot's sequence id starts at 1 and moves on when the client has
// answered CB_SEQUENCE (§20.9.3). Calls wait in the client's queue, in order, while no
// slot is free or the path is not up, at most kMaxQueued of them; a call that finds the
// queue full, or still waits at its deadline, fails. A call the client did not answer
// (the connection closed or timed out) or whose CB_SEQUENCE failed sets the path down: the
// client hears CB_PATH_DOWN, binds a connection again, and the queue moves once the probe
// is answered.
//
// Owner: Services; a client's path lives until the client record goes (forget). Thread-
// safe. Calls go through rpc::BackChannels (the daemon's connection registry): an event,
// whose answer comes back later on a worker.
#pragma once

#include <atomic>
#include <chrono>
#include <cstdint>
#include <deque>
#include <functional>
#include <map>
#include <memory>
#include <mutex>
#include <optional>
#include <set>
#include <string>
#include <unordered_map>
#include <vector>

#include "nfs/v4/callback/compound.h"
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
    // DESTROY_SESSION: its back slots go; a connection that served it is no path for it.
    void session_destroyed(state::ClientId client, const state::SessionId& session);
    // BACKCHANNEL_CTL: the session's calls use `cb`'s program and security from now on.
    void set_params(state::ClientId client, const state::SessionId& session,
                    const state::CallbackParams& cb);
    // SEQ4_STATUS_CB_PATH_DOWN while the client's path is down (it had one that worked,
    // or one was bound and did not answer); with `session`, SEQ4_STATUS_CB_PATH_DOWN_SESSION
    // as well when that session had a backchannel and has no working one now; 0 otherwise.
    uint32_t status_flags(state::ClientId client, const state::SessionId* session = nullptr) const;
    // The same for SEQUENCE, without mu_ while nothing changed: `memo` (the session's,
    // state::Session::callback_memo) keeps the flags with the generation of the paths they
    // were read at, and they are read again once any path changed (every change moves the
    // generation). Every SEQUENCE of every client asks, so this is what a call pays, and
    // no line another thread writes.
    uint32_t status_flags(state::ClientId client, const state::SessionId& session,
                          std::atomic<uint64_t>& memo) const;
    State state(state::ClientId client) const;

    static constexpr size_t kMaxQueued = 256, kMaxSlots = 16;
    using Clock = std::chrono::steady_clock;
    // The reply (nullopt: none came: `why`).
    using CbDone = std::function<void(std::optional<CbReply> reply, const std::string& why)>;
    // A CB_COMPOUND of CB_SEQUENCE and `ops` to `client` (see above). `done` runs once,
    // never under the caller's locks: later, or at once when the call cannot be queued.
    void compound(state::ClientId client, CbOps ops, Clock::time_point deadline, CbDone done);
    // Fails queued calls whose deadline has passed (the lease sweep runs it).
    void tick();
    size_t queued(state::ClientId client) const;

  private:
    struct Slots {
        std::vector<uint32_t> seqid;  // the next sequence id of each slot
        std::vector<bool> busy;
        state::CallbackParams cb;  // the session's program and security
    };
    struct Queued {
        CbOps ops;
        Clock::time_point deadline;
        CbDone done;
    };
    struct Path {
        State state = State::Unknown;
        state::ConnId conn = 0;            // the one callbacks go on
        std::vector<state::ConnId> conns;  // bound to a backchannel, oldest first
        std::unordered_map<state::ConnId, state::SessionId> session_of;  // last bound
        // Every (session, connection) bound to a backchannel (a connection may serve several
        // sessions' backchannels): whether a session still has one (CB_PATH_DOWN_SESSION).
        std::set<std::pair<state::SessionId, state::ConnId>> bindings;
        std::map<state::SessionId, Slots> sessions;  // the backchannel slots of each
        state::CallbackParams cb;  // of the session bound last (a probe's, when no session has)
        uint64_t probe = 0;        // which probe is the latest (an older answer changes nothing)
        std::deque<Queued> queue;
    };
    struct Outgoing {
        state::ClientId client = 0;
        state::ConnId conn = 0;
        state::SessionId session{};
        uint32_t slot = 0;
        rpc::BackCall call;
        const char* what = "";
        CbDone done;
    };
    using Failed = std::vector<std::pair<CbDone, std::string>>;
    // The calls the path can start now: slots taken, messages built (mu_ held).
    void pump(state::ClientId client, Path& p, std::vector<Outgoing>& out);
    void send_calls(std::vector<Outgoing> out);  // mu_ not held
    void finish_call(const Outgoing& o, const rpc::CallbackResult& r);
    rpc::BackCall base_call(const Path& p, uint32_t proc) const;
    struct Probe {
        state::ClientId client = 0;
        state::ConnId conn = 0;
        uint64_t id = 0;
        rpc::BackCall call;
    };
    Probe start_probe(state::ClientId client, Path& p);  // mu_ held
    void send(Probe pr);                                 // mu_ not held
    // mu_ held, by whatever may change a path: a status_flags memo is no longer current.
    void changed() { generation_.fetch_add(1, std::memory_order_release); }
    // A memo: the generation in its high bits (wrapping: a memo 2^48 changes old reads as
    // current, which no path lives to see), the flags (SEQ4_STATUS_CB_PATH_DOWN 0x1,
    // SEQ4_STATUS_CB_PATH_DOWN_SESSION 0x200) in its low 16.
    static constexpr unsigned kMemoFlagBits = 16;
    static constexpr uint64_t kMemoFlags = (uint64_t{1} << kMemoFlagBits) - 1;
    static constexpr uint64_t kMemoGenerations = (uint64_t{1} << (64 - kMemoFlagBits)) - 1;

    const std::shared_ptr<rpc::BackChannels> channels_;
    const std::chrono::milliseconds timeout_;
    mutable std::mutex mu_;
    std::unordered_map<state::ClientId, Path> paths_;
    uint64_t probes_ = 0;
    // Moved by every change under mu_ (changed()); starts past 0, which a new memo holds.
    alignas(64) std::atomic<uint64_t> generation_{1};
};

}  // namespace nfsrdmad::nfs::v4
