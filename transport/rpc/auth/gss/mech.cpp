#include "transport/rpc/auth/gss/mech.h"

#include <gssapi/gssapi_ext.h>
#include <gssapi/gssapi_krb5.h>

#include <cstring>

namespace nfsrdmad::rpc::gss {
namespace {

gss_buffer_desc in_buffer(std::span<const uint8_t> s) {
    return gss_buffer_desc{s.size(), const_cast<uint8_t*>(s.data())};
}

// Moves a buffer the library allocated into `out` and releases it.
void take(gss_buffer_desc& b, std::vector<uint8_t>& out) {
    const auto* p = static_cast<const uint8_t*>(b.value);
    out.assign(p, p + b.length);
    OM_uint32 minor = 0;
    gss_release_buffer(&minor, &b);
}

std::string display(OM_uint32 code, int type) {
    std::string text;
    OM_uint32 ctx = 0;
    do {
        OM_uint32 minor = 0;
        gss_buffer_desc b{0, nullptr};
        if (gss_display_status(&minor, code, type, GSS_C_NO_OID, &ctx, &b) != GSS_S_COMPLETE) break;
        if (!text.empty()) text += "; ";
        text.append(static_cast<const char*>(b.value), b.length);
        gss_release_buffer(&minor, &b);
    } while (ctx != 0);
    return text;
}

}  // namespace

std::string Status::text() const {
    std::string t = display(major, GSS_C_GSS_CODE);
    if (minor != 0) t += " (" + display(minor, GSS_C_MECH_CODE) + ")";
    return t;
}

std::shared_ptr<AcceptorCred> AcceptorCred::acquire(const std::string& keytab, Status& st) {
    std::shared_ptr<AcceptorCred> c(new AcceptorCred());
    OM_uint32 minor = 0;
    if (!keytab.empty()) {
        // MIT: the keytab this process accepts with, instead of KRB5_KTNAME's.
        st.major = krb5_gss_register_acceptor_identity(keytab.c_str());
        st.minor = 0;
        if (st.major != GSS_S_COMPLETE) return nullptr;
    }
    gss_OID_desc krb5 = *gss_mech_krb5;
    gss_OID_set_desc only_krb5{1, &krb5};
    st.major = gss_acquire_cred(&minor, GSS_C_NO_NAME, GSS_C_INDEFINITE, &only_krb5, GSS_C_ACCEPT,
                                &c->cred_, nullptr, nullptr);
    st.minor = minor;
    if (st.major != GSS_S_COMPLETE) return nullptr;
    return c;
}

AcceptorCred::~AcceptorCred() {
    OM_uint32 minor = 0;
    if (cred_ != GSS_C_NO_CREDENTIAL) gss_release_cred(&minor, &cred_);
}

SecContext::~SecContext() {
    OM_uint32 minor = 0;
    if (ctx_ != GSS_C_NO_CONTEXT) gss_delete_sec_context(&minor, &ctx_, GSS_C_NO_BUFFER);
    if (initiator_ != GSS_C_NO_NAME) gss_release_name(&minor, &initiator_);
}

Status SecContext::accept(const AcceptorCred& cred, std::span<const uint8_t> token,
                          std::vector<uint8_t>& out) {
    Status st;
    gss_buffer_desc in = in_buffer(token);
    gss_buffer_desc reply{0, nullptr};
    if (initiator_ != GSS_C_NO_NAME) gss_release_name(&st.minor, &initiator_);
    OM_uint32 flags = 0, time_rec = 0;
    st.major = gss_accept_sec_context(&st.minor, &ctx_, cred.get(), &in, GSS_C_NO_CHANNEL_BINDINGS,
                                      &initiator_, &mech_, &reply, &flags, &time_rec, nullptr);
    take(reply, out);
    if (st.major == GSS_S_COMPLETE) {
        complete_ = true;
        lifetime_ = time_rec;
    }
    return st;
}

bool SecContext::krb5() const {
    return mech_ != GSS_C_NO_OID && mech_->length == gss_mech_krb5->length &&
           std::memcmp(mech_->elements, gss_mech_krb5->elements, mech_->length) == 0;
}

std::string SecContext::principal() const {
    if (initiator_ == GSS_C_NO_NAME) return {};
    OM_uint32 minor = 0;
    gss_buffer_desc b{0, nullptr};
    if (gss_display_name(&minor, initiator_, &b, nullptr) != GSS_S_COMPLETE) return {};
    std::string s(static_cast<const char*>(b.value), b.length);
    gss_release_buffer(&minor, &b);
    return s;
}

std::string SecContext::local_name() const {
    if (initiator_ == GSS_C_NO_NAME) return {};
    OM_uint32 minor = 0;
    gss_buffer_desc b{0, nullptr};
    if (gss_localname(&minor, initiator_, mech_, &b) != GSS_S_COMPLETE) return {};
    std::string s(static_cast<const char*>(b.value), b.length);
    gss_release_buffer(&minor, &b);
    return s;
}

Status SecContext::verify_mic(std::span<const uint8_t> msg, std::span<const uint8_t> mic) const {
    Status st;
    gss_buffer_desc m = in_buffer(msg), t = in_buffer(mic);
    st.major = gss_verify_mic(&st.minor, ctx_, &m, &t, nullptr);
    return st;
}

Status SecContext::get_mic(std::span<const uint8_t> msg, std::vector<uint8_t>& mic) const {
    Status st;
    gss_buffer_desc m = in_buffer(msg), t{0, nullptr};
    st.major = gss_get_mic(&st.minor, ctx_, GSS_C_QOP_DEFAULT, &m, &t);
    if (st.ok()) take(t, mic);
    return st;
}

Status SecContext::wrap(std::span<const uint8_t> msg, std::vector<uint8_t>& out) const {
    Status st;
    gss_buffer_desc m = in_buffer(msg), t{0, nullptr};
    int conf = 0;
    st.major = gss_wrap(&st.minor, ctx_, 1, GSS_C_QOP_DEFAULT, &m, &conf, &t);
    if (st.ok() && !conf) st.major = GSS_S_FAILURE;  // privacy was asked for
    if (t.value) take(t, out);
    return st;
}

Status SecContext::unwrap(std::span<const uint8_t> msg, std::vector<uint8_t>& out) const {
    Status st;
    gss_buffer_desc m = in_buffer(msg), t{0, nullptr};
    int conf = 0;
    st.major = gss_unwrap(&st.minor, ctx_, &m, &t, &conf, nullptr);
    if (st.ok() && !conf) st.major = GSS_S_BAD_QOP;  // integrity only: not krb5p
    if (t.value) take(t, out);
    return st;
}

}  // namespace nfsrdmad::rpc::gss
