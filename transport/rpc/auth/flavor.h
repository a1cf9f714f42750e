// The authentication stage (RFC 5531 §8.2, §9): every call's credential and verifier
// pass through the flavor that owns them before any program sees the call.
//
//   decode_call ─► RawAuth ─► AuthFlavor::accept ─► CallAuth (identity, flavor state)
//                                 │ reject: MSG_DENIED / AUTH_ERROR, drop: no reply
//   arguments  ─► unwrap_arguments ─► program ─► results ─► wrap_results
//   reply header ◄─ reply_verifier
//
// AUTH_NONE and AUTH_SYS (RFC 5531 §8.2, appendix A) are flavors here; RPCSEC_GSS
// (RFC 2203, auth/gss/gss.h) plugs in the same way, with integrity and privacy in
// unwrap/wrap, its context calls in control(), and its context table behind
// `CallAuth::context`, without the programs (nfs/) changing: they see only the
// Credential.
#pragma once

#include <cstdint>
#include <map>
#include <memory>
#include <span>
#include <vector>

#include "transport/rpc/call.h"

namespace nfsrdmad::rpc {

// What a call header carried, as raw bytes (RFC 5531 §9 call_body).
struct RawAuth {
    // The header from the xid through the credential: what an RPCSEC_GSS verifier's
    // MIC covers (RFC 2203 §5.3.1).
    std::span<const uint8_t> header;
    uint32_t cred_flavor = 0;
    std::span<const uint8_t> cred;  // opaque_auth body, at most 400 bytes
    uint32_t verf_flavor = 0;
    std::span<const uint8_t> verf;
    uint32_t proc = 0;  // the call's procedure (RPCSEC_GSS control calls go to 0)
};

// An opaque_auth to send (RFC 5531 §8.2): a reply verifier.
struct OpaqueAuth {
    uint32_t flavor = 0;  // AUTH_NONE
    std::vector<uint8_t> body;
};

// One accepted call's authentication, kept until its reply is built.
struct CallAuth {
    Credential cred;                // what the programs see
    std::shared_ptr<void> context;  // the flavor's own state for this call; none for sys
};

class AuthFlavor {
  public:
    // Control: the call is the flavor's own (RPCSEC_GSS INIT, CONTINUE_INIT, DESTROY:
    // RFC 2203 §5.2, §5.4), answered by control() instead of a program.
    enum class Verdict { Accept, Reject, Drop, Control };
    struct Result {
        Verdict verdict = Verdict::Accept;
        uint32_t auth_stat = 0;  // for Reject (RFC 5531 §9 auth_stat)
    };
    struct ControlReply {
        Result verdict;        // Accept: a SUCCESS reply with `verf` and `results`
        bool garbage = false;  // the arguments do not decode: GARBAGE_ARGS
        OpaqueAuth verf;
        std::vector<uint8_t> results;
    };

    virtual ~AuthFlavor() = default;
    virtual uint32_t number() const = 0;
    // Checks the credential and verifier; on Accept fills `out`.
    virtual Result accept(const RawAuth& raw, CallAuth& out) const = 0;
    // A call accepted earlier and run again (put off: Deferral::kept, dispatcher.h): whether
    // what it was accepted under still stands (RPCSEC_GSS: the context was neither destroyed
    // nor expired meanwhile). Reject answers the call with that auth_stat, Drop drops it.
    virtual Result still_stands(const CallAuth&) const { return {}; }
    // The verifier of an accepted reply. AUTH_NONE unless the flavor says otherwise.
    virtual OpaqueAuth reply_verifier(const CallAuth&) const { return {}; }
    // The arguments as the program decodes them. A flavor that protects them (RPCSEC_GSS
    // integrity or privacy, RFC 2203 §5.3.2) checks and unwraps into `storage` and points
    // `out` there; false answers GARBAGE_ARGS. By default the arguments are as received.
    virtual bool unwrap_arguments(const CallAuth&, std::span<const uint8_t> in,
                                  std::vector<uint8_t>& /*storage*/,
                                  std::span<const uint8_t>& out) const {
        out = in;
        return true;
    }
    // Protects a successful call's results in place: reply[results_offset, end) holds
    // them (after accept_stat). By default they go as they are.
    virtual bool wrap_results(const CallAuth&, std::vector<uint8_t>& /*reply*/,
                              size_t /*results_offset*/) const {
        return true;
    }
    // Whether wrap_results() must see every byte of the results: then no payload is
    // spliced or placed out of line (RFC 8166 §8.2.2: nothing is DDP-eligible under
    // integrity or privacy), and the dispatcher copies out-of-line payload inline first.
    virtual bool protects(const CallAuth&) const { return false; }
    // A Control call to procedure `proc` with these arguments.
    virtual ControlReply control(const CallAuth&, uint32_t /*proc*/,
                                 std::span<const uint8_t> /*args*/) const {
        return {{Verdict::Reject, 1 /* AUTH_BADCRED */}, false, {}, {}};
    }
};

// The flavors this server accepts, by number.
class AuthStage {
  public:
    AuthStage();  // AUTH_NONE and AUTH_SYS
    // Replaces any flavor with the same number.
    void add(std::unique_ptr<AuthFlavor> flavor);
    // An unknown flavor is rejected with AUTH_BADCRED, as the Linux server does (RFC 5531
    // §9 leaves the choice between AUTH_BADCRED and AUTH_REJECTEDCRED open).
    AuthFlavor::Result accept(const RawAuth& raw, CallAuth& out, const AuthFlavor** flavor) const;

  private:
    std::map<uint32_t, std::unique_ptr<AuthFlavor>> flavors_;
};

std::unique_ptr<AuthFlavor> make_auth_none();
std::unique_ptr<AuthFlavor> make_auth_sys();

}  // namespace nfsrdmad::rpc
