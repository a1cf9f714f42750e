// mech.h — the GSS-API calls RPCSEC_GSS needs (RFC 2743, RFC 2744), through MIT
// libgssapi_krb5, as objects that own what the library hands out. The Kerberos V5
// mechanism (RFC 4121) does the cryptography; nothing here touches a key.
//
// Not thread-safe per object: a context's MIC and wrap calls move its own sequence
// numbers, so its owner (contexts.h) serializes them.
#pragma once

#include <gssapi/gssapi.h>

#include <cstdint>
#include <memory>
#include <span>
#include <string>
#include <vector>

namespace nfsrdmad::rpc::gss {

struct Status {
    uint32_t major = GSS_S_COMPLETE;
    uint32_t minor = 0;
    // No routine or calling error. Supplementary bits (GSS_S_DUPLICATE_TOKEN,
    // GSS_S_UNSEQ_TOKEN, ...) are not failures here: RPCSEC_GSS keeps its own window.
    bool ok() const { return !GSS_ERROR(major); }
    std::string text() const;  // gss_display_status of both codes
};

// The acceptor's credential: the service keys of a keytab (any principal in it, so
// nfs/<host> under whichever host name the client used), for the Kerberos V5 mechanism
// only (no SPNEGO: every context is krb5, as the pseudo-flavors say).
class AcceptorCred {
  public:
    // keytab "" = the library's default (KRB5_KTNAME, else /etc/krb5.keytab).
    static std::shared_ptr<AcceptorCred> acquire(const std::string& keytab, Status& st);
    ~AcceptorCred();
    AcceptorCred(const AcceptorCred&) = delete;
    AcceptorCred& operator=(const AcceptorCred&) = delete;
    gss_cred_id_t get() const { return cred_; }

  private:
    AcceptorCred() = default;
    gss_cred_id_t cred_ = GSS_C_NO_CREDENTIAL;
};

class SecContext {
  public:
    SecContext() = default;
    ~SecContext();
    SecContext(const SecContext&) = delete;
    SecContext& operator=(const SecContext&) = delete;

    // One gss_accept_sec_context step with the client's token; `out` is the token to
    // send back (possibly empty). GSS_S_CONTINUE_NEEDED: another step follows.
    Status accept(const AcceptorCred& cred, std::span<const uint8_t> token,
                  std::vector<uint8_t>& out);
    bool complete() const { return complete_; }
    // After completion: the initiator's principal ("alice@REALM"), the local user name
    // the library maps it to (krb5 auth_to_local; "" if none), and how many seconds
    // the context is good for.
    std::string principal() const;
    std::string local_name() const;
    uint32_t lifetime() const { return lifetime_; }
    // Whether the mechanism negotiated is Kerberos V5 (RFC 4121).
    bool krb5() const;

    Status verify_mic(std::span<const uint8_t> msg, std::span<const uint8_t> mic) const;
    Status get_mic(std::span<const uint8_t> msg, std::vector<uint8_t>& mic) const;
    // Privacy (confidentiality on): wrap; unwrap refuses a token without it.
    Status wrap(std::span<const uint8_t> msg, std::vector<uint8_t>& out) const;
    Status unwrap(std::span<const uint8_t> msg, std::vector<uint8_t>& out) const;

  private:
    gss_ctx_id_t ctx_ = GSS_C_NO_CONTEXT;
    gss_name_t initiator_ = GSS_C_NO_NAME;
    gss_OID mech_ = GSS_C_NO_OID;
    bool complete_ = false;
    uint32_t lifetime_ = 0;
};

}  // namespace nfsrdmad::rpc::gss
