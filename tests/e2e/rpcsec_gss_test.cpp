// End-to-end RPCSEC_GSS (RFC 2203) with Kerberos V5 against the real daemon, over TCP.
//
// The test builds a Kerberos realm of its own (MIT krb5-kdc from Debian: kdb5_util,
// kadmin.local, krb5kdc on a free loopback port, in a temporary directory), with the
// service keys nfs/localhost and nfs/<this host> in the daemon's keytab and the keys of
// alice, bob and the machine host/client.test in a client keytab (MIT's initiator takes
// initial tickets from KRB5_CLIENT_KTNAME). The realm's auth_to_local maps alice to the
// local user "daemon" (uid 1 on Debian); bob maps to "bob", whom NSS does not know, so he
// acts as the export's anonymous id; host/client.test is a machine principal (root, then
// the export's root squash). NFSv4.1 COMPOUNDs check SP4_MACH_CRED. Missing Kerberos
// programs fail the test.
//
// A hand-built client (rpc_wire.h plus GSS-API) creates contexts (RPCSEC_GSS_INIT), calls
// NFSv3 NULL, GETATTR and CREATE with the services none (krb5), integrity (krb5i) and
// privacy (krb5p), checks every reply verifier (the MIC of the sequence number, of the
// window after INIT), and sends what a server must refuse: a replayed sequence number
// (no reply), an unknown handle and a broken header MIC (RPCSEC_GSS_CREDPROBLEM), a
// number past MAXSEQ (RPCSEC_GSS_CTXPROBLEM, the context kept), a destroyed context
// (CREDPROBLEM), malformed control calls (AUTH_BADCRED, AUTH_BADVERF, AUTH_REJECTEDCRED),
// and a flavor the export does not list (AUTH_TOOWEAK).
// Before the system RPC headers, whose AUTH_* macros would rename its constants.
#include "xdr/nfs4_prot.h"

#include <gssapi/gssapi.h>
#include <gssapi/gssapi_krb5.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cctype>
#include <cstdlib>
#include <cstring>
#include <fstream>
#include <optional>
#include <string>
#include <vector>

#include <gtest/gtest.h>

#include "tests/e2e/daemon_fixture.h"
#include "tests/e2e/rpc_wire.h"
#include "tests/shared/nfs4_ops.h"

namespace nfsrdmad::e2e {
namespace {

using wire::Bytes;
using wire::XdrIn;
using wire::XdrOut;
namespace x4 = xdr::nfs4;

constexpr uint32_t kRpcsecGss = 6;
constexpr uint32_t kGssData = 0, kGssInit = 1, kGssContinueInit = 2, kGssDestroy = 3;
constexpr uint32_t kSvcNone = 1, kSvcIntegrity = 2, kSvcPrivacy = 3;
constexpr uint32_t kCredProblem = 13, kCtxProblem = 14;
constexpr uint32_t kNfs3Getattr = 1, kNfs3Read = 6, kNfs3Create = 8;
constexpr const char* kRealm = "NFSRDMAD.TEST";

// Runs a shell command; its output goes to `log`. True when it exits 0.
bool Run(const std::string& cmd, const std::string& log) {
    const std::string full = "(" + cmd + ") >>'" + log + "' 2>&1";
    const int rc = std::system(full.c_str());
    return rc != -1 && WIFEXITED(rc) && WEXITSTATUS(rc) == 0;
}

// A Kerberos realm for one test: KDC database, keytabs, a running krb5kdc.
class Realm {
  public:
    ::testing::AssertionResult Start() {
        for (const char* tool :
             {"/usr/sbin/krb5kdc", "/usr/sbin/kdb5_util", "/usr/sbin/kadmin.local"})
            if (::access(tool, X_OK) != 0)
                return ::testing::AssertionFailure()
                       << tool << " is missing: install krb5-kdc and krb5-admin-server "
                       << "(scripts/install-deps.sh does)";
        dir_ = MakeTempDir("krb5");
        log_ = dir_ + "/setup.log";
        const uint16_t port = PickFreePorts(1)[0];
        std::ofstream(dir_ + "/krb5.conf")
            << "[libdefaults]\n default_realm = " << kRealm
            << "\n dns_lookup_kdc = false\n dns_lookup_realm = false\n rdns = false\n"
            << " dns_canonicalize_hostname = false\n udp_preference_limit = 1\n"
            << "[realms]\n " << kRealm << " = {\n  kdc = 127.0.0.1:" << port
            << "\n  auth_to_local = RULE:[1:$1@$0](alice@" << kRealm
            << ")s/.*/daemon/\n  auth_to_local = DEFAULT\n }\n"
            << "[domain_realm]\n localhost = " << kRealm << "\n";
        std::ofstream(dir_ + "/kdc.conf")
            << "[kdcdefaults]\n kdc_ports = " << port << "\n kdc_tcp_ports = " << port << "\n"
            << "[realms]\n " << kRealm << " = {\n  database_name = " << dir_
            << "/principal\n  key_stash_file = " << dir_ << "/stash\n  max_life = 10h\n }\n";
        ::setenv("KRB5_CONFIG", (dir_ + "/krb5.conf").c_str(), 1);
        ::setenv("KRB5_KDC_PROFILE", (dir_ + "/kdc.conf").c_str(), 1);
        ::setenv("KRB5_CLIENT_KTNAME", client_keytab().c_str(), 1);
        // A collection of caches: alice's and bob's tickets side by side.
        ::mkdir((dir_ + "/cc").c_str(), 0700);
        ::setenv("KRB5CCNAME", ("DIR:" + dir_ + "/cc").c_str(), 1);
        const std::string kadmin = "/usr/sbin/kadmin.local -r " + std::string(kRealm) + " -q ";
        const bool ok =
            Run("/usr/sbin/kdb5_util create -s -r " + std::string(kRealm) + " -P master", log_) &&
            Run(kadmin + "'addprinc -randkey nfs/localhost'", log_) &&
            Run(kadmin + "'addprinc -randkey nfs/" + HostName() + "'", log_) &&
            Run(kadmin + "'ktadd -k " + server_keytab() + " nfs/localhost nfs/" + HostName() + "'",
                log_) &&
            Run(kadmin + "'addprinc -randkey alice'", log_) &&
            Run(kadmin + "'addprinc -randkey bob'", log_) &&
            Run(kadmin + "'addprinc -randkey host/client.test'", log_) &&
            Run(kadmin + "'ktadd -k " + client_keytab() + " alice bob host/client.test'", log_);
        if (!ok)
            return ::testing::AssertionFailure() << "realm setup failed:\n" << TailFile(log_, 30);
        kdc_ = ::fork();
        if (kdc_ == 0) {
            const std::string out = dir_ + "/kdc.log";
            FILE* f = std::freopen(out.c_str(), "a", stdout);
            (void)f;
            ::dup2(1, 2);
            ::execl("/usr/sbin/krb5kdc", "krb5kdc", "-n", static_cast<char*>(nullptr));
            ::_exit(127);
        }
        for (int i = 0; i < 100; ++i) {
            if (CanConnect(port)) return ::testing::AssertionSuccess();
            ::usleep(50000);
        }
        return ::testing::AssertionFailure() << "krb5kdc did not listen on " << port << ":\n"
                                             << TailFile(dir_ + "/kdc.log", 20);
    }
    ~Realm() {
        if (kdc_ > 0) {
            ::kill(kdc_, SIGTERM);
            ::waitpid(kdc_, nullptr, 0);
        }
        if (!dir_.empty() && !::getenv("NFSRDMAD_E2E_KEEP"))
            (void)std::system(("rm -rf '" + dir_ + "'").c_str());
    }
    std::string server_keytab() const { return dir_ + "/server.keytab"; }
    // This host's name as krb5_sname_to_principal makes it with dns_canonicalize_hostname
    // off (the realm's krb5.conf): gethostname(), lower case.
    static std::string HostName() {
        char h[256] = {};
        ::gethostname(h, sizeof h - 1);
        std::string s = h;
        for (char& c : s) c = static_cast<char>(std::tolower(static_cast<unsigned char>(c)));
        return s;
    }
    std::string dir() const { return dir_; }
    std::string client_keytab() const { return dir_ + "/client.keytab"; }

  private:
    std::string dir_, log_;
    pid_t kdc_ = -1;
};

std::string GssText(OM_uint32 major, OM_uint32 minor) {
    std::string t;
    for (auto [code, type] :
         {std::pair{major, GSS_C_GSS_CODE}, std::pair{minor, GSS_C_MECH_CODE}}) {
        OM_uint32 ctx = 0, m = 0;
        gss_buffer_desc b{0, nullptr};
        if (gss_display_status(&m, code, type, GSS_C_NO_OID, &ctx, &b) == GSS_S_COMPLETE) {
            t += std::string(static_cast<const char*>(b.value), b.length) + "; ";
            gss_release_buffer(&m, &b);
        }
    }
    return t;
}

Bytes Be32(uint32_t v) {
    return {uint8_t(v >> 24), uint8_t(v >> 16), uint8_t(v >> 8), uint8_t(v)};
}

wire::Reply Broken(std::string why) {
    wire::Reply r;
    r.parse_error = std::move(why);
    return r;
}

// How GssClient::Call builds its call.
struct CallOptions {
    uint32_t gss_proc = kGssData;
    uint32_t service = kSvcNone;
    std::optional<uint32_t> seq;  // default: the next one
    std::optional<Bytes> handle;  // default: the context's
    bool break_mic = false;
    uint32_t version = 3;  // of the NFS program: 4 for COMPOUND (procedure 1)

    static CallOptions Service(uint32_t s) {
        CallOptions o;
        o.service = s;
        return o;
    }
    static CallOptions Seq(uint32_t s) {
        CallOptions o;
        o.seq = s;
        return o;
    }
    static CallOptions Handle(Bytes h) {
        CallOptions o;
        o.handle = std::move(h);
        return o;
    }
    static CallOptions V4(uint32_t s) {
        CallOptions o;
        o.service = s;
        o.version = 4;
        return o;
    }
    static CallOptions BrokenMic() {
        CallOptions o;
        o.break_mic = true;
        return o;
    }
    static CallOptions Destroy() {
        CallOptions o;
        o.gss_proc = kGssDestroy;
        return o;
    }
};

// The client's side of one RPCSEC_GSS context over one TCP connection.
class GssClient {
  public:
    ~GssClient() {
        OM_uint32 m = 0;
        if (ctx_ != GSS_C_NO_CONTEXT) gss_delete_sec_context(&m, &ctx_, GSS_C_NO_BUFFER);
        if (cred_ != GSS_C_NO_CREDENTIAL) gss_release_cred(&m, &cred_);
    }

    // Connects and creates a context as `user` (alice or bob) for nfs@localhost.
    ::testing::AssertionResult Establish(uint16_t port, const std::string& user,
                                         uint32_t init_proc = 0) {
        std::string why;
        conn_ = wire::Conn::Open(port, &why);
        if (!conn_) return ::testing::AssertionFailure() << "connect: " << why;
        OM_uint32 minor = 0;
        gss_name_t me = GSS_C_NO_NAME, target = GSS_C_NO_NAME;
        std::string u = user + "@" + kRealm;
        gss_buffer_desc ub{u.size(), u.data()};
        if (gss_import_name(&minor, &ub, GSS_C_NT_USER_NAME, &me) != GSS_S_COMPLETE)
            return ::testing::AssertionFailure() << "gss_import_name " << u;
        OM_uint32 major = gss_acquire_cred(&minor, me, GSS_C_INDEFINITE, GSS_C_NO_OID_SET,
                                           GSS_C_INITIATE, &cred_, nullptr, nullptr);
        gss_release_name(&minor, &me);
        if (major != GSS_S_COMPLETE)
            return ::testing::AssertionFailure()
                   << "no credential for " << u << ": " << GssText(major, minor);
        std::string svc = "nfs@localhost";
        gss_buffer_desc sb{svc.size(), svc.data()};
        gss_import_name(&minor, &sb, GSS_C_NT_HOSTBASED_SERVICE, &target);
        struct NameGuard {
            gss_name_t& n;
            ~NameGuard() {
                OM_uint32 m = 0;
                if (n != GSS_C_NO_NAME) gss_release_name(&m, &n);
            }
        } release_target{target};
        gss_buffer_desc in{0, nullptr};
        Bytes token_in;
        for (int round = 0; round < 4; ++round) {
            gss_buffer_desc out{0, nullptr};
            major = gss_init_sec_context(&minor, cred_, &ctx_, target, GSS_C_NO_OID,
                                         GSS_C_MUTUAL_FLAG | GSS_C_INTEG_FLAG | GSS_C_CONF_FLAG, 0,
                                         GSS_C_NO_CHANNEL_BINDINGS, &in, nullptr, &out, nullptr,
                                         nullptr);
            if (GSS_ERROR(major)) {
                return ::testing::AssertionFailure()
                       << "gss_init_sec_context: " << GssText(major, minor);
            }
            if (out.length == 0) break;  // complete, nothing more to send
            Bytes tok(static_cast<uint8_t*>(out.value),
                      static_cast<uint8_t*>(out.value) + out.length);
            gss_release_buffer(&minor, &out);
            // RPCSEC_GSS_INIT to the NFS program's NULL procedure (§5.2.2).
            wire::Call c;
            c.xid = next_xid_++;
            c.prog = kNfsProgram;
            c.vers = 3;
            c.proc = init_proc;
            c.cred_flavor = kRpcsecGss;
            c.cred_body = CredBody(kGssInit, 0, kSvcNone, handle_);
            c.args = XdrOut().opaque(tok).take();
            wire::Reply r = Exchange(wire::EncodeCall(c));
            last_ = r;
            if (r.reply_stat != wire::kMsgAccepted || r.accept_stat != wire::kSuccess)
                return ::testing::AssertionFailure() << "INIT: " << r.Describe();
            XdrIn res(r.results);
            uint32_t gmaj = 0, gmin = 0;
            if (!res.opaque(&handle_, 1024) || !res.u32(&gmaj) || !res.u32(&gmin) ||
                !res.u32(&window_) || !res.opaque(&token_in, 65536))
                return ::testing::AssertionFailure() << "rpc_gss_init_res undecodable";
            if (gmaj != GSS_S_COMPLETE && gmaj != GSS_S_CONTINUE_NEEDED)
                return ::testing::AssertionFailure() << "server: " << GssText(gmaj, gmin);
            in = gss_buffer_desc{token_in.size(), token_in.data()};
            init_verf_ = r.verf_body;
            if (gmaj == GSS_S_COMPLETE && token_in.empty()) break;
        }
        if (major != GSS_S_COMPLETE)
            return ::testing::AssertionFailure() << "the client's side is not complete";
        if (handle_.empty()) return ::testing::AssertionFailure() << "no handle";
        // §5.2.3.1: the verifier of the completing reply is the MIC of seq_window.
        if (!VerifyMic(Be32(window_), init_verf_))
            return ::testing::AssertionFailure() << "the INIT reply's verifier does not verify";
        return ::testing::AssertionSuccess();
    }

    // rpc_gss_cred_vers_1_t behind the version word.
    static Bytes CredBody(uint32_t proc, uint32_t seq, uint32_t service, const Bytes& handle) {
        return XdrOut().u32(1).u32(proc).u32(seq).u32(service).opaque(handle).take();
    }

    std::optional<wire::Reply> Call(uint32_t proc, const Bytes& args, CallOptions o = CallOptions(),
                                    int timeout_ms = 5000) {
        const uint32_t seq = o.seq ? *o.seq : next_seq_++;
        last_seq_ = seq;
        last_service_ = o.service;
        XdrOut h;
        const uint32_t xid = next_xid_++;
        h.u32(xid).u32(wire::kCall).u32(2).u32(kNfsProgram).u32(o.version).u32(proc);
        h.u32(kRpcsecGss)
            .opaque(CredBody(o.gss_proc, seq, o.service, o.handle ? *o.handle : handle_));
        Bytes header = h.take();
        Bytes mic = Mic(header);
        if (o.break_mic && !mic.empty()) mic[mic.size() / 2] ^= 0xff;
        XdrOut m;
        m.raw(header).u32(kRpcsecGss).opaque(mic);
        Bytes body = Be32(seq);
        body.insert(body.end(), args.begin(), args.end());
        if (o.gss_proc != kGssData) {
            // DESTROY: void arguments
        } else if (o.service == kSvcNone) {
            m.raw(args);
        } else if (o.service == kSvcIntegrity) {
            m.opaque(body).opaque(Mic(body));
        } else {
            m.opaque(Wrap(body));
        }
        std::string why;
        if (!conn_->SendRecord(m.bytes(), &why)) return Broken(why);
        Bytes rec;
        auto st = conn_->RecvRecord(&rec, timeout_ms, &why);
        if (st == wire::Conn::Recv::kTimeout) return std::nullopt;
        if (st != wire::Conn::Recv::kOk) return Broken("recv: " + why);
        wire::Reply r = wire::ParseReply(rec);
        // A late answer to an earlier call must not pass for this one's.
        if (r.parse_error.empty() && r.xid != xid)
            return Broken("a reply to xid " + std::to_string(r.xid) + ", not " +
                          std::to_string(xid));
        return r;
    }

    // The results of an accepted reply, checked and unwrapped as the last call's service
    // says; its verifier must be the MIC of the last call's sequence number.
    ::testing::AssertionResult Results(const wire::Reply& r, Bytes* out) {
        if (!r.parse_error.empty() || r.reply_stat != wire::kMsgAccepted)
            return ::testing::AssertionFailure() << r.Describe();
        if (r.verf_flavor != kRpcsecGss || !VerifyMic(Be32(last_seq_), r.verf_body))
            return ::testing::AssertionFailure()
                   << "reply verifier is not the MIC of seq " << last_seq_;
        if (r.accept_stat != wire::kSuccess)
            return ::testing::AssertionFailure() << "accept_stat " << r.accept_stat;
        Bytes body;
        XdrIn in(r.results);
        if (last_service_ == kSvcNone) {
            *out = r.results;
            return ::testing::AssertionSuccess();
        }
        if (last_service_ == kSvcIntegrity) {
            Bytes mic;
            if (!in.opaque(&body, 1 << 24) || !in.opaque(&mic, 4096))
                return ::testing::AssertionFailure() << "rpc_gss_integ_data undecodable";
            if (!VerifyMic(body, mic))
                return ::testing::AssertionFailure() << "the results' checksum does not verify";
        } else {
            Bytes wrapped;
            if (!in.opaque(&wrapped, 1 << 24) || !Unwrap(wrapped, &body))
                return ::testing::AssertionFailure() << "rpc_gss_priv_data does not unwrap";
        }
        if (body.size() < 4 || Bytes(body.begin(), body.begin() + 4) != Be32(last_seq_))
            return ::testing::AssertionFailure() << "the results carry another sequence number";
        out->assign(body.begin() + 4, body.end());
        return ::testing::AssertionSuccess();
    }

    // RPCSEC_GSS_CONTINUE_INIT on this context's handle with `token`.
    wire::Reply ContinueInit(const Bytes& token) {
        return Raw(0, kGssContinueInit, handle_, 0, {}, XdrOut().opaque(token).take());
    }

    // A control call (sequence number 0, no MIC) with an RPCSEC_GSS credential made by
    // hand: CONTINUE_INIT, and what a server must refuse before it looks at any context.
    wire::Reply Raw(uint32_t proc, uint32_t gss_proc, const Bytes& handle, uint32_t verf_flavor = 0,
                    const Bytes& verf_body = {}, const Bytes& args = {}) {
        wire::Call c;
        c.xid = next_xid_++;
        c.prog = kNfsProgram;
        c.vers = 3;
        c.proc = proc;
        c.cred_flavor = kRpcsecGss;
        c.cred_body = CredBody(gss_proc, 0, kSvcNone, handle);
        c.verf_flavor = verf_flavor;
        c.verf_body = verf_body;
        c.args = args;
        return Exchange(wire::EncodeCall(c));
    }

    const Bytes& handle() const { return handle_; }
    uint32_t window() const { return window_; }
    uint32_t next_seq() const { return next_seq_; }
    const wire::Reply& last() const { return last_; }

  private:
    wire::Reply Exchange(const Bytes& msg) {
        std::string why;
        if (!conn_->SendRecord(msg, &why)) return Broken(why);
        Bytes rec;
        if (conn_->RecvRecord(&rec, 10000, &why) != wire::Conn::Recv::kOk)
            return Broken("recv: " + why);
        return wire::ParseReply(rec);
    }
    Bytes Mic(const Bytes& msg) {
        OM_uint32 minor = 0;
        gss_buffer_desc in{msg.size(), const_cast<uint8_t*>(msg.data())}, out{0, nullptr};
        if (gss_get_mic(&minor, ctx_, GSS_C_QOP_DEFAULT, &in, &out) != GSS_S_COMPLETE) return {};
        Bytes b(static_cast<uint8_t*>(out.value), static_cast<uint8_t*>(out.value) + out.length);
        gss_release_buffer(&minor, &out);
        return b;
    }
    bool VerifyMic(const Bytes& msg, const Bytes& mic) {
        OM_uint32 minor = 0;
        gss_buffer_desc m{msg.size(), const_cast<uint8_t*>(msg.data())};
        gss_buffer_desc t{mic.size(), const_cast<uint8_t*>(mic.data())};
        return gss_verify_mic(&minor, ctx_, &m, &t, nullptr) == GSS_S_COMPLETE;
    }
    Bytes Wrap(const Bytes& msg) {
        OM_uint32 minor = 0;
        int conf = 0;
        gss_buffer_desc in{msg.size(), const_cast<uint8_t*>(msg.data())}, out{0, nullptr};
        if (gss_wrap(&minor, ctx_, 1, GSS_C_QOP_DEFAULT, &in, &conf, &out) != GSS_S_COMPLETE)
            return {};
        Bytes b(static_cast<uint8_t*>(out.value), static_cast<uint8_t*>(out.value) + out.length);
        gss_release_buffer(&minor, &out);
        return b;
    }
    bool Unwrap(const Bytes& msg, Bytes* body) {
        OM_uint32 minor = 0;
        int conf = 0;
        gss_buffer_desc in{msg.size(), const_cast<uint8_t*>(msg.data())}, out{0, nullptr};
        if (gss_unwrap(&minor, ctx_, &in, &out, &conf, nullptr) != GSS_S_COMPLETE || !conf)
            return false;
        body->assign(static_cast<uint8_t*>(out.value),
                     static_cast<uint8_t*>(out.value) + out.length);
        gss_release_buffer(&minor, &out);
        return true;
    }

    std::unique_ptr<wire::Conn> conn_;
    gss_cred_id_t cred_ = GSS_C_NO_CREDENTIAL;
    gss_ctx_id_t ctx_ = GSS_C_NO_CONTEXT;
    Bytes handle_, init_verf_;
    uint32_t window_ = 0;
    uint32_t next_xid_ = 0x4a550000;
    uint32_t next_seq_ = 1;
    uint32_t last_seq_ = 0, last_service_ = kSvcNone;
    wire::Reply last_;
};

// GETATTR3args / CREATE3args (UNCHECKED, mode 0644) on a handle.
Bytes GetattrArgs(const Fh& fh) {
    return XdrOut().opaque(fh.data.data(), fh.size()).take();
}
Bytes CreateArgs(const Fh& dir, const std::string& name) {
    XdrOut a;
    a.opaque(dir.data.data(), dir.size()).str(name).u32(0 /* UNCHECKED */);
    a.u32(1).u32(0644).u32(0).u32(0).u32(0).u32(0).u32(0);  // sattr3: the mode only
    return a.take();
}

class RpcsecGss : public DaemonTest {
  protected:
    void SetUp() override {
        ASSERT_TRUE(realm_.Start());
        DaemonTest::SetUp();
        if (HasFatalFailure()) return;
        ASSERT_EQ(::chmod(daemon_->export_dir().c_str(), 0777), 0);
        ASSERT_EQ(::chmod(daemon_->extra_export_dir("squashed").c_str(), 0777), 0);
        ASSERT_EQ(::chmod(daemon_->extra_export_dir("private").c_str(), 0777), 0);
    }
    DaemonOptions Options() override {
        DaemonOptions o;
        o.export_options = "rw,no_root_squash,insecure,sec=krb5:krb5i:krb5p:sys";
        o.extra_exports.push_back({"private", "rw,insecure,sec=krb5p"});
        o.extra_exports.push_back({"squashed", "rw,insecure,anonuid=4242,anongid=4243,sec=krb5"});
        o.config_yaml = "kerberos: {keytab: " + realm_.server_keytab() + "}\n";
        return o;
    }
    // NFSv3 status of a GETATTR's or CREATE's results.
    static uint32_t Nfs3Status(const Bytes& results) {
        uint32_t st = 0xffffffff;
        XdrIn(results).u32(&st);
        return st;
    }

    Realm realm_;
};

TEST_F(RpcsecGss, ContextCreationAndNullWithTheMicOfTheWindowAndOfTheSequence) {
    GssClient c;
    ASSERT_TRUE(c.Establish(daemon_->nfs_port(), "alice"));
    EXPECT_EQ(c.handle().size(), 16u);
    EXPECT_EQ(c.window(), 4096u) << "a large window (krb5p over RDMA)";
    auto r = c.Call(0, {});
    ASSERT_TRUE(r.has_value()) << "no reply to NULL";
    Bytes res;
    ASSERT_TRUE(c.Results(*r, &res));
    EXPECT_TRUE(res.empty());
}

TEST_F(RpcsecGss, GetattrUnderKrb5Krb5iAndKrb5p) {
    GssClient c;
    ASSERT_TRUE(c.Establish(daemon_->nfs_port(), "alice"));
    for (uint32_t svc : {kSvcNone, kSvcIntegrity, kSvcPrivacy}) {
        SCOPED_TRACE("service " + std::to_string(svc));
        auto r = c.Call(kNfs3Getattr, GetattrArgs(root_), CallOptions::Service(svc));
        ASSERT_TRUE(r.has_value());
        Bytes res;
        ASSERT_TRUE(c.Results(*r, &res));
        XdrIn in(res);
        uint32_t status = 1, type = 0;
        ASSERT_TRUE(in.u32(&status) && in.u32(&type));
        EXPECT_EQ(status, 0u);
        EXPECT_EQ(type, 2u) << "NF3DIR";
    }
    // The export that lists krb5p only refuses the weaker services (RFC 2623 §2.3).
    Fh priv;
    ASSERT_NO_FATAL_FAILURE(FetchRootHandle(&priv, daemon_->extra_export_dir("private")));
    auto weak = c.Call(kNfs3Getattr, GetattrArgs(priv), CallOptions::Service(kSvcIntegrity));
    ASSERT_TRUE(weak.has_value());
    EXPECT_EQ(weak->reply_stat, wire::kMsgDenied);
    EXPECT_EQ(weak->auth_stat, wire::kAuthTooweak);
    auto strong = c.Call(kNfs3Getattr, GetattrArgs(priv), CallOptions::Service(kSvcPrivacy));
    ASSERT_TRUE(strong.has_value());
    Bytes res;
    ASSERT_TRUE(c.Results(*strong, &res));
    EXPECT_EQ(Nfs3Status(res), 0u);
}

TEST_F(RpcsecGss, PrincipalsActAsTheirLocalUserOrAsNobody) {
    GssClient alice, bob;
    ASSERT_TRUE(alice.Establish(daemon_->nfs_port(), "alice"));
    ASSERT_TRUE(bob.Establish(daemon_->nfs_port(), "bob"));
    auto a =
        alice.Call(kNfs3Create, CreateArgs(root_, "by-alice"), CallOptions::Service(kSvcPrivacy));
    auto b = bob.Call(kNfs3Create, CreateArgs(root_, "by-bob"), CallOptions::Service(kSvcNone));
    ASSERT_TRUE(a.has_value() && b.has_value());
    Bytes ra, rb;
    ASSERT_TRUE(alice.Results(*a, &ra));
    ASSERT_TRUE(bob.Results(*b, &rb));
    EXPECT_EQ(Nfs3Status(ra), 0u);
    EXPECT_EQ(Nfs3Status(rb), 0u);
    struct stat st {};
    ASSERT_EQ(::stat(disk("by-alice").c_str(), &st), 0);
    EXPECT_EQ(st.st_uid, 1u) << "alice@" << kRealm << " maps to the local user daemon";
    ASSERT_EQ(::stat(disk("by-bob").c_str(), &st), 0);
    EXPECT_EQ(st.st_uid, 65534u) << "bob has no local user: the anonymous id";
}

// A machine principal of the realm (the client's root, through its gssd) acts as root,
// which the export's root squash decides on; one with no local user at all acts as the
// export's anonuid and anongid.
TEST_F(RpcsecGss, MachinePrincipalsActAsRootWhereTheExportAllowsRootOthersAsItsAnonId) {
    GssClient host, bob;
    ASSERT_TRUE(host.Establish(daemon_->nfs_port(), "host/client.test"));
    ASSERT_TRUE(bob.Establish(daemon_->nfs_port(), "bob"));
    Fh squashed;
    ASSERT_NO_FATAL_FAILURE(FetchRootHandle(&squashed, daemon_->extra_export_dir("squashed")));
    struct Case {
        GssClient* who;
        const Fh* dir;
        std::string disk_dir, name;
        uint32_t uid, gid;
        const char* why;
    };
    const std::string sq = daemon_->extra_export_dir("squashed");
    const Case cases[] = {
        {&host, &root_, daemon_->export_dir(), "by-host", 0, 0, "no_root_squash: root"},
        {&host, &squashed, sq, "by-host", 4242, 4243, "root_squash: the anonymous id"},
        {&bob, &squashed, sq, "by-bob", 4242, 4243, "no local user: the export's anon id"},
    };
    for (const Case& c : cases) {
        SCOPED_TRACE(c.disk_dir + "/" + c.name + ": " + c.why);
        auto r =
            c.who->Call(kNfs3Create, CreateArgs(*c.dir, c.name), CallOptions::Service(kSvcNone));
        ASSERT_TRUE(r.has_value());
        Bytes res;
        ASSERT_TRUE(c.who->Results(*r, &res));
        ASSERT_EQ(Nfs3Status(res), 0u);
        struct stat st {};
        ASSERT_EQ(::stat((c.disk_dir + "/" + c.name).c_str(), &st), 0);
        EXPECT_EQ(st.st_uid, c.uid);
        EXPECT_EQ(st.st_gid, c.gid);
    }
}

// `nfsrdmad check-config` on the keytab a Kerberos config names: fine with nfs/<this
// host>, a warning without it, an error (exit 1) when it cannot be read.
TEST_F(RpcsecGss, CheckConfigReportsAKeytabWithoutTheHostsServiceKey) {
    auto check = [&](const std::string& keytab, std::string* out) {
        const std::string yaml = realm_.dir() + "/check.yaml";
        std::ofstream(yaml) << "kerberos: {keytab: " << keytab << "}\n";
        std::string why;
        const std::string cmd = "'" + DaemonBinary(&why) + "' check-config '" + yaml + "' 2>&1";
        FILE* p = ::popen(cmd.c_str(), "r");
        if (!p) return -1;
        char buf[4096];
        size_t n;
        while ((n = std::fread(buf, 1, sizeof buf, p)) > 0) out->append(buf, n);
        const int rc = ::pclose(p);
        return WIFEXITED(rc) ? WEXITSTATUS(rc) : -1;
    };
    std::string out;
    EXPECT_EQ(check(realm_.server_keytab(), &out), 0) << out;
    EXPECT_EQ(out.find("warning"), std::string::npos) << out;
    out.clear();
    EXPECT_EQ(check(realm_.client_keytab(), &out), 0) << out;
    EXPECT_NE(out.find("warning"), std::string::npos) << out;
    EXPECT_NE(out.find("no key for nfs/" + Realm::HostName()), std::string::npos) << out;
    EXPECT_NE(out.find("alice@"), std::string::npos) << "names what it holds: " << out;
    out.clear();
    EXPECT_EQ(check(realm_.dir() + "/no-such.keytab", &out), 1) << out;
    EXPECT_NE(out.find("error"), std::string::npos) << out;
}

// SP4_MACH_CRED (RFC 8881 §18.35.3): granted to an EXCHANGE_ID sent with integrity or
// privacy, as the Linux client sends it with its machine credential (it falls back to
// SP4_NONE silently when refused); refused without.
TEST_F(RpcsecGss, Sp4MachCredIsGrantedToAnIntegrityProtectedExchangeId) {
    GssClient host;
    ASSERT_TRUE(host.Establish(daemon_->nfs_port(), "host/client.test"));
    auto exchange = [&](uint32_t service, x4::COMPOUND4res* out) {
        x4::nfs_argop4 ex(x4::OP_EXCHANGE_ID);
        auto& ea = ex.opexchange_id();
        const std::string owner = "gss-mach-cred-" + std::to_string(service);
        ea.eia_clientowner.co_ownerid = {reinterpret_cast<const uint8_t*>(owner.data()),
                                         owner.size()};
        ea.eia_clientowner.co_verifier = {1, 2, 3, 4, 5, 6, 7, 8};
        ea.eia_state_protect.set_spa_how(x4::SP4_MACH_CRED);
        auto& ops = ea.eia_state_protect.spa_mach_ops();
        // What the Linux client asks for enforced: five of the six of §18.35.3 (not
        // DELEGPURGE).
        ops.spo_must_enforce = {0, 0};
        for (uint32_t op : {x4::OP_EXCHANGE_ID, x4::OP_CREATE_SESSION, x4::OP_DESTROY_SESSION,
                            x4::OP_DESTROY_CLIENTID, x4::OP_BIND_CONN_TO_SESSION})
            ops.spo_must_enforce[op / 32] |= 1u << (op % 32);
        x4::COMPOUND4args a;
        a.minorversion = 1;
        a.argarray.push_back(std::move(ex));
        Bytes args;
        xdr::Encoder e(args);
        x4::xdr_encode(e, a);
        auto r = host.Call(1, args, CallOptions::V4(service));
        if (!r.has_value()) return ::testing::AssertionFailure() << "no reply";
        Bytes res;
        if (!host.Results(*r, &res)) return ::testing::AssertionFailure() << "bad results";
        xdr::Decoder d(res);
        if (!x4::xdr_decode(d, *out)) return ::testing::AssertionFailure() << "bad COMPOUND4res";
        return ::testing::AssertionSuccess();
    };
    x4::COMPOUND4res protected_res, plain_res;
    ASSERT_TRUE(exchange(kSvcIntegrity, &protected_res));
    ASSERT_EQ(protected_res.status, x4::NFS4_OK);
    const auto& ok = protected_res.resarray.at(0).opexchange_id().eir_resok4();
    ASSERT_EQ(ok.eir_state_protect.spr_how(), x4::SP4_MACH_CRED);
    const auto& enforced = ok.eir_state_protect.spr_mach_ops().spo_must_enforce;
    auto has = [&](uint32_t op) {
        return op / 32 < enforced.size() && (enforced[op / 32] >> (op % 32)) & 1u;
    };
    EXPECT_TRUE(has(x4::OP_EXCHANGE_ID));
    EXPECT_TRUE(has(x4::OP_CREATE_SESSION));
    EXPECT_TRUE(has(x4::OP_DESTROY_CLIENTID));
    ASSERT_TRUE(exchange(kSvcNone, &plain_res));
    EXPECT_EQ(plain_res.status, x4::NFS4ERR_INVAL) << "SP4_MACH_CRED without integrity";
}

// One COMPOUND (NFSv4.1) under `service`; false when no decodable reply came. The
// decoded results view the reply's bytes, which `keep` holds until the next call.
bool Compound4(GssClient& c, uint32_t service, std::vector<x4::nfs_argop4> ops,
               x4::COMPOUND4res* out, Bytes* keep) {
    x4::COMPOUND4args a;
    a.minorversion = 1;
    a.argarray = std::move(ops);
    Bytes args;
    xdr::Encoder e(args);
    x4::xdr_encode(e, a);
    auto r = c.Call(1, args, CallOptions::V4(service));
    keep->clear();
    if (!r.has_value() || !c.Results(*r, keep)) return false;
    xdr::Decoder d(*keep);
    return x4::xdr_decode(d, *out);
}

// SP4_MACH_CRED's spo_must_allow (RFC 8881 §18.35.3): the Linux client sends CLOSE, LOCKU,
// DELEGRETURN and OPEN_DOWNGRADE with its machine credential under krb5i whatever the
// export lists. They pass an export that takes only krb5p; other operations under the
// same credential and service still get NFS4ERR_WRONGSEC (other principals: the unit
// test ClientRecord.MachCredNeedsIntegrityAndEnforcesItsOpList).
TEST_F(RpcsecGss, OperationsTheMachineCredentialMayPerformPassAnExportsFlavorList) {
    using namespace test_nfs4;
    GssClient host;
    ASSERT_TRUE(host.Establish(daemon_->nfs_port(), "host/client.test"));
    x4::COMPOUND4res r;
    Bytes keep;  // the last reply's bytes, which `r` views
    {
        x4::nfs_argop4 ex(x4::OP_EXCHANGE_ID);
        auto& ea = ex.opexchange_id();
        static const std::string owner = "gss-must-allow";
        ea.eia_clientowner.co_ownerid = {reinterpret_cast<const uint8_t*>(owner.data()),
                                         owner.size()};
        ea.eia_clientowner.co_verifier = {1, 2, 3, 4, 5, 6, 7, 8};
        ea.eia_state_protect.set_spa_how(x4::SP4_MACH_CRED);
        auto& mo = ea.eia_state_protect.spa_mach_ops();
        mo.spo_must_enforce = {0, 0};
        mo.spo_must_allow = {0, 0};
        for (uint32_t op : {x4::OP_EXCHANGE_ID, x4::OP_CREATE_SESSION, x4::OP_DESTROY_SESSION,
                            x4::OP_DESTROY_CLIENTID, x4::OP_BIND_CONN_TO_SESSION})
            mo.spo_must_enforce[op / 32] |= 1u << (op % 32);
        for (uint32_t op : {x4::OP_CLOSE, x4::OP_LOCKU, x4::OP_DELEGRETURN, x4::OP_OPEN_DOWNGRADE})
            mo.spo_must_allow[op / 32] |= 1u << (op % 32);
        ASSERT_TRUE(Compound4(host, kSvcIntegrity, {ex}, &r, &keep));
        ASSERT_EQ(r.status, x4::NFS4_OK);
    }
    const auto er = r.resarray.at(0).opexchange_id().eir_resok4();
    ASSERT_EQ(er.eir_state_protect.spr_how(), x4::SP4_MACH_CRED);
    ASSERT_TRUE(Compound4(host, kSvcIntegrity,
                          {op_create_session(er.eir_clientid, er.eir_sequenceid)}, &r, &keep));
    ASSERT_EQ(r.status, x4::NFS4_OK);
    const x4::sessionid4 session = r.resarray.at(0).opcreate_session().csr_resok4().csr_sessionid;
    uint32_t seqid = 0;
    auto sequence = [&] {
        x4::nfs_argop4 op(x4::OP_SEQUENCE);
        auto& s = op.opsequence();
        s.sa_sessionid = session;
        s.sa_sequenceid = ++seqid;
        return op;
    };
    // §18.51.3: RECLAIM_COMPLETE before the first OPEN.
    ASSERT_TRUE(Compound4(host, kSvcIntegrity, {sequence(), op_reclaim_complete()}, &r, &keep));
    ASSERT_EQ(r.status, x4::NFS4_OK);
    // The krb5p-only export, through the pseudo file system.
    std::vector<std::string> names;
    const std::string path = daemon_->extra_export_dir("private");
    for (size_t at = 1; at < path.size();) {
        size_t end = path.find('/', at);
        if (end == std::string::npos) end = path.size();
        names.push_back(path.substr(at, end - at));
        at = end + 1;
    }
    auto view = [](const std::string& s) {
        return std::span<const uint8_t>(reinterpret_cast<const uint8_t*>(s.data()), s.size());
    };
    std::vector<x4::nfs_argop4> ops{sequence(), op_putrootfh()};
    for (const auto& n : names) ops.push_back(op_lookup(view(n)));
    static const std::string oowner = "machine", fname = "by-machine";
    ops.push_back(op_open(view(oowner), view(fname), true, x4::OPEN4_SHARE_ACCESS_WRITE));
    ops.push_back(op_getfh());
    ASSERT_TRUE(Compound4(host, kSvcPrivacy, std::move(ops), &r, &keep));
    ASSERT_EQ(r.status, x4::NFS4_OK);
    const size_t n = r.resarray.size();
    const x4::stateid4 sid = r.resarray.at(n - 2).opopen().resok4().stateid;
    const Bytes fh(r.resarray.at(n - 1).opgetfh().resok4().object.begin(),
                   r.resarray.at(n - 1).opgetfh().resok4().object.end());

    ASSERT_TRUE(
        Compound4(host, kSvcIntegrity, {sequence(), op_putfh(fh), op_getattr({1})}, &r, &keep));
    EXPECT_EQ(r.status, x4::NFS4ERR_WRONGSEC) << "GETATTR is not in spo_must_allow";
    // As the Linux client orders DELEGRETURN's COMPOUND: an attribute fetch comes first.
    ASSERT_TRUE(Compound4(host, kSvcIntegrity,
                          {sequence(), op_putfh(fh), op_getattr({1}), op_close(sid)}, &r, &keep));
    EXPECT_EQ(r.status, x4::NFS4_OK) << "CLOSE with the machine credential under krb5i";
    EXPECT_EQ(r.resarray.size(), 4u);
}

TEST_F(RpcsecGss, ReplaysAndForgeriesAreRefusedAsTheRfcSays) {
    GssClient c;
    ASSERT_TRUE(c.Establish(daemon_->nfs_port(), "alice"));
    Bytes res;
    auto first = c.Call(0, {}, CallOptions::Seq(5000));
    ASSERT_TRUE(first.has_value());
    ASSERT_TRUE(c.Results(*first, &res));
    // The same number again, and one below the window: dropped, no reply (§5.3.3.1).
    EXPECT_FALSE(c.Call(0, {}, CallOptions::Seq(5000), 1000).has_value())
        << "a replay was answered";
    EXPECT_FALSE(c.Call(0, {}, CallOptions::Seq(5000 - 4096), 1000).has_value())
        << "a number below the window was answered";
    // Inside the window and new: answered.
    auto late = c.Call(0, {}, CallOptions::Seq(4000));
    ASSERT_TRUE(late.has_value());
    EXPECT_TRUE(c.Results(*late, &res));

    auto unknown = c.Call(0, {}, CallOptions::Handle(Bytes(16, 0xab)));
    ASSERT_TRUE(unknown.has_value());
    EXPECT_EQ(unknown->reply_stat, wire::kMsgDenied);
    EXPECT_EQ(unknown->auth_stat, kCredProblem);
    auto forged = c.Call(0, {}, CallOptions::BrokenMic());
    ASSERT_TRUE(forged.has_value());
    EXPECT_EQ(forged->auth_stat, kCredProblem);
    auto far = c.Call(0, {}, CallOptions::Seq(0x80000001u));  // past MAXSEQ
    ASSERT_TRUE(far.has_value());
    EXPECT_EQ(far->auth_stat, kCtxProblem);
    // That call is refused, the context stays (as the Linux server keeps it; pynfs GSS6
    // goes on with it): a good call after it is answered.
    auto after = c.Call(0, {}, CallOptions::Seq(5001));
    ASSERT_TRUE(after.has_value());
    EXPECT_EQ(after->reply_stat, wire::kMsgAccepted) << after->Describe();
    EXPECT_TRUE(c.Results(*after, &res));
}

// What is refused before any context is looked at, as the Linux server's
// svcauth_gss_accept refuses it: an INIT naming a handle, a creation call whose AUTH_NONE
// verifier has a body, a control call to another procedure than NULL (even with a handle
// nobody knows), and a gss_proc nobody knows (REJECTEDCRED to NULL, BADCRED elsewhere).
TEST_F(RpcsecGss, ControlCallsAreCheckedBeforeTheirContext) {
    GssClient c;
    ASSERT_TRUE(c.Establish(daemon_->nfs_port(), "alice"));
    const Bytes token = XdrOut().opaque(Bytes(40, 0x60)).take();
    wire::Reply r = c.Raw(0, kGssInit, Bytes(16, 0xab), 0, {}, token);
    EXPECT_EQ(r.reply_stat, wire::kMsgDenied) << r.Describe();
    EXPECT_EQ(r.auth_stat, wire::kAuthBadcred) << "INIT with a handle";
    r = c.Raw(0, kGssInit, {}, 0, Bytes(4, 1), token);
    EXPECT_EQ(r.reply_stat, wire::kMsgDenied) << r.Describe();
    EXPECT_EQ(r.auth_stat, wire::kAuthBadverf) << "INIT with an AUTH_NONE verifier that has a body";
    r = c.Raw(kNfs3Getattr, kGssDestroy, Bytes(16, 0xab));
    EXPECT_EQ(r.reply_stat, wire::kMsgDenied) << r.Describe();
    EXPECT_EQ(r.auth_stat, wire::kAuthBadcred) << "DESTROY to GETATTR, unknown handle";
    r = c.Raw(kNfs3Getattr, kGssContinueInit, c.handle(), 0, {}, token);
    EXPECT_EQ(r.auth_stat, wire::kAuthBadcred) << "CONTINUE_INIT to GETATTR";
    r = c.Raw(0, 4, c.handle());
    EXPECT_EQ(r.reply_stat, wire::kMsgDenied) << r.Describe();
    EXPECT_EQ(r.auth_stat, wire::kAuthRejectedcred) << "gss_proc 4 to NULL";
    r = c.Raw(kNfs3Getattr, 4, c.handle());
    EXPECT_EQ(r.auth_stat, wire::kAuthBadcred) << "gss_proc 4 to GETATTR";
    // None of it touched the context.
    auto still = c.Call(0, {});
    ASSERT_TRUE(still.has_value());
    Bytes res;
    EXPECT_TRUE(c.Results(*still, &res)) << "the context was lost";
}

// krb5i: a databody_integ that is not whole XDR words is GARBAGE_ARGS, even with a good
// checksum (as the Linux server refuses it).
TEST_F(RpcsecGss, AnIntegrityBodyOfPartWordsIsGarbage) {
    GssClient c;
    ASSERT_TRUE(c.Establish(daemon_->nfs_port(), "alice"));
    auto r = c.Call(0, Bytes{1, 2, 3}, CallOptions::Service(kSvcIntegrity));
    ASSERT_TRUE(r.has_value());
    EXPECT_EQ(r->reply_stat, wire::kMsgAccepted) << r->Describe();
    EXPECT_EQ(r->accept_stat, wire::kGarbageArgs) << r->Describe();
    auto ok = c.Call(0, {}, CallOptions::Service(kSvcIntegrity));
    ASSERT_TRUE(ok.has_value());
    EXPECT_EQ(ok->accept_stat, wire::kSuccess) << ok->Describe();
}

TEST_F(RpcsecGss, DestroyEndsTheContext) {
    GssClient c;
    ASSERT_TRUE(c.Establish(daemon_->nfs_port(), "alice"));
    auto d = c.Call(0, {}, CallOptions::Destroy());
    ASSERT_TRUE(d.has_value());
    Bytes res;
    ASSERT_TRUE(c.Results(*d, &res)) << "DESTROY's reply";
    auto gone = c.Call(0, {});
    ASSERT_TRUE(gone.has_value());
    EXPECT_EQ(gone->reply_stat, wire::kMsgDenied);
    EXPECT_EQ(gone->auth_stat, kCredProblem);
}

TEST_F(RpcsecGss, InitToAnotherProcedureIsABadCredential) {
    GssClient c;
    EXPECT_FALSE(c.Establish(daemon_->nfs_port(), "alice", kNfs3Getattr));
    EXPECT_EQ(c.last().reply_stat, wire::kMsgDenied);
    EXPECT_EQ(c.last().auth_stat, wire::kAuthBadcred);
}

// READ under integrity and privacy: the data goes inside the wrapped results, read into
// memory (never spliced) and copied inline once, counted apart from payload copies.
TEST_F(RpcsecGss, ReadUnderKrb5iAndKrb5pCarriesTheFilesBytesInsideTheWrap) {
    std::string content(100000, '\0');
    for (size_t i = 0; i < content.size(); ++i) content[i] = static_cast<char>('a' + i % 23);
    ASSERT_TRUE(WriteFile(disk("data"), content));
    GssClient c;
    ASSERT_TRUE(c.Establish(daemon_->nfs_port(), "alice"));
    // LOOKUP3args: the directory's handle and the name.
    auto l = c.Call(3, XdrOut().opaque(root_.data.data(), root_.size()).str("data").take());
    ASSERT_TRUE(l.has_value());
    Bytes lres;
    ASSERT_TRUE(c.Results(*l, &lres));
    XdrIn li(lres);
    uint32_t st = 1;
    Bytes fh;
    ASSERT_TRUE(li.u32(&st) && st == 0 && li.opaque(&fh, 64));
    for (uint32_t svc : {kSvcIntegrity, kSvcPrivacy}) {
        SCOPED_TRACE("service " + std::to_string(svc));
        auto r = c.Call(kNfs3Read, XdrOut().opaque(fh).u64(0).u32(65536).take(),
                        CallOptions::Service(svc));
        ASSERT_TRUE(r.has_value());
        Bytes res;
        ASSERT_TRUE(c.Results(*r, &res));
        XdrIn in(res);
        uint32_t status = 1, follows = 0, count = 0, eof = 1;
        Bytes data;
        ASSERT_TRUE(in.u32(&status) && in.u32(&follows));
        ASSERT_EQ(status, 0u);
        if (follows) {
            ASSERT_TRUE(in.skip(84));  // fattr3
        }
        ASSERT_TRUE(in.u32(&count) && in.u32(&eof) && in.opaque(&data, 1 << 20));
        EXPECT_EQ(count, 65536u);
        EXPECT_EQ(eof, 0u);
        EXPECT_TRUE(data == Bytes(content.begin(), content.begin() + 65536))
            << "the READ data inside the wrap is not the file's";
    }
    auto inlined = daemon_->StatsCounter("rpc", "inlined_payload_bytes");
    ASSERT_TRUE(inlined.has_value());
    EXPECT_GE(*inlined, 2u * 65536u) << "READ data was not copied inline for the wrap";
    // The two READs' arguments (file handle, offset, count) went through the unwrap.
    auto unwrapped = daemon_->StatsCounter("rpc", "unwrapped_bytes");
    ASSERT_TRUE(unwrapped.has_value());
    EXPECT_GE(*unwrapped, 2u * (4 + fh.size() + 8 + 4));
}

// CONTINUE_INIT for a complete context (no MIC, any caller): refused, and the context
// goes on working.
TEST_F(RpcsecGss, ContinueInitCannotTouchACompleteContext) {
    GssClient c;
    ASSERT_TRUE(c.Establish(daemon_->nfs_port(), "alice"));
    wire::Reply r = c.ContinueInit(Bytes(40, 0x60));
    EXPECT_EQ(r.reply_stat, wire::kMsgDenied) << r.Describe();
    EXPECT_EQ(r.auth_stat, kCredProblem);
    auto still = c.Call(0, {});
    ASSERT_TRUE(still.has_value());
    Bytes res;
    EXPECT_TRUE(c.Results(*still, &res)) << "the context was lost";
}

}  // namespace
}  // namespace nfsrdmad::e2e
