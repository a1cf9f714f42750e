// AUTH_NONE and AUTH_SYS (RFC 5531 §8.2 and appendix A), and the stage that holds the
// flavors.
#include "transport/rpc/auth/flavor.h"

#include "xdr/rpc_prot.h"

namespace nfsrdmad::rpc {

namespace x = xdr::rpc;

namespace {

class AuthNone final : public AuthFlavor {
  public:
    uint32_t number() const override { return x::AUTH_NONE; }
    // RFC 5531 §8.2: AUTH_NONE's body is empty (the Linux server refuses one that is not,
    // AUTH_BADCRED, and a verifier that is not an empty AUTH_NONE, AUTH_BADVERF).
    Result accept(const RawAuth& raw, CallAuth& out) const override {
        out.cred.flavor = x::AUTH_NONE;
        if (!raw.cred.empty()) return {Verdict::Reject, x::AUTH_BADCRED};
        if (raw.verf_flavor != x::AUTH_NONE || !raw.verf.empty())
            return {Verdict::Reject, x::AUTH_BADVERF};
        return {};
    }
};

class AuthSysFlavor final : public AuthFlavor {
  public:
    uint32_t number() const override { return x::AUTH_SYS; }
    Result accept(const RawAuth& raw, CallAuth& out) const override {
        // The body must hold exactly one authsys_parms (RFC 5531 appendix A): stamp,
        // machinename<255>, uid, gid, gids<16>. Read straight into the credential, not
        // through the generated struct, whose vector of groups was an allocation per call.
        xdr::Decoder d(raw.cred);
        AuthSys& sys = out.cred.sys;
        sys.stamp = d.get_u32();
        const std::string_view machine = d.get_string(255);
        sys.uid = d.get_u32();
        sys.gid = d.get_u32();
        const uint32_t n = d.get_u32();
        if (!d.ok() || n > 16 || n > d.remaining() / 4) return {Verdict::Reject, x::AUTH_BADCRED};
        sys.gids.clear();
        for (uint32_t i = 0; i < n; ++i) sys.gids.push_back(d.get_u32());
        if (!d.ok() || d.remaining() != 0) return {Verdict::Reject, x::AUTH_BADCRED};
        // Its verifier is AUTH_NONE, empty (RFC 5531 appendix A; as the Linux server checks).
        if (raw.verf_flavor != x::AUTH_NONE || !raw.verf.empty())
            return {Verdict::Reject, x::AUTH_BADVERF};
        sys.machinename.assign(machine);
        out.cred.flavor = x::AUTH_SYS;
        return {};
    }
};

}  // namespace

std::unique_ptr<AuthFlavor> make_auth_none() {
    return std::make_unique<AuthNone>();
}
std::unique_ptr<AuthFlavor> make_auth_sys() {
    return std::make_unique<AuthSysFlavor>();
}

AuthStage::AuthStage() {
    add(make_auth_none());
    add(make_auth_sys());
}

void AuthStage::add(std::unique_ptr<AuthFlavor> flavor) {
    uint32_t n = flavor->number();
    flavors_[n] = std::move(flavor);
}

AuthFlavor::Result AuthStage::accept(const RawAuth& raw, CallAuth& out,
                                     const AuthFlavor** flavor) const {
    auto it = flavors_.find(raw.cred_flavor);
    if (it == flavors_.end()) {
        out.cred.flavor = raw.cred_flavor;
        return {AuthFlavor::Verdict::Reject, x::AUTH_BADCRED};
    }
    *flavor = it->second.get();
    return it->second->accept(raw, out);
}

}  // namespace nfsrdmad::rpc
