// gss.h — RPCSEC_GSS version 1 (RFC 2203) with Kerberos V5 (RFC 4121), as a flavor of
// the authentication stage (auth/flavor.h).
//
//   call credential (§5.3.1) ─► INIT / CONTINUE_INIT ─► gss_accept_sec_context ─► handle
//                               DATA ─► context by handle ─► header MIC ─► seq window
//                               DESTROY ─► the same checks, then the context goes
//   arguments (§5.3.2): none as sent; integrity: MIC over seq_num + args; privacy: wrap
//   reply verifier: MIC of the call's seq_num (of seq_window after INIT, §5.2.3.1)
//
// A DATA call's Credential carries the pseudo-flavor of its service (kAuthGssKrb5,
// kAuthGssKrb5i, kAuthGssKrb5p: RFC 2623 §2.2) and the identity its principal maps to
// (identity.h), so that exports allow and squash GSS callers as they do AUTH_SYS ones.
//
// Errors (RFC 2203 §5.3.3.3, as the Linux server answers them): an unknown or expired
// handle, or a header MIC that does not verify: RPCSEC_GSS_CREDPROBLEM (the client then
// builds a new context); a sequence number past MAXSEQ: RPCSEC_GSS_CTXPROBLEM; a replay
// or a number below the window: dropped, no reply; an INIT not to procedure 0, a bad
// version or service: AUTH_BADCRED; a verifier of the wrong flavor: AUTH_BADVERF; a
// CONTINUE_INIT for a context that is complete: RPCSEC_GSS_CREDPROBLEM (the context
// stays). Only Kerberos V5 is accepted (no SPNEGO). Contexts are bounded in all, per
// principal and while incomplete (contexts.h).
#pragma once

#include <cstddef>
#include <cstdint>
#include <memory>
#include <string>

#include "transport/rpc/auth/flavor.h"

namespace nfsrdmad::rpc {

struct GssOptions {
    std::string keytab;           // "" = KRB5_KTNAME, else /etc/krb5.keytab
    size_t max_contexts = 65536;  // server-wide
    uint32_t seq_window = 4096;   // sent to clients in rpc_gss_init_res
    // What Credential::sys holds for a principal without a local user; the export's
    // anonuid/anongid apply in its place (Credential::anonymous).
    uint32_t anon_uid = 65534;
    uint32_t anon_gid = 65534;
};

// Null, with the reason in `why`, when the keytab yields no acceptor credential.
std::unique_ptr<AuthFlavor> make_auth_gss(const GssOptions& options, std::string* why);

}  // namespace nfsrdmad::rpc
