#include "transport/rpc/auth/gss/host_keys.h"

#include <krb5/krb5.h>

#include <netdb.h>
#include <unistd.h>

#include <algorithm>
#include <cctype>
#include <cerrno>

namespace nfsrdmad::rpc::gss {

namespace {

// One krb5 library context for one question.
class Krb5 {
  public:
    Krb5() { ok_ = krb5_init_context(&ctx_) == 0; }
    ~Krb5() {
        if (ok_) krb5_free_context(ctx_);
    }
    Krb5(const Krb5&) = delete;
    Krb5& operator=(const Krb5&) = delete;
    bool ok() const { return ok_; }
    krb5_context get() const { return ctx_; }
    std::string message(krb5_error_code code) const {
        const char* m = krb5_get_error_message(ctx_, code);
        std::string s = m ? m : "error " + std::to_string(code);
        krb5_free_error_message(ctx_, m);
        return s;
    }
    std::string name(krb5_const_principal p, int flags) const {
        char* s = nullptr;
        if (krb5_unparse_name_flags(ctx_, p, flags, &s) != 0) return {};
        std::string out = s;
        krb5_free_unparsed_name(ctx_, s);
        return out;
    }

  private:
    krb5_context ctx_ = nullptr;
    bool ok_ = false;
};

// "nfs/" + gethostname(), and + its canonical name (getaddrinfo, AI_CANONNAME), lower case.
std::vector<std::string> host_service_names() {
    std::vector<std::string> out;
    char host[256] = {};
    if (::gethostname(host, sizeof host - 1) != 0 || !host[0]) return out;
    auto add = [&](std::string h) {
        for (char& c : h) c = static_cast<char>(std::tolower(static_cast<unsigned char>(c)));
        h = "nfs/" + h;
        if (std::find(out.begin(), out.end(), h) == out.end()) out.push_back(std::move(h));
    };
    add(host);
    addrinfo hints{};
    hints.ai_flags = AI_CANONNAME;
    addrinfo* res = nullptr;
    if (::getaddrinfo(host, nullptr, &hints, &res) == 0) {
        if (res && res->ai_canonname) add(res->ai_canonname);
        ::freeaddrinfo(res);
    }
    return out;
}

}  // namespace

std::string default_realm() {
    Krb5 k;
    if (!k.ok()) return {};
    char* realm = nullptr;
    if (krb5_get_default_realm(k.get(), &realm) != 0) return {};
    std::string out = realm;
    krb5_free_default_realm(k.get(), realm);
    return out;
}

KeytabReport inspect_keytab(const std::string& path) {
    KeytabReport r;
    Krb5 k;
    if (!k.ok()) {
        r.error = "the Kerberos library cannot start (krb5.conf?)";
        return r;
    }
    // The names a client may ask for: nfs/<this host> as krb5.conf canonicalizes it, and
    // nfs/ of the host name and of its canonical name (the client's gssd names the server
    // as the mount does), so that either form in the keytab is found.
    std::vector<std::string> accepted = host_service_names();
    krb5_principal want = nullptr;
    if (krb5_sname_to_principal(k.get(), nullptr, "nfs", KRB5_NT_SRV_HST, &want) == 0) {
        r.expected = k.name(want, KRB5_PRINCIPAL_UNPARSE_NO_REALM);
        krb5_free_principal(k.get(), want);
        accepted.push_back(r.expected);
    }
    if (r.expected.empty() && !accepted.empty()) r.expected = accepted.back();
    krb5_keytab kt = nullptr;
    krb5_error_code rc =
        path.empty() ? krb5_kt_default(k.get(), &kt) : krb5_kt_resolve(k.get(), path.c_str(), &kt);
    if (rc != 0) {
        r.error = k.message(rc);
        return r;
    }
    krb5_kt_cursor cursor;
    rc = krb5_kt_start_seq_get(k.get(), kt, &cursor);
    if (rc != 0) {
        r.error = k.message(rc);
        r.permission = rc == EACCES;
        krb5_kt_close(k.get(), kt);
        return r;
    }
    krb5_keytab_entry entry;
    while ((rc = krb5_kt_next_entry(k.get(), kt, &entry, &cursor)) == 0) {
        std::string full = k.name(entry.principal, 0);
        if (!full.empty() &&
            std::find(r.principals.begin(), r.principals.end(), full) == r.principals.end())
            r.principals.push_back(full);
        const std::string bare = k.name(entry.principal, KRB5_PRINCIPAL_UNPARSE_NO_REALM);
        if (std::find(accepted.begin(), accepted.end(), bare) != accepted.end())
            r.has_expected = true;
        krb5_free_keytab_entry_contents(k.get(), &entry);
    }
    krb5_kt_end_seq_get(k.get(), kt, &cursor);
    krb5_kt_close(k.get(), kt);
    if (rc != KRB5_KT_END)
        r.error = "unreadable after " + std::to_string(r.principals.size()) +
                  " principal(s): " + k.message(rc);
    else if (r.principals.empty())
        r.error = "it holds no keys";
    return r;
}

}  // namespace nfsrdmad::rpc::gss
