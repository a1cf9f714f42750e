// back_channel.h — calls this server makes on a client's own connection: the NFSv4.1
// backchannel (RFC 8881 §2.10.3.1: "the server sends callbacks over the connections the
// client bound to the session's back channel"; RFC 8167 for RPC-over-RDMA).
//
// nfs/ sees BackChannels only: call(conn, BackCall, done) on the connection with that id
// (rpc::Peer::conn). A transport's connection that can carry such calls is a CallChannel
// and registers with the daemon's ChannelRegistry while it is open. Per connection,
// PendingCalls keeps the calls awaiting their reply by XID; the connection hands it every
// REPLY record it reads before anything else sees the record (no dispatch, no reply
// cache, no credit), and fails what is left when it closes or a call's time runs out.
//
// A call is an event, never a parked thread: `done` runs later, once, off the reactor.
#pragma once

#include <chrono>
#include <cstdint>
#include <functional>
#include <map>
#include <memory>
#include <mutex>
#include <optional>
#include <span>
#include <string>
#include <unordered_map>
#include <vector>

#include "transport/rpc/callback.h"

namespace nfsrdmad::rpc {

struct BackCall {
    uint32_t prog = 0, vers = 0, proc = 0;
    // The credential (RFC 8881 §2.10.8.2: the security the client gave for its backchannel
    // in csa_sec_parms or BACKCHANNEL_CTL): AUTH_NONE (0) or AUTH_SYS (1) with uid and gid.
    uint32_t flavor = 0;
    uint32_t uid = 0, gid = 0;
    std::string machine = "nfsrdmad";  // authsys_parms.machinename
    std::vector<uint8_t> args;         // XDR-encoded arguments
    std::chrono::milliseconds timeout{10000};
};

// The RPC call message (RFC 5531 §9) for `c` with this xid, no record mark.
std::vector<uint8_t> encode_back_call(uint32_t xid, const BackCall& c);

// A record's XID and whether it is a REPLY (msg_type 1); false: too short or a CALL.
bool is_reply(std::span<const uint8_t> msg, uint32_t* xid = nullptr);

// The results of an accepted, successful reply; false (and why) otherwise.
bool parse_reply(std::span<const uint8_t> msg, std::vector<uint8_t>& results, std::string& why);

// The calls of one connection awaiting replies. Not thread-safe: the connection's reactor
// thread owns it. `done` callbacks are not run here but returned, for the caller to run
// off the reactor.
class PendingCalls {
  public:
    using Clock = std::chrono::steady_clock;
    using Done = std::function<void(CallbackResult)>;
    struct Finished {
        Done done;
        CallbackResult result;
    };

    explicit PendingCalls(size_t max_calls = 64) : max_(max_calls) {}
    // false: `max_calls` are outstanding already (the client's backchannel slots bound
    // the calls that make sense; this bounds memory whatever the caller does).
    bool add(uint32_t xid, Clock::time_point deadline, Done done);
    // A REPLY record: the call it answers, finished; nothing if no call has that xid (a
    // late or stray reply: dropped).
    std::optional<Finished> on_reply(std::span<const uint8_t> msg);
    // The call `xid`, failed with `why` (the transport refused it); nothing if none.
    std::optional<Finished> fail(uint32_t xid, const std::string& why);
    // Calls whose deadline is past, failed ("no reply within ...").
    std::vector<Finished> expire(Clock::time_point now);
    // Every call, failed with `why` (the connection closed).
    std::vector<Finished> fail_all(const std::string& why);
    // The earliest deadline, if any call is outstanding.
    std::optional<Clock::time_point> next_deadline() const;
    size_t size() const { return calls_.size(); }
    bool contains(uint32_t xid) const { return calls_.contains(xid); }

  private:
    struct Call {
        Clock::time_point deadline;
        Done done;
    };
    const size_t max_;
    std::unordered_map<uint32_t, Call> calls_;
};

// What a connection offers: send one call message (no record mark) whose xid is `xid`;
// `done` once with the reply or why there is none. False: the connection is known closed
// (`done` is not called). A transport that learns of a refusal only later (on its own
// thread: closed meanwhile, too many calls, too large) reports it through `done`.
class CallChannel {
  public:
    virtual ~CallChannel() = default;
    virtual bool send_call(uint32_t xid, std::vector<uint8_t> message,
                           std::chrono::milliseconds timeout, PendingCalls::Done done) = 0;
};

class BackChannels {
  public:
    virtual ~BackChannels() = default;
    // Calls `c` on connection `conn`. False: no such open connection carries calls (it
    // closed, or its transport has no backchannel), or its bound is reached; `done` is
    // not called then.
    virtual bool call(uint64_t conn, BackCall c, PendingCalls::Done done) = 0;
};

// The daemon's connections that carry calls, by id. Thread-safe.
class ChannelRegistry final : public BackChannels {
  public:
    void add(uint64_t conn, std::weak_ptr<CallChannel> channel);
    void remove(uint64_t conn);
    bool call(uint64_t conn, BackCall c, PendingCalls::Done done) override;
    size_t size() const;

  private:
    mutable std::mutex mu_;
    std::unordered_map<uint64_t, std::weak_ptr<CallChannel>> channels_;
    uint32_t next_xid_ = 0x62630000;  // "bc": apart from the NLM client's xids
};

}  // namespace nfsrdmad::rpc
