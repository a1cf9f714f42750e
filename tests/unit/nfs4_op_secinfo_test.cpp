// SECINFO (RFC 8881 §18.29) and SECINFO_NO_NAME (§18.45) through Nfs4Program: the
// flavors, the current filehandle consumed (§2.6.3.1.1.8: GETFH after them is
// NOFILEHANDLE), SECINFO_STYLE4_PARENT answering for LOOKUPP's directory (NOENT at the
// pseudo root, the pseudo directory above an export's root).
#include <gtest/gtest.h>
#include <sys/stat.h>

#include <fstream>

#include "tests/unit/nfs4_ops_util.h"

namespace nfsrdmad::nfs::v4::testing {
namespace {

class Nfs4Secinfo : public Nfs4OpsFixture {
  protected:
    void SetUp() override {
        Nfs4OpsFixture::SetUp();
        establish();
        root_fh_ = exp_->root_handle();
        ASSERT_EQ(::mkdir(path("d").c_str(), 0755), 0);
        std::ofstream(path("d/f")) << "x";
    }
    x4::nfs_argop4 put_root() { return op_putfh(root_fh_.data()); }
    std::span<const uint8_t> s(const std::string& v) { return keep(v); }

    static x4::nfs_argop4 no_name(x4::secinfo_style4 style) {
        x4::nfs_argop4 op(x4::OP_SECINFO_NO_NAME);
        op.opsecinfo_no_name() = style;
        return op;
    }
    x4::nfs_argop4 secinfo(const std::string& name) {
        x4::nfs_argop4 op(x4::OP_SECINFO);
        op.opsecinfo().name = s(name);
        return op;
    }
    static bool offers_auth_sys(const x4::SECINFO4res& r) {
        for (const auto& f : r.resok4())
            if (f.flavor() == 1) return true;
        return false;
    }

    vfs::FileHandle root_fh_;
};

TEST_F(Nfs4Secinfo, NoNameConsumesTheFilehandle) {
    // pynfs SECNN1, SECNN2.
    Reply r = seq({op_putrootfh(), no_name(x4::SECINFO_STYLE4_CURRENT_FH)});
    ASSERT_EQ(r.status(), x4::NFS4_OK);
    EXPECT_TRUE(offers_auth_sys(r.op(2).opsecinfo_no_name()));
    Reply g = seq({op_putrootfh(), no_name(x4::SECINFO_STYLE4_CURRENT_FH), op_getfh()});
    EXPECT_EQ(g.status(), x4::NFS4ERR_NOFILEHANDLE);
}

TEST_F(Nfs4Secinfo, SecinfoConsumesTheFilehandle) {
    // pynfs SEC1, SEC2.
    Reply r = seq({put_root(), secinfo("d")});
    ASSERT_EQ(r.status(), x4::NFS4_OK);
    EXPECT_TRUE(offers_auth_sys(r.op(2).opsecinfo()));
    EXPECT_EQ(seq({put_root(), secinfo("d"), op_getfh()}).status(), x4::NFS4ERR_NOFILEHANDLE);
    EXPECT_EQ(seq({put_root(), secinfo("nope")}).status(), x4::NFS4ERR_NOENT);
}

// Kerberos flavors go as RPCSEC_GSS with the krb5 OID and the service, in the export's
// order (RFC 8881 §18.29.3, §2.6.3.1.1.1).
class Nfs4SecinfoKrb5 : public Nfs4Secinfo {
  protected:
    void adjust_rule(vfs::ClientRule& r) override {
        r.flavors = {vfs::kAuthKrb5p, vfs::kAuthKrb5i, vfs::kAuthKrb5, vfs::kAuthSys};
    }
};

TEST_F(Nfs4SecinfoKrb5, KerberosFlavorsCarryTheOidAndTheService) {
    Reply r = seq({put_root(), secinfo("d")});
    ASSERT_EQ(r.status(), x4::NFS4_OK);
    const auto& l = r.op(2).opsecinfo().resok4();
    ASSERT_EQ(l.size(), 4u);
    const std::vector<uint8_t> krb5_oid = {0x2a, 0x86, 0x48, 0x86, 0xf7, 0x12, 0x01, 0x02, 0x02};
    const x4::rpc_gss_svc_t want[] = {x4::RPC_GSS_SVC_PRIVACY, x4::RPC_GSS_SVC_INTEGRITY,
                                      x4::RPC_GSS_SVC_NONE};
    for (size_t i = 0; i < 3; ++i) {
        ASSERT_EQ(l[i].flavor(), x4::RPCSEC_GSS) << i;
        const auto& info = l[i].flavor_info();
        EXPECT_EQ(std::vector<uint8_t>(info.oid.begin(), info.oid.end()), krb5_oid);
        EXPECT_EQ(info.qop, 0u);
        EXPECT_EQ(info.service, want[i]);
    }
    EXPECT_EQ(l[3].flavor(), 1u);
}

TEST_F(Nfs4Secinfo, ParentStyle) {
    // pynfs SECNN3: the pseudo root has no parent.
    EXPECT_EQ(seq({op_putrootfh(), no_name(x4::SECINFO_STYLE4_PARENT)}).status(),
              x4::NFS4ERR_NOENT);
    // SECNN4: a directory inside the export.
    std::vector<x4::nfs_argop4> ops{put_root(), op_lookup(s("d")),
                                    no_name(x4::SECINFO_STYLE4_PARENT)};
    EXPECT_EQ(seq(ops).status(), x4::NFS4_OK);
    // The export's root: its parent is the pseudo directory above it, as LOOKUPP says.
    Reply r = seq({put_root(), no_name(x4::SECINFO_STYLE4_PARENT)});
    ASSERT_EQ(r.status(), x4::NFS4_OK);
    EXPECT_TRUE(offers_auth_sys(r.op(2).opsecinfo_no_name()));
    // Not a directory: NOTDIR, as LOOKUPP.
    EXPECT_EQ(
        seq({put_root(), op_lookup(s("d")), op_lookup(s("f")), no_name(x4::SECINFO_STYLE4_PARENT)})
            .status(),
        x4::NFS4ERR_NOTDIR);
}

}  // namespace
}  // namespace nfsrdmad::nfs::v4::testing
