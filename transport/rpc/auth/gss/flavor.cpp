// RPCSEC_GSS version 1 (RFC 2203 §5): the flavor. gss.h says what it answers when.
#include <spdlog/spdlog.h>

#include <algorithm>
#include <array>
#include <atomic>
#include <cstring>

#include "transport/rpc/auth/gss/contexts.h"
#include "transport/rpc/auth/gss/gss.h"
#include "transport/rpc/auth/gss/host_keys.h"
#include "transport/rpc/auth/gss/identity.h"
#include "xdr/rpc_prot.h"
#include "xdr/rpcsec_gss_prot.h"

namespace nfsrdmad::rpc {
namespace {

namespace x = xdr::rpc;
namespace g = xdr::rpcsec_gss;
using gss::Clock;
using gss::Context;

// How long a context that is not yet complete (CONTINUE_INIT to come) is kept.
constexpr std::chrono::seconds kIncompleteLife{60};

// One call's RPCSEC_GSS state, from accept() to the reply (CallAuth::context).
struct GssCall {
    std::shared_ptr<Context> ctx;  // null for an INIT
    g::rpc_gss_proc_t proc = g::RPCSEC_GSS_DATA;
    g::rpc_gss_service_t service = g::rpc_gss_svc_none;
    uint32_t seq = 0;
    std::vector<uint8_t> handle;
    OpaqueAuth verf;  // DATA, DESTROY: the reply's, made while the call is checked
};

std::array<uint8_t, 4> be32(uint32_t v) {
    return {uint8_t(v >> 24), uint8_t(v >> 16), uint8_t(v >> 8), uint8_t(v)};
}

uint32_t pseudo_flavor(g::rpc_gss_service_t s) {
    switch (s) {
        case g::rpc_gss_svc_integrity:
            return kAuthGssKrb5i;
        case g::rpc_gss_svc_privacy:
            return kAuthGssKrb5p;
        default:
            return kAuthGssKrb5;
    }
}

class RpcsecGss final : public AuthFlavor {
  public:
    RpcsecGss(const GssOptions& o, std::shared_ptr<gss::AcceptorCred> cred, std::string realm)
        : options_(o),
          realm_(std::move(realm)),
          cred_(std::move(cred)),
          // One principal may hold a sixteenth of the table (4096 by default): a user
          // working from hundreds of clients has a context on each (each client's gssd
          // builds its own), which a bound of 256 made push out each other's, every call
          // then meeting CREDPROBLEM and building another.
          table_({o.max_contexts, std::max<size_t>(256, o.max_contexts / 16), 1024}) {}

    uint32_t number() const override { return x::RPCSEC_GSS; }

    Result accept(const RawAuth& raw, CallAuth& out) const override {
        // The version, then the control procedure, before the rest (as the Linux server's
        // svcauth_gss_accept reads them): a gss_proc this server does not know is
        // AUTH_REJECTEDCRED in a call to the NULL procedure, AUTH_BADCRED in any other;
        // control calls go to the NULL procedure only (§5.2.2, §5.4: AUTH_BADCRED), which
        // is checked before their handle is looked up.
        {
            xdr::Decoder head(raw.cred);
            const uint32_t version = head.get_u32(), gss_proc = head.get_u32();
            if (!head.ok() || version != g::RPCSEC_GSS_VERS_1)
                return {Verdict::Reject, x::AUTH_BADCRED};
            if (gss_proc > static_cast<uint32_t>(g::RPCSEC_GSS_DESTROY))
                return {Verdict::Reject, static_cast<uint32_t>(raw.proc == 0 ? x::AUTH_REJECTEDCRED
                                                                             : x::AUTH_BADCRED)};
            if (gss_proc != static_cast<uint32_t>(g::RPCSEC_GSS_DATA) && raw.proc != 0)
                return {Verdict::Reject, x::AUTH_BADCRED};
        }
        xdr::Decoder d(raw.cred);
        g::rpc_gss_cred_t cred;
        if (!g::xdr_decode(d, cred) || d.remaining() != 0 || cred.version() != g::RPCSEC_GSS_VERS_1)
            return {Verdict::Reject, x::AUTH_BADCRED};
        const g::rpc_gss_cred_vers_1_t& c = cred.vers_1();
        auto call = std::make_shared<GssCall>();
        call->proc = c.gss_proc;
        call->service = c.service;
        call->seq = c.seq_num;
        call->handle.assign(c.handle.begin(), c.handle.end());
        out.cred.flavor = x::RPCSEC_GSS;
        out.context = call;
        if (c.gss_proc == g::RPCSEC_GSS_INIT || c.gss_proc == g::RPCSEC_GSS_CONTINUE_INIT) {
            // §5.2.2: the verifier of a creation call is AUTH_NONE, empty (the Linux server
            // checks both), and an INIT names no context yet: its handle is empty.
            if (raw.verf_flavor != x::AUTH_NONE || !raw.verf.empty())
                return {Verdict::Reject, x::AUTH_BADVERF};
            if (c.gss_proc == g::RPCSEC_GSS_INIT && !c.handle.empty())
                return {Verdict::Reject, x::AUTH_BADCRED};
            if (c.gss_proc == g::RPCSEC_GSS_CONTINUE_INIT) {
                // Only a context still being built: a complete one is never handed to
                // gss_accept_sec_context again (nor lost when that fails).
                call->ctx = table_.find(c.handle);
                if (!call->ctx || call->ctx->ready.load(std::memory_order_acquire))
                    return {Verdict::Reject, x::RPCSEC_GSS_CREDPROBLEM};
            }
            return {Verdict::Control, 0};
        }
        // DATA and DESTROY (§5.3.3.1): the context, the header's MIC, the sequence number.
        call->ctx = table_.find(c.handle);
        if (!call->ctx || !call->ctx->ready.load(std::memory_order_acquire))
            return {Verdict::Reject, x::RPCSEC_GSS_CREDPROBLEM};
        if (raw.verf_flavor != x::RPCSEC_GSS) return {Verdict::Reject, x::AUTH_BADVERF};
        Context& ctx = *call->ctx;
        {
            std::lock_guard l(ctx.mu);
            if (!ctx.sec.verify_mic(raw.header, raw.verf).ok())
                return {Verdict::Reject, x::RPCSEC_GSS_CREDPROBLEM};
            // §5.3.3.1: past MAXSEQ the client must make a new context. This call is refused;
            // the context stays (as the Linux server keeps it): only its owner, whose MIC
            // just verified, can get here, and its calls within the window still stand.
            if (c.seq_num > g::MAXSEQ) return {Verdict::Reject, x::RPCSEC_GSS_CTXPROBLEM};
            if (ctx.window.accept(c.seq_num) != gss::SeqWindow::Verdict::New)
                return {Verdict::Drop, 0};  // a replay, or older than the window
            // The reply's verifier, the MIC of the sequence number: made now, so that a
            // context that can no longer make one is refused, not answered unverifiably.
            // A context that cannot make one is a context problem (the Linux server's
            // rpcsec_gsserr_ctxproblem there), not the credential's.
            std::vector<uint8_t> mic;
            if (!ctx.sec.get_mic(be32(c.seq_num), mic).ok())
                return {Verdict::Reject, x::RPCSEC_GSS_CTXPROBLEM};
            call->verf = OpaqueAuth{x::RPCSEC_GSS, std::move(mic)};
        }
        if (c.gss_proc == g::RPCSEC_GSS_DESTROY) return {Verdict::Control, 0};
        out.cred.flavor = pseudo_flavor(c.service);
        if (ctx.identity) {
            out.cred.sys = *ctx.identity;
        } else {  // the export's anonymous id applies (Credential::anonymous)
            out.cred.sys.uid = options_.anon_uid;
            out.cred.sys.gid = options_.anon_gid;
            out.cred.anonymous = true;
        }
        out.cred.principal = ctx.principal;
        return {};
    }

    // A DATA call put off and run again: its context must still be in the table (not
    // destroyed, not expired), as a new call on it would have to be (accept()); else the
    // client is told to make another (CREDPROBLEM), as it would be for a new call.
    Result still_stands(const CallAuth& a) const override {
        const GssCall& call = *static_cast<const GssCall*>(a.context.get());
        if (!call.ctx || table_.find(call.handle) != call.ctx)
            return {Verdict::Reject, x::RPCSEC_GSS_CREDPROBLEM};
        return {};
    }

    OpaqueAuth reply_verifier(const CallAuth& a) const override {
        return static_cast<const GssCall*>(a.context.get())->verf;
    }

    bool protects(const CallAuth& a) const override {
        return static_cast<const GssCall*>(a.context.get())->service != g::rpc_gss_svc_none;
    }

    bool unwrap_arguments(const CallAuth& a, std::span<const uint8_t> in,
                          std::vector<uint8_t>& storage,
                          std::span<const uint8_t>& out) const override {
        const GssCall& call = *static_cast<const GssCall*>(a.context.get());
        Context& ctx = *call.ctx;
        std::span<const uint8_t> body;
        xdr::Decoder d(in);
        switch (call.service) {
            case g::rpc_gss_svc_none:
                out = in;
                return true;
            case g::rpc_gss_svc_integrity: {  // §5.3.2.2
                g::rpc_gss_integ_data integ;
                if (!g::xdr_decode(d, integ)) return false;
                // An XDR rpc_gss_data_t is whole words (the Linux server checks so too).
                if (integ.databody_integ.size() % 4 != 0) return false;
                std::lock_guard l(ctx.mu);
                if (!ctx.sec.verify_mic(integ.databody_integ, integ.checksum).ok()) return false;
                body = integ.databody_integ;  // read in place: no copy
                break;
            }
            case g::rpc_gss_svc_privacy: {  // §5.3.2.3
                g::rpc_gss_priv_data priv;
                if (!g::xdr_decode(d, priv)) return false;
                std::lock_guard l(ctx.mu);
                if (!ctx.sec.unwrap(priv.databody_priv, storage).ok()) return false;
                body = storage;
                break;
            }
        }
        // rpc_gss_data_t: the credential's sequence number, then the arguments.
        if (body.size() < 4 || std::memcmp(body.data(), be32(call.seq).data(), 4) != 0)
            return false;
        out = body.subspan(4);
        return true;
    }

    bool wrap_results(const CallAuth& a, std::vector<uint8_t>& reply,
                      size_t results_offset) const override {
        const GssCall& call = *static_cast<const GssCall*>(a.context.get());
        if (call.service == g::rpc_gss_svc_none) return true;
        Context& ctx = *call.ctx;
        // rpc_gss_data_t of the reply: the sequence number, then the results.
        std::vector<uint8_t> body;
        body.reserve(4 + reply.size() - results_offset);
        const auto seq = be32(call.seq);
        body.insert(body.end(), seq.begin(), seq.end());
        body.insert(body.end(), reply.begin() + static_cast<ptrdiff_t>(results_offset),
                    reply.end());
        reply.resize(results_offset);
        xdr::Encoder e(reply);
        std::lock_guard l(ctx.mu);
        if (call.service == g::rpc_gss_svc_integrity) {
            std::vector<uint8_t> mic;
            if (!ctx.sec.get_mic(body, mic).ok()) return false;
            g::xdr_encode(e, g::rpc_gss_integ_data{body, mic});
        } else {
            std::vector<uint8_t> wrapped;
            if (!ctx.sec.wrap(body, wrapped).ok()) return false;
            g::xdr_encode(e, g::rpc_gss_priv_data{wrapped});
        }
        return true;
    }

    ControlReply control(const CallAuth& a, uint32_t proc,
                         std::span<const uint8_t> args) const override {
        const GssCall& call = *static_cast<const GssCall*>(a.context.get());
        ControlReply r;
        // §5.2.2, §5.4: creation and destruction calls go to the NULL procedure.
        if (proc != 0) {
            r.verdict = {Verdict::Reject, x::AUTH_BADCRED};
            return r;
        }
        if (call.proc == g::RPCSEC_GSS_DESTROY) {  // verified like DATA (accept())
            r.verf = call.verf;
            table_.erase(call.handle);
            return r;
        }
        xdr::Decoder d(args);
        g::rpc_gss_init_arg arg;
        if (!g::xdr_decode(d, arg)) {
            r.garbage = true;
            return r;
        }
        std::shared_ptr<Context> ctx = call.ctx;
        if (!ctx) ctx = std::make_shared<Context>(options_.seq_window);
        std::vector<uint8_t> token;
        gss::Status st;
        {
            std::lock_guard l(ctx->mu);
            st = ctx->sec.accept(*cred_, arg.gss_token, token);
        }
        g::rpc_gss_init_res res;
        res.gss_major = st.major;
        res.gss_minor = st.minor;
        res.gss_token = token;
        std::vector<uint8_t> handle = call.handle;
        std::vector<uint8_t> mic;
        if (st.major == GSS_S_COMPLETE) {
            std::lock_guard l(ctx->mu);
            if (!ctx->sec.krb5()) {
                st.major = res.gss_major = GSS_S_BAD_MECH;
            } else if (!ctx->sec.get_mic(be32(options_.seq_window), mic).ok()) {
                st.major = res.gss_major = GSS_S_FAILURE;
            } else {
                ctx->principal = ctx->sec.principal();
                ctx->identity = gss::identity_for(ctx->principal, ctx->sec.local_name(), realm_);
            }
        }
        if (st.major == GSS_S_COMPLETE) {
            ctx->ready.store(true, std::memory_order_release);
            const auto expires = Clock::now() + std::chrono::seconds(ctx->sec.lifetime());
            if (!call.ctx)
                handle = table_.insert(ctx, expires, ctx->principal, true);
            else if (!table_.complete(handle, expires, ctx->principal))
                handle = table_.insert(ctx, expires, ctx->principal, true);  // it went meanwhile
            res.handle = handle;
            res.seq_window = options_.seq_window;
            // §5.2.3.1: the verifier is the MIC of the window.
            r.verf = OpaqueAuth{x::RPCSEC_GSS, std::move(mic)};
            spdlog::debug("rpcsec_gss: context for {} ({}), {} s", ctx->principal,
                          ctx->identity ? "uid " + std::to_string(ctx->identity->uid)
                                        : std::string("anonymous"),
                          ctx->sec.lifetime());
        } else if (st.major == GSS_S_CONTINUE_NEEDED) {
            if (!call.ctx) handle = table_.insert(ctx, Clock::now() + kIncompleteLife, {}, false);
            res.handle = handle;
        } else {
            if (call.ctx) table_.erase(call.handle);  // an incomplete one (accept())
            log_failure(st);
        }
        xdr::Encoder e(r.results);
        g::xdr_encode(e, res);
        return r;
    }

  private:
    // Context creation failures (a wrong keytab, a clock skew, a stray client): at most
    // one line per 10 s, since any client can cause them at will.
    void log_failure(const gss::Status& st) const {
        const int64_t now =
            std::chrono::duration_cast<std::chrono::seconds>(Clock::now().time_since_epoch())
                .count();
        int64_t last = last_failure_log_.load();
        if (last != 0 && now - last < 10) {
            ++failures_held_back_;
            return;
        }
        if (!last_failure_log_.compare_exchange_strong(last, now)) {
            ++failures_held_back_;
            return;
        }
        spdlog::info("rpcsec_gss: context creation failed: {} ({} more since the last report)",
                     st.text(), failures_held_back_.exchange(0));
    }

    const GssOptions options_;
    const std::string realm_;  // machine principals of this realm act as root (identity.h)
    mutable std::atomic<int64_t> last_failure_log_{0};
    mutable std::atomic<uint64_t> failures_held_back_{0};
    std::shared_ptr<gss::AcceptorCred> cred_;
    mutable gss::ContextTable table_;
};

}  // namespace

std::unique_ptr<AuthFlavor> make_auth_gss(const GssOptions& options, std::string* why) {
    gss::Status st;
    auto cred = gss::AcceptorCred::acquire(options.keytab, st);
    if (!cred) {
        if (why)
            *why = "no Kerberos service key in " +
                   (options.keytab.empty() ? std::string("the default keytab") : options.keytab) +
                   ": " + st.text();
        return nullptr;
    }
    return std::make_unique<RpcsecGss>(options, std::move(cred), gss::default_realm());
}

}  // namespace nfsrdmad::rpc
