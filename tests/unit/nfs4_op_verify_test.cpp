// VERIFY (RFC 8881 §18.31) and NVERIFY (§18.15) through Nfs4Program: the attributes a
// client sends are compared with what GETATTR returns for the current object; SAME /
// NOT_SAME stop the COMPOUND; unsupported attributes are ATTRNOTSUPP, rdattr_error and the
// write-only ones INVAL, an attrlist4 that does not hold the values its bitmap announces
// BADXDR.
#include <gtest/gtest.h>

#include <deque>
#include <fstream>
#include <vector>

#include "tests/unit/nfs4_ops_util.h"

namespace nfsrdmad::nfs::v4::testing {
namespace {

class Nfs4Verify : public Nfs4OpsFixture {
  protected:
    void SetUp() override {
        Nfs4OpsFixture::SetUp();
        establish();
        root_fh_ = exp_->root_handle();
        std::ofstream(path("f")) << "twelve bytes";
    }
    x4::nfs_argop4 put_root() { return op_putfh(root_fh_.data()); }
    std::span<const uint8_t> s(const std::string& v) { return keep(v); }

    x4::fattr4 fattr(std::initializer_list<uint32_t> attrs, std::vector<uint8_t> vals) {
        x4::fattr4 f;
        for (uint32_t a : attrs) {
            if (f.attrmask.size() <= a / 32) f.attrmask.resize(a / 32 + 1);
            f.attrmask[a / 32] |= 1u << (a % 32);
        }
        f.attr_vals = vals_.emplace_back(std::move(vals));
        return f;
    }
    static std::vector<uint8_t> u64(uint64_t v) {
        std::vector<uint8_t> out;
        for (int i = 7; i >= 0; --i) out.push_back(static_cast<uint8_t>(v >> (8 * i)));
        return out;
    }
    static std::vector<uint8_t> u32(uint32_t v) {
        std::vector<uint8_t> out;
        for (int i = 3; i >= 0; --i) out.push_back(static_cast<uint8_t>(v >> (8 * i)));
        return out;
    }
    static x4::nfs_argop4 verify(const x4::fattr4& f) {
        x4::nfs_argop4 op(x4::OP_VERIFY);
        op.opverify().obj_attributes = f;
        return op;
    }
    static x4::nfs_argop4 nverify(const x4::fattr4& f) {
        x4::nfs_argop4 op(x4::OP_NVERIFY);
        op.opnverify().obj_attributes = f;
        return op;
    }
    // The status of VERIFY (or NVERIFY) of `f` against file "f".
    x4::nfsstat4 on_file(x4::nfs_argop4 op) {
        Reply r = seq({put_root(), op_lookup(s("f")), op});
        EXPECT_TRUE(r.decoded);
        return r.status();
    }

    vfs::FileHandle root_fh_;
    std::deque<std::vector<uint8_t>> vals_;
};

TEST_F(Nfs4Verify, WhatGetattrReturnsIsTheSame) {
    Reply g = seq(
        {put_root(), op_lookup(s("f")),
         op_getattr({x4::FATTR4_TYPE, x4::FATTR4_CHANGE, x4::FATTR4_SIZE, x4::FATTR4_FSID,
                     x4::FATTR4_FILEHANDLE, x4::FATTR4_FILEID, x4::FATTR4_MODE, x4::FATTR4_OWNER,
                     x4::FATTR4_OWNER_GROUP, x4::FATTR4_TIME_MODIFY, x4::FATTR4_SUPPORTED_ATTRS})});
    ASSERT_EQ(g.status(), x4::NFS4_OK);
    const x4::fattr4& f = g.op(3).opgetattr().resok4().obj_attributes;
    EXPECT_EQ(on_file(verify(f)), x4::NFS4_OK);
    EXPECT_EQ(on_file(nverify(f)), x4::NFS4ERR_SAME);

    // After the COMPOUND stops at NOT_SAME nothing more runs.
    Reply r = seq({put_root(), op_lookup(s("f")), nverify(f), op_getfh()});
    EXPECT_EQ(r.status(), x4::NFS4ERR_SAME);
    EXPECT_EQ(r.count(), 4u);
}

TEST_F(Nfs4Verify, ADifferentValueIsNotSame) {
    EXPECT_EQ(on_file(verify(fattr({x4::FATTR4_SIZE}, u64(12)))), x4::NFS4_OK);
    EXPECT_EQ(on_file(verify(fattr({x4::FATTR4_SIZE}, u64(13)))), x4::NFS4ERR_NOT_SAME);
    EXPECT_EQ(on_file(nverify(fattr({x4::FATTR4_SIZE}, u64(13)))), x4::NFS4_OK);
    // A change after the client looked: NVERIFY of the old size now passes.
    std::ofstream(path("f"), std::ios::app) << "!";
    EXPECT_EQ(on_file(nverify(fattr({x4::FATTR4_SIZE}, u64(12)))), x4::NFS4_OK);
    EXPECT_EQ(on_file(verify(fattr({x4::FATTR4_SIZE}, u64(12)))), x4::NFS4ERR_NOT_SAME);
    // Two attributes, one differs.
    auto v = u32(x4::NF4REG);
    auto sz = u64(12);
    v.insert(v.end(), sz.begin(), sz.end());
    EXPECT_EQ(on_file(verify(fattr({x4::FATTR4_TYPE, x4::FATTR4_SIZE}, v))), x4::NFS4ERR_NOT_SAME);
}

TEST_F(Nfs4Verify, NoAttributesAreTheSame) {
    EXPECT_EQ(on_file(verify(fattr({}, {}))), x4::NFS4_OK);
    EXPECT_EQ(on_file(nverify(fattr({}, {}))), x4::NFS4ERR_SAME);
}

TEST_F(Nfs4Verify, PseudoDirectory) {
    Reply r = seq({op_putrootfh(), verify(fattr({x4::FATTR4_TYPE}, u32(x4::NF4DIR)))});
    EXPECT_EQ(r.status(), x4::NFS4_OK);
    Reply n = seq({op_putrootfh(), nverify(fattr({x4::FATTR4_TYPE}, u32(x4::NF4REG)))});
    EXPECT_EQ(n.status(), x4::NFS4_OK);
}

TEST_F(Nfs4Verify, UnsupportedAttributeIsAttrNotSupp) {
    // time_create (50) is not supported; neither is anything past the attributes RFC 8881
    // defines.
    EXPECT_EQ(on_file(verify(fattr({x4::FATTR4_TIME_CREATE}, u32(0)))), x4::NFS4ERR_ATTRNOTSUPP);
    EXPECT_EQ(on_file(nverify(fattr({x4::FATTR4_SIZE, 100}, u64(12)))), x4::NFS4ERR_ATTRNOTSUPP);
}

TEST_F(Nfs4Verify, RdattrErrorAndWriteOnlyAreInval) {
    EXPECT_EQ(on_file(verify(fattr({x4::FATTR4_RDATTR_ERROR}, u32(0)))), x4::NFS4ERR_INVAL);
    EXPECT_EQ(on_file(nverify(fattr({x4::FATTR4_TIME_MODIFY_SET}, u32(x4::SET_TO_SERVER_TIME4)))),
              x4::NFS4ERR_INVAL);
    EXPECT_EQ(on_file(verify(fattr({x4::FATTR4_TIME_ACCESS_SET}, u32(x4::SET_TO_SERVER_TIME4)))),
              x4::NFS4ERR_INVAL);
}

TEST_F(Nfs4Verify, MalformedAttrListIsBadXdr) {
    // Too short, too long, a bool that is not 0 or 1, a string longer than what is there.
    EXPECT_EQ(on_file(verify(fattr({x4::FATTR4_SIZE}, u32(12)))), x4::NFS4ERR_BADXDR);
    auto longer = u64(12);
    longer.resize(12);
    EXPECT_EQ(on_file(nverify(fattr({x4::FATTR4_SIZE}, longer))), x4::NFS4ERR_BADXDR);
    EXPECT_EQ(on_file(verify(fattr({x4::FATTR4_NAMED_ATTR}, u32(2)))), x4::NFS4ERR_BADXDR);
    EXPECT_EQ(on_file(verify(fattr({x4::FATTR4_OWNER}, u32(40)))), x4::NFS4ERR_BADXDR);
    EXPECT_EQ(on_file(verify(fattr({}, u32(0)))), x4::NFS4ERR_BADXDR);
}

TEST_F(Nfs4Verify, NeedsAFilehandle) {
    Reply r = seq({verify(fattr({x4::FATTR4_SIZE}, u64(12)))});
    EXPECT_EQ(r.status(), x4::NFS4ERR_NOFILEHANDLE);
}

}  // namespace
}  // namespace nfsrdmad::nfs::v4::testing
