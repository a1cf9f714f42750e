#include "transport/rpc/dispatcher.h"

#include <spdlog/spdlog.h>

#include <algorithm>
#include <chrono>
#include <stdexcept>
#include <string>
#include <utility>

#include "transport/rpc/message.h"
#include "xdr/rpc_prot.h"

namespace nfsrdmad::rpc {

namespace x = xdr::rpc;

namespace {

// Buffers as the transport's allocator gives them, but never a pipe to splice into:
// a procedure then reads file data into memory, where the flavor can wrap it.
class PlainBuffer final : public PayloadBuffer {
  public:
    explicit PlainBuffer(std::unique_ptr<PayloadBuffer> b) : b_(std::move(b)) {}
    uint8_t* data() override { return b_->data(); }
    size_t capacity() const override { return b_->capacity(); }

  private:
    std::unique_ptr<PayloadBuffer> b_;
};

}  // namespace

// What an RPCSEC_GSS call put off keeps of its first run (Deferral::kept): the auth stage
// accepted its sequence number then, so a later run reuses what it found.
struct KeptAuth {
    std::shared_ptr<void> context;  // CallAuth::context: the flavor's state for the call
    Credential cred;
    const AuthFlavor* flavor = nullptr;  // the AuthStage's: flavors are added before calls
    OpaqueAuth verf;
    // The arguments: in `storage` (decrypted, krb5p) or where the message holds them.
    std::vector<uint8_t> storage;
    bool in_storage = false;
    size_t offset = 0, size = 0;
    std::shared_ptr<std::atomic<uint64_t>> counted;  // Dispatcher::kept_bytes_

    KeptAuth() = default;
    KeptAuth(const KeptAuth&) = delete;
    KeptAuth& operator=(const KeptAuth&) = delete;
    ~KeptAuth() {
        if (counted) counted->fetch_sub(storage.size());
    }
    // The arguments in `msg`, the same message as on the first run (empty if it is not).
    std::span<const uint8_t> args(const Message& msg) const {
        std::span<const uint8_t> from = in_storage ? std::span<const uint8_t>(storage) : msg.bytes;
        if (offset > from.size() || size > from.size() - offset) return {};
        return from.subspan(offset, size);
    }
};

std::unique_ptr<PayloadBuffer> Dispatcher::PlainAllocator::allocate(size_t bytes) {
    auto b = inner_.allocate(bytes);
    if (!b) return nullptr;
    return std::make_unique<PlainBuffer>(std::move(b));
}

// The reply's out-of-line segments copied into its inline bytes, where they stand in the
// XDR stream; returns how many bytes were copied.
size_t Dispatcher::inline_payloads(Reply& r) {
    size_t copied = 0;
    for (const auto& seg : r.payloads) copied += seg.data.size();
    std::vector<uint8_t> flat;
    flat.reserve(r.bytes.size() + copied);
    size_t cursor = 0;
    for (const auto& seg : r.payloads) {
        flat.insert(flat.end(), r.bytes.begin() + static_cast<ptrdiff_t>(cursor),
                    r.bytes.begin() + static_cast<ptrdiff_t>(seg.offset));
        flat.insert(flat.end(), seg.data.begin(), seg.data.end());
        cursor = seg.offset;  // the XDR pad is in the inline bytes
    }
    flat.insert(flat.end(), r.bytes.begin() + static_cast<ptrdiff_t>(cursor), r.bytes.end());
    r.bytes = std::move(flat);
    r.payloads.clear();
    return copied;
}

void Dispatcher::add(std::shared_ptr<Program> p) {
    std::string why;
    if (!programs_.add(std::move(p), &why)) throw std::invalid_argument(why);
}

std::optional<Reply> Dispatcher::dispatch(const Message& msg, const Peer& peer,
                                          PayloadAllocator& alloc, const DecodedCall* decoded,
                                          Deferral* defer) {
    if (defer) {
        defer->after = std::chrono::milliseconds(0);
        defer->wakes_seen = wakes_->generation();
    }
    if (!defer || defer->attempt == 0) counters_.calls++;  // a call put off counts once
    bool nowait = false;
    return route(msg, peer, alloc, nowait, decoded, nullptr, defer);
}

bool Dispatcher::dispatch_nowait(const Message& msg, const Peer& peer, PayloadAllocator& alloc,
                                 std::optional<Reply>& out, std::optional<DecodedCall>* left) {
    bool nowait = true;
    auto reply = route(msg, peer, alloc, nowait, nullptr, left);
    if (!nowait) return false;
    counters_.calls++;
    counters_.nowait_answered++;
    out = std::move(reply);
    return true;
}

std::optional<Reply> Dispatcher::route(const Message& msg, const Peer& peer,
                                       PayloadAllocator& alloc, bool& nowait,
                                       const DecodedCall* decoded, std::optional<DecodedCall>* left,
                                       Deferral* defer) {
    // A header decoded by dispatch_nowait is this message's only if it begins where the
    // message does (RawAuth::header starts at the xid); otherwise it is decoded again.
    DecodedCall dc = decoded && decoded->status == DecodedCall::Ok &&
                             decoded->auth.header.data() == msg.bytes.data()
                         ? *decoded
                         : decode_call(msg.bytes);
    // A nowait call goes no further than this unless its flavor keeps no state and its
    // procedure is one to try (most are not: they leave before the credential is decoded).
    std::optional<ProgramRegistry::Lookup> looked_up;  // then not looked up again below
    if (nowait && dc.status == DecodedCall::Ok) {
        bool tried = dc.auth.cred_flavor == x::AUTH_NONE || dc.auth.cred_flavor == x::AUTH_SYS;
        if (tried) {
            const ProgramRegistry::Lookup& found =
                looked_up.emplace(programs_.find(dc.header.prog, dc.header.vers));
            const ProcedureInfo info =
                found.program ? found.program->procedure(dc.header.vers, dc.header.proc)
                              : ProcedureInfo{};
            tried = info.exists && info.nowait && info.idempotent;
        }
        if (!tried) {
            counters_.nowait_declined++;
            nowait = false;
            if (left) *left = std::move(dc);
            return std::nullopt;
        }
    }
    Reply r;
    switch (dc.status) {
        case DecodedCall::NotACall:
        case DecodedCall::Undecodable:
            counters_.dropped++;
            spdlog::debug("rpc: dropping undecodable message from {}", peer.text);
            return std::nullopt;
        case DecodedCall::RpcMismatch:
            encode_rpc_mismatch(r.bytes, dc.header.xid);
            return r;
        case DecodedCall::BadCred:
            counters_.auth_errors++;
            encode_auth_error(r.bytes, dc.header.xid, dc.auth_stat);
            return r;
        case DecodedCall::Ok:
            break;
    }
    CallHeader h;
    h.xid = dc.header.xid;
    h.prog = dc.header.prog;
    h.vers = dc.header.vers;
    h.proc = dc.header.proc;
    h.peer = &peer;

    // RFC 5531 §9: the credential is checked before the program is looked up (as the
    // Linux server's svc_process does), so an unauthenticated caller learns nothing
    // about which programs exist. A call put off under RPCSEC_GSS was checked on its first
    // run, and its sequence number taken then (Deferral::kept).
    CallAuth auth;
    const AuthFlavor* flavor = nullptr;
    OpaqueAuth verf;
    const KeptAuth* kept = defer ? defer->kept.get() : nullptr;
    if (kept) {
        auth.context = kept->context;
        h.cred = kept->cred;
        flavor = kept->flavor;
        verf = kept->verf;
        AuthFlavor::Result still = flavor->still_stands(auth);
        if (still.verdict == AuthFlavor::Verdict::Reject) {
            counters_.auth_errors++;
            encode_auth_error(r.bytes, h.xid, still.auth_stat);
            return r;
        }
        if (still.verdict == AuthFlavor::Verdict::Drop) {
            counters_.dropped++;
            return std::nullopt;
        }
    } else {
        AuthFlavor::Result verdict = auth_.accept(dc.auth, auth, &flavor);
        switch (verdict.verdict) {
            case AuthFlavor::Verdict::Reject:
                counters_.auth_errors++;
                encode_auth_error(r.bytes, h.xid, verdict.auth_stat);
                return r;
            case AuthFlavor::Verdict::Drop:
                counters_.dropped++;
                return std::nullopt;
            case AuthFlavor::Verdict::Control:
                return control(*flavor, auth, h, msg.bytes.subspan(dc.args_offset));
            case AuthFlavor::Verdict::Accept:
                break;
        }
        h.cred = std::move(auth.cred);  // the flavors keep what they need in auth.context
        verf = flavor->reply_verifier(auth);
    }

    ProgramRegistry::Lookup found = looked_up ? *looked_up : programs_.find(h.prog, h.vers);
    if (!found.program) {
        if (found.known) {
            counters_.prog_mismatch++;
            encode_prog_mismatch(r.bytes, h.xid, found.low, found.high, verf);
        } else {
            counters_.prog_unavail++;
            encode_accepted(r.bytes, h.xid, x::PROG_UNAVAIL, verf);
        }
        return r;
    }
    Program& prog = *found.program;
    ProcedureInfo info = prog.procedure(h.vers, h.proc);
    if (!info.exists) {
        counters_.proc_unavail++;
        encode_accepted(r.bytes, h.xid, x::PROC_UNAVAIL, verf);
        return r;
    }
    std::vector<uint8_t> unwrapped;
    std::span<const uint8_t> args;
    if (kept) {
        args = kept->args(msg);
    } else {
        if (!flavor->unwrap_arguments(auth, msg.bytes.subspan(dc.args_offset), unwrapped, args)) {
            counters_.garbage_args++;
            encode_accepted(r.bytes, h.xid, x::GARBAGE_ARGS, verf);
            return r;
        }
        if (flavor->protects(auth)) counters_.unwrapped_bytes += args.size();
    }
    // AUTH_NONE and AUTH_SYS keep nothing between runs: a later run checks the credential
    // again. Other flavors keep what they accepted, and their decrypted arguments.
    const bool keeps = !kept && h.cred.flavor != x::AUTH_NONE && h.cred.flavor != x::AUTH_SYS;
    std::optional<ReplyCache::Key> key;
    if (!info.idempotent) {
        key = ReplyCache::Key{peer.text, h.xid, h.prog, h.vers, h.proc,
                              hash_bytes(args.data(), args.size())};
        std::vector<uint8_t> cached;
        switch (cache_.begin(*key, cached)) {
            case ReplyCache::Lookup::Done: {
                counters_.cache_replays++;
                // A header and verifier of this reply's own, then the cached results.
                encode_accepted(r.bytes, h.xid, x::SUCCESS, verf);
                r.bytes.resize(r.bytes.size() - 4);  // the cached results begin with accept_stat
                size_t stat_offset = r.bytes.size();
                r.bytes.insert(r.bytes.end(), cached.begin(), cached.end());
                return protect(std::move(r), stat_offset, *flavor, auth);
            }
            case ReplyCache::Lookup::InProgress:
                counters_.dropped++;
                return std::nullopt;
            case ReplyCache::Lookup::New:
                break;
        }
    }
    size_t stat_offset = 0;
    // Results the flavor wraps are made in plain memory, none spliced.
    PlainAllocator plain(alloc);
    PayloadAllocator& use = flavor->protects(auth) ? plain : alloc;
    bool deferred = false;
    auto reply = run(msg, h, args, dc.args_offset, prog, info, *found.stats, verf, use, stat_offset,
                     nowait, defer, keeps ? unwrapped.size() : 0, deferred);
    if (deferred && keeps) {
        auto k = std::make_shared<KeptAuth>();
        k->context = auth.context;
        k->cred = h.cred;
        k->flavor = flavor;
        k->verf = std::move(verf);
        k->in_storage = !unwrapped.empty() && args.data() >= unwrapped.data() &&
                        args.data() <= unwrapped.data() + unwrapped.size();
        const uint8_t* base = k->in_storage ? unwrapped.data() : msg.bytes.data();
        k->offset = size_t(args.data() - base);
        k->size = args.size();
        k->storage = std::move(unwrapped);  // moves the buffer `args` points into
        k->counted = kept_bytes_;           // put_off counted storage's size
        defer->kept = std::move(k);
    }
    // A call put off is not in progress meanwhile: a retransmission of it runs (and is put
    // off too, or finds what changed), and its next run begins a cache entry again.
    if (key) {
        // Denied replies (stat_offset npos) and replies with out-of-line payload are not kept.
        if (reply && reply->payloads.empty() && stat_offset != std::string::npos)
            cache_.finish(*key, {reply->bytes.begin() + stat_offset, reply->bytes.end()});
        else
            cache_.abandon(*key);
    }
    if (!reply) return reply;
    return protect(std::move(*reply), stat_offset, *flavor, auth);
}

bool Dispatcher::put_off(Deferral& defer, size_t keep_bytes) {
    const bool placed = !defer.slot;
    if (placed) {
        // The bound (kMaxDeferred): a call put off holds what its transport received it in
        // (an RDMA receive buffer and credit, a TCP record) until it runs again.
        if (deferred_now_->fetch_add(1) >= kMaxDeferred) {
            deferred_now_->fetch_sub(1);
            counters_.defer_full++;
            return false;
        }
        // Given back when the transport lets go of the call: answered, or dropped with
        // its connection. (A non-null pointer: a shared_ptr tests true by the pointer it
        // holds, not by whether it owns anything.)
        defer.slot = std::shared_ptr<void>(deferred_now_.get(),
                                           [n = deferred_now_](void*) { n->fetch_sub(1); });
    }
    // Decrypted arguments are kept in memory, not where the transport received the call:
    // bounded apart (KeptAuth gives them back).
    if (keep_bytes && kept_bytes_->fetch_add(keep_bytes) + keep_bytes > kMaxKeptBytes) {
        kept_bytes_->fetch_sub(keep_bytes);
        if (placed) defer.slot.reset();
        counters_.defer_full++;
        return false;
    }
    counters_.deferred++;
    // A run woken early (deferred_wakes.h) waits out what was left of its interrupted step
    // and uses up no run; every other run takes the next step. None waits past the call's
    // budget.
    const bool woken = std::exchange(defer.woken, false) && defer.attempt > 0;
    const auto now = std::chrono::steady_clock::now();
    using std::chrono::ceil, std::chrono::milliseconds;
    if (woken) {
        defer.after =
            std::clamp(ceil<milliseconds>(defer.due - now), milliseconds(1), kLongestDeferral);
    } else {
        defer.after =
            std::min(kFirstDeferral * (1u << std::min(defer.attempt, 16u)), kLongestDeferral);
        if (defer.attempt == 0)
            defer.until = now + kDeferBudget;
        else
            defer.after =
                std::clamp(ceil<milliseconds>(defer.until - now), milliseconds(1), defer.after);
        defer.due = now + defer.after;
        ++defer.attempt;
    }
    defer.wakeable = !woken;
    return true;
}

bool Dispatcher::may_put_off(const Deferral* defer) {
    // A woken run used up none of the runs (the timer's run of that step is still to come).
    if (!defer || defer->attempt - (defer->woken ? 1 : 0) >= kDeferAttempts) return false;
    // The clock is read only for a call put off before (rare).
    return defer->attempt == 0 || std::chrono::steady_clock::now() < defer->until;
}

std::optional<Reply> Dispatcher::control(const AuthFlavor& flavor, const CallAuth& auth,
                                         const CallHeader& h, std::span<const uint8_t> args) {
    counters_.control_calls++;
    AuthFlavor::ControlReply c = flavor.control(auth, h.proc, args);
    Reply r;
    switch (c.verdict.verdict) {
        case AuthFlavor::Verdict::Reject:
            counters_.auth_errors++;
            encode_auth_error(r.bytes, h.xid, c.verdict.auth_stat);
            return r;
        case AuthFlavor::Verdict::Drop:
            counters_.dropped++;
            return std::nullopt;
        default:
            break;
    }
    if (c.garbage) {
        counters_.garbage_args++;
        encode_accepted(r.bytes, h.xid, x::GARBAGE_ARGS, c.verf);
        return r;
    }
    encode_accepted(r.bytes, h.xid, x::SUCCESS, c.verf);
    r.bytes.insert(r.bytes.end(), c.results.begin(), c.results.end());
    return r;
}

std::optional<Reply> Dispatcher::protect(Reply r, size_t stat_offset, const AuthFlavor& flavor,
                                         const CallAuth& auth) {
    // Only a successful call's results are wrapped (RFC 2203 §5.3.3.2).
    bool success = stat_offset != std::string::npos && r.bytes.size() >= stat_offset + 4 &&
                   r.bytes[stat_offset] == 0 && r.bytes[stat_offset + 1] == 0 &&
                   r.bytes[stat_offset + 2] == 0 && r.bytes[stat_offset + 3] == x::SUCCESS;
    if (!success) return r;
    if (flavor.protects(auth)) {
        // The wrap covers every byte of the results: out-of-line payload comes inline
        // (the one copy of payload integrity and privacy cost, counted apart).
        if (!r.payloads.empty()) counters_.inlined_payload_bytes += inline_payloads(r);
        counters_.protected_bytes += r.bytes.size() - stat_offset - 4;
    }
    if (!flavor.wrap_results(auth, r.bytes, stat_offset + 4)) {
        counters_.system_errors++;
        spdlog::warn("rpc: auth flavor {} could not protect a reply's results", flavor.number());
        return std::nullopt;
    }
    return r;
}

// Runs the call; `stat_offset` is where accept_stat stands in the reply (npos: the reply
// is MSG_DENIED and has none).
std::optional<Reply> Dispatcher::run(const Message& msg, const CallHeader& h,
                                     std::span<const uint8_t> args_bytes, size_t args_offset,
                                     Program& prog, const ProcedureInfo& info, OpStats& stats,
                                     const OpaqueAuth& verf, PayloadAllocator& alloc,
                                     size_t& stat_offset, bool& nowait, Deferral* defer,
                                     size_t keep_bytes, bool& deferred) {
    Reply r;
    encode_accepted(r.bytes, h.xid, x::SUCCESS, verf);
    stat_offset = r.bytes.size() - 4;
    // A read chunk's position counts in the call as received (RFC 8166 §3.4.5); chunks
    // apply only to arguments the flavor left in place.
    bool in_place = args_bytes.data() == msg.bytes.data() + args_offset;
    xdr::Decoder args(args_bytes, args_offset);
    if (in_place) args.set_read_chunks(msg.read_chunks);
    xdr::Encoder res(r.bytes);
    CallContext ctx(h, args, res, alloc, r.payload_owners);
    ctx.nowait = nowait;
    ctx.may_defer = !nowait && may_put_off(defer);
    const bool woken = defer && defer->woken;  // put_off() clears it
    // CallContext::put_off: the procedure asks before it undoes what it began.
    struct Asked {
        Dispatcher* d;
        Deferral* defer;
        size_t keep_bytes;
        bool asked = false, put_off = false;
    } asked{this, defer, keep_bytes};
    if (ctx.may_defer)
        ctx.set_put_off(
            [](void* p) {
                auto& a = *static_cast<Asked*>(p);
                if (!a.asked) a.put_off = a.d->put_off(*a.defer, a.keep_bytes);
                a.asked = true;
                return a.put_off;
            },
            &asked);
    ctx.started = latency::now();
    Outcome out = prog.call(ctx);
    if (asked.put_off && out.kind != Outcome::Later) {
        // The procedure's bug: answered after it was put off. The answer goes, and what
        // put_off() counted is taken back; the transport lets go of the Deferral (and its
        // place under the bound) with the call.
        spdlog::error("rpc: {} answered a call it had put off", info.name);
        defer->after = std::chrono::milliseconds(0);
        if (!woken) --defer->attempt;
        counters_.deferred--;
        if (keep_bytes) kept_bytes_->fetch_sub(keep_bytes);
    }
    if (out.kind == Outcome::Later) {
        // Nothing was done: the call runs again later, and is counted then. Otherwise its
        // wait-and-retry answer is sent (the last run, a full bound, or no transport that
        // can run it again).
        if (asked.asked ? asked.put_off : ctx.may_defer && put_off(*defer, keep_bytes)) {
            deferred = true;
            return std::nullopt;
        }
        if (defer && defer->attempt > 0 && !ctx.may_defer && !nowait) counters_.defer_gave_up++;
        // Tried on a reactor, the call goes to a worker instead, which may put it off.
        out = nowait ? Outcome::would_block() : Outcome::ok();
    }
    if (out.kind == Outcome::WouldBlock) {
        // Nothing was done: the call runs again on a worker, and is counted there. Outside
        // a nowait call this is the procedure's bug; answer it as one.
        if (nowait) {
            if (out.declined)
                counters_.nowait_declined++;
            else
                counters_.nowait_given_up++;
            nowait = false;
            return std::nullopt;
        }
        spdlog::error("rpc: {} answered WouldBlock outside a nowait call", info.name);
        out = Outcome::system_error();
    }
    const latency::Ticks ended = ctx.last_reading > ctx.started ? ctx.last_reading : latency::now();
    const uint64_t ns = latency::elapsed_ns(ctx.started, ended);
    // RFC 8166 §4.5.2: a read chunk that matches no XDR data item of the arguments is a
    // mismatch between chunk offsets and the Payload stream: GARBAGE_ARGS. (Linux svc_rdma
    // splices each chunk into the arguments at its position, so there a misplaced chunk
    // garbles them and the procedure's decoder usually answers GARBAGE_ARGS.) Programs
    // check before acting (nfs/v3 Request::decode); this catches the rest.
    if (out.kind == Outcome::Success && args.unconsumed_chunks() != 0) out = Outcome::garbage();
    switch (out.kind) {
        case Outcome::Success: {
            r.payloads = res.take_externals();
            uint32_t status = 0;
            if (info.status_first && r.bytes.size() >= stat_offset + 8) {
                const uint8_t* p = r.bytes.data() + stat_offset + 4;
                status = uint32_t(p[0]) << 24 | uint32_t(p[1]) << 16 | uint32_t(p[2]) << 8 | p[3];
            }
            stats.record(h.proc, status, ns);
            stats.add_bytes(ctx.report.bytes_read, ctx.report.bytes_written);
            export_stats_.record(ctx.report.export_slot, status != 0, ns, ctx.report.bytes_read,
                                 ctx.report.bytes_written);
            return r;
        }
        case Outcome::Drop:
            export_stats_.record(ctx.report.export_slot, true, ns, 0, 0);
            counters_.dropped++;
            stats.record_failure(h.proc, OpStats::Failure::Dropped, ns);
            return std::nullopt;
        case Outcome::GarbageArgs:
            export_stats_.record(ctx.report.export_slot, true, ns, 0, 0);
            counters_.garbage_args++;
            stats.record_failure(h.proc, OpStats::Failure::GarbageArgs, ns);
            break;
        case Outcome::Later:       // made Success above
        case Outcome::WouldBlock:  // made SystemErr above
        case Outcome::SystemErr:
            export_stats_.record(ctx.report.export_slot, true, ns, 0, 0);
            counters_.system_errors++;
            stats.record_failure(h.proc, OpStats::Failure::SystemErr, ns);
            break;
        case Outcome::AuthError:
            export_stats_.record(ctx.report.export_slot, true, ns, 0, 0);
            counters_.auth_errors++;
            stats.record_failure(h.proc, OpStats::Failure::AuthError, ns);
            break;
    }
    // Replace whatever the handler wrote with the error reply.
    Reply err;
    if (out.kind == Outcome::AuthError) {
        encode_auth_error(err.bytes, h.xid, out.auth_stat);
        stat_offset = std::string::npos;
    } else {
        encode_accepted(err.bytes, h.xid,
                        out.kind == Outcome::GarbageArgs ? x::GARBAGE_ARGS : x::SYSTEM_ERR, verf);
        stat_offset = err.bytes.size() - 4;
    }
    return err;
}

}  // namespace nfsrdmad::rpc
