// Routes a decoded RPC call through the auth stage to its program, answers what no
// program can (RFC 5531 §9: PROG_UNAVAIL, PROG_MISMATCH, PROC_UNAVAIL, GARBAGE_ARGS,
// SYSTEM_ERR, RPC_MISMATCH, AUTH_ERROR) and keeps the duplicate request cache.
// Synchronous: a transport calls dispatch() on a worker thread and sends what it returns.
//
// The duplicate request cache keeps results (accept_stat onward, before the flavor
// wraps them), never a reply header: a replay gets a header and verifier of its own,
// as RPCSEC_GSS needs (RFC 2203 §5.3.3.2), and is wrapped again.
#pragma once

#include <algorithm>
#include <atomic>
#include <chrono>
#include <memory>
#include <optional>

#include "transport/rpc/auth/flavor.h"
#include "transport/rpc/call.h"
#include "transport/rpc/deferred_wakes.h"
#include "transport/rpc/message.h"
#include "transport/rpc/program.h"
#include "transport/rpc/registry.h"
#include "transport/rpc/reply_cache.h"
#include "transport/rpc/stripes.h"

namespace nfsrdmad::rpc {

// An RPCSEC_GSS call's accepted authentication, kept while it is put off (dispatcher.cpp).
struct KeptAuth;

// A call put off (Outcome::Later): what dispatch() and its transport carry between runs.
// Calls put off at once are bounded (Dispatcher::kMaxDeferred); each run waits twice as
// long as the one before (kFirstDeferral, ...) up to kLongestDeferral, so that a call is
// answered at most that long after what held it up cleared; kDeferAttempts runs at most,
// then the procedure's own wait-and-retry answer is sent (1 020 ms in all: 4, 8, 16, 32, 64,
// then 128 ms seven times). No thread waits: the transport's timer runs the call again
// (workers never wait on a client), or sooner when what held it up is gone
// (deferred_wakes.h): such a run does not count as one of the kDeferAttempts, and the call
// gives up all the same once kDeferBudget has passed since it was first put off.
struct Deferral {
    unsigned attempt = 0;                // in: runs put off so far (the transport keeps it)
    bool woken = false;                  // in: this run is a wake-up's, not the timer's
    // out: the transport may have a wake-up run the call before its timer. A woken run put
    // off again waits for its timer, so that a call runs at most twice per step however
    // many delegations end meanwhile.
    bool wakeable = false;
    // Wake-ups before this run began (DeferredWakes::generation): one that came while it
    // ran, before its transport could register it, runs it again at once.
    uint64_t wakes_seen = 0;
    std::chrono::steady_clock::time_point until{};  // no run put off past this (first put-off)
    std::chrono::steady_clock::time_point due{};    // when the timer's step ends
    std::chrono::milliseconds after{0};  // out: non-zero: no reply; run it again after this
    std::shared_ptr<void> slot;          // the call's place under the bound, while it waits
    // A flavor with state (RPCSEC_GSS): the call's credential, reply verifier and unwrapped
    // arguments from its first run. A later run does not pass the auth stage again: its
    // sequence number, seen already, would be taken for a replay and the call dropped
    // (RFC 2203 §5.3.3.1).
    std::shared_ptr<KeptAuth> kept;
};

class Dispatcher {
public:
    static constexpr size_t kMaxDeferred = 256;
    static constexpr unsigned kDeferAttempts = 12;
    static constexpr std::chrono::milliseconds kFirstDeferral{4};
    static constexpr std::chrono::milliseconds kLongestDeferral{128};
    // The schedule's sum: how long after its first put-off a call gives up (1 020 ms).
    static constexpr std::chrono::milliseconds kDeferBudget = [] {
        std::chrono::milliseconds sum{0};
        for (unsigned i = 0; i < kDeferAttempts; ++i)
            sum += std::min(kFirstDeferral * (1u << i), kLongestDeferral);
        return sum;
    }();
    // Arguments decrypted for calls put off (krb5p) and kept until they run again, in all;
    // a call that would pass it is answered now. Integrity (krb5i) and authentication alone
    // (krb5) keep none: their arguments stay where the transport received them.
    static constexpr size_t kMaxKeptBytes = size_t(32) << 20;

    explicit Dispatcher(size_t reply_cache_entries = 4096) : cache_(reply_cache_entries) {}

    // Registers every version `p` serves; throws std::invalid_argument when one is
    // taken already (two objects claiming one (program, version) is a wiring bug).
    void add(std::shared_ptr<Program> p);
    const ProgramRegistry& registry() const { return programs_; }
    AuthStage& auth() { return auth_; }

    // nullopt: no reply is to be sent (not a call, undecodable, or a retransmission of
    // a call still in progress).
    // `decoded`: what dispatch_nowait decoded of this same message before it left the call
    // to a worker (its `left`), so the call header is not decoded twice.
    // `defer`: the transport can run the same message again later (Outcome::Later): then
    // nullopt with defer->after set, and the transport calls dispatch() again with the
    // same message and `defer` after that long (it may drop the call instead, when its
    // connection is gone). nullptr: never put off. Any flavor: an RPCSEC_GSS call's
    // authentication is kept in `defer` (Deferral::kept) and not checked again.
    std::optional<Reply> dispatch(const Message& msg, const Peer& peer, PayloadAllocator& alloc,
                                  const DecodedCall* decoded = nullptr, Deferral* defer = nullptr);
    // The call on the calling thread, which must neither block nor change identity (an
    // RDMA reactor's, engine/reactor.h), when it can be answered that way: a procedure that
    // honours CallContext::nowait (ProcedureInfo::nowait), idempotent (no duplicate request
    // cache entry to hold), under AUTH_NONE or AUTH_SYS (RPCSEC_GSS's sequence window is
    // state), and that did not answer Outcome::WouldBlock. Then true, `out` as dispatch()'s.
    // false: nothing was done or counted; dispatch() it on a worker, with `left` when set
    // (the call's header as decoded here, for a call declined before its credential was
    // looked at: the procedure is not one to try). `alloc` lends payload memory without a
    // pipe (a nowait READ reads into it).
    bool dispatch_nowait(const Message& msg, const Peer& peer, PayloadAllocator& alloc,
                         std::optional<Reply>& out, std::optional<DecodedCall>* left = nullptr);
    // The transport dropped the connection `peer.conn` named.
    void connection_closed(uint64_t conn) { programs_.connection_closed(conn); }

    struct Counters {
        // Counted on every call by every thread: striped (stripes.h).
        StripedCounter calls, nowait_answered;
        std::atomic<uint64_t> dropped{0}, garbage_args{0}, auth_errors{0}, prog_unavail{0},
            prog_mismatch{0}, proc_unavail{0}, system_errors{0}, cache_replays{0},
            control_calls{0},          // answered by the flavor (RPCSEC_GSS context calls)
            protected_bytes{0},        // results wrapped for integrity or privacy
            inlined_payload_bytes{0},  // out-of-line payload copied inline to be wrapped
            unwrapped_bytes{0},        // arguments checked (krb5i) or decrypted (krb5p)
            // dispatch_nowait: calls answered; calls begun and left to a worker (the
            // procedure answered WouldBlock: its work so far is done again there); and
            // calls the procedure declined before any work (Outcome::declined, or a
            // procedure that is never tried): only the call header was decoded twice.
            nowait_given_up{0}, nowait_declined{0},
            // Outcome::Later: runs put off (a call may be put off several times); calls
            // that would have been put off but found the bound full (answered at once);
            // calls still held up at their last run (answered the wait-and-retry status).
            deferred{0}, defer_full{0}, defer_gave_up{0};
    };
    const Counters& counters() const { return counters_; }
    // Calls put off and waiting to run again now (their Deferral::slot is held).
    uint64_t deferred_now() const { return deferred_now_->load(std::memory_order_relaxed); }
    // Calls put off register here to be run again at once when a program says that what
    // held them up is gone (DeferredWakes::wake_all).
    const std::shared_ptr<DeferredWakes>& deferred_wakes() const { return wakes_; }
    // Bytes of decrypted arguments those calls keep (kMaxKeptBytes).
    uint64_t kept_bytes() const { return kept_bytes_->load(std::memory_order_relaxed); }
    const ReplyCache& reply_cache() const { return cache_; }
    // Calls per export (CallReport::export_slot); the daemon gives exports their slots.
    ExportStats& export_stats() { return export_stats_; }
    const ExportStats& export_stats() const { return export_stats_; }

  private:
    // dispatch() without counting the call; `nowait`: as dispatch_nowait, and set to false
    // when the call must go to a worker (nothing done then).
    std::optional<Reply> route(const Message& msg, const Peer& peer, PayloadAllocator& alloc,
                               bool& nowait, const DecodedCall* decoded = nullptr,
                               std::optional<DecodedCall>* left = nullptr,
                               Deferral* defer = nullptr);
    // `deferred`: set when the call was put off (nullopt then; `defer` says when again).
    std::optional<Reply> run(const Message& msg, const CallHeader& h, std::span<const uint8_t> args,
                             size_t args_offset, Program& prog, const ProcedureInfo& info,
                             OpStats& stats, const OpaqueAuth& verf, PayloadAllocator& alloc,
                             size_t& stat_offset, bool& nowait, Deferral* defer,
                             size_t keep_bytes, bool& deferred);
    // Whether a run with `defer` may still be put off (its runs and its time).
    static bool may_put_off(const Deferral* defer);
    // Puts the call off if the bounds let it (false: it is answered now); `keep_bytes`:
    // decrypted arguments it keeps from now on (kMaxKeptBytes).
    bool put_off(Deferral& defer, size_t keep_bytes);
    std::optional<Reply> protect(Reply r, size_t stat_offset, const AuthFlavor& flavor,
                                 const CallAuth& auth);
    std::optional<Reply> control(const AuthFlavor& flavor, const CallAuth& auth,
                                 const CallHeader& h, std::span<const uint8_t> args);
    static size_t inline_payloads(Reply& r);
    class PlainAllocator final : public PayloadAllocator {
      public:
        explicit PlainAllocator(PayloadAllocator& inner) : inner_(inner) {}
        std::unique_ptr<PayloadBuffer> allocate(size_t bytes) override;

      private:
        PayloadAllocator& inner_;
    };

    ProgramRegistry programs_;
    AuthStage auth_;
    ReplyCache cache_;
    Counters counters_;
    // Shared with every Deferral::slot, which may outlive the dispatcher (a reactor's
    // timer, destroyed at shutdown).
    std::shared_ptr<std::atomic<uint64_t>> deferred_now_ =
        std::make_shared<std::atomic<uint64_t>>(0);
    // Decrypted arguments kept by calls put off (KeptAuth, which gives them back).
    std::shared_ptr<std::atomic<uint64_t>> kept_bytes_ =
        std::make_shared<std::atomic<uint64_t>>(0);
    ExportStats export_stats_;
    std::shared_ptr<DeferredWakes> wakes_ = std::make_shared<DeferredWakes>();
};

}  // namespace nfsrdmad::rpc
