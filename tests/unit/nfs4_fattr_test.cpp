// NFSv4.1 attributes as fattr4 (RFC 8881 §5): what is returned for what is asked, in
// attribute order, each value in its own XDR type.
#include <gtest/gtest.h>

#include "nfs/v4/attrs/acl.h"
#include "nfs/v4/attrs/fattr.h"
#include "tests/unit/xdr_bytes.h"

using namespace nfsrdmad;
using namespace nfsrdmad::nfs::v4;

namespace {

struct FattrTest : ::testing::Test {
    FattrTest() {
        fs.fsid = {7, 9};
        fs.space_total = 1000;
        fs.maxread = fs.maxwrite = 1 << 20;
        fs.lease_time = 30;
        o.fs = &fs;
        o.st.stx_mode = S_IFREG | 04755;
        o.st.stx_size = 12345;
        o.st.stx_nlink = 2;
        o.st.stx_ino = 4242;
        o.st.stx_blocks = 8;
        o.st.stx_mtime = {1700000000, 5, 0};
        o.st.stx_ctime = {1700000001, 6, 0};
        o.change = 0x1122334455667788ull;
        o.fh = fh;
        o.owner = "alice@example.org";
        o.owner_group = "1000";
        o.mounted_on_fileid = 4242;
    }
    // Encodes, then decodes the fattr4 back: mask and attrlist4.
    x4::fattr4 get(const AttrMask& m, x4::nfsstat4 expect = x4::NFS4_OK) {
        out.clear();
        xdr::Encoder e(out);
        EXPECT_EQ(encode_fattr(m, o, e), expect);
        x4::fattr4 f;
        if (expect == x4::NFS4_OK) {
            xdr::Decoder d(out);
            EXPECT_TRUE(x4::xdr_decode(d, f));
            EXPECT_EQ(d.remaining(), 0u);
        }
        return f;
    }
    FsAttrs fs;
    ObjectAttrs o{};
    const uint8_t fh[5] = {1, 2, 3, 4, 5};
    std::vector<uint8_t> out;
};

}  // namespace

TEST_F(FattrTest, ValuesInAttributeOrderEachInItsType) {
    auto f = get({x4::FATTR4_MODE, x4::FATTR4_TYPE, x4::FATTR4_SIZE, x4::FATTR4_FSID,
                  x4::FATTR4_CHANGE, x4::FATTR4_FILEHANDLE, x4::FATTR4_OWNER,
                  x4::FATTR4_TIME_MODIFY, x4::FATTR4_SPACE_USED, x4::FATTR4_NUMLINKS});
    EXPECT_EQ(AttrMask::from_wire(f.attrmask),
              (AttrMask{x4::FATTR4_MODE, x4::FATTR4_TYPE, x4::FATTR4_SIZE, x4::FATTR4_FSID,
                        x4::FATTR4_CHANGE, x4::FATTR4_FILEHANDLE, x4::FATTR4_OWNER,
                        x4::FATTR4_TIME_MODIFY, x4::FATTR4_SPACE_USED, x4::FATTR4_NUMLINKS}));
    xdr::Decoder d(f.attr_vals);
    EXPECT_EQ(d.get_u32(), uint32_t(x4::NF4REG));  // 1 type
    EXPECT_EQ(d.get_u64(), o.change);              // 3 change
    EXPECT_EQ(d.get_u64(), 12345u);                // 4 size
    EXPECT_EQ(d.get_u64(), 7u);                    // 8 fsid
    EXPECT_EQ(d.get_u64(), 9u);
    auto h = d.get_opaque(128);  // 19 filehandle
    EXPECT_EQ(std::vector<uint8_t>(h.begin(), h.end()), (std::vector<uint8_t>{1, 2, 3, 4, 5}));
    EXPECT_EQ(d.get_u32(), 04755u);                      // 33 mode
    EXPECT_EQ(d.get_u32(), 2u);                          // 35 numlinks
    EXPECT_EQ(d.get_string(1024), "alice@example.org");  // 36 owner
    EXPECT_EQ(d.get_u64(), 8u * 512);                    // 45 space_used
    EXPECT_EQ(d.get_i64(), 1700000000);                  // 53 time_modify
    EXPECT_EQ(d.get_u32(), 5u);
    EXPECT_TRUE(d.ok());
    EXPECT_EQ(d.remaining(), 0u);
}

TEST_F(FattrTest, UnsupportedAttributesAreLeftOutOfTheMask) {
    auto f = get(
        {x4::FATTR4_DACL, x4::FATTR4_QUOTA_USED, x4::FATTR4_TIME_BACKUP, 95, x4::FATTR4_FILEID});
    EXPECT_EQ(AttrMask::from_wire(f.attrmask), AttrMask{x4::FATTR4_FILEID});
    EXPECT_EQ(f.attr_vals.size(), 8u);
}

TEST_F(FattrTest, WriteOnlyAttributesAreInvalidToRead) {
    get({x4::FATTR4_SIZE, x4::FATTR4_TIME_MODIFY_SET}, x4::NFS4ERR_INVAL);
    EXPECT_TRUE(out.empty());
    get({x4::FATTR4_TIME_ACCESS_SET}, x4::NFS4ERR_INVAL);
}

TEST_F(FattrTest, NothingAskedIsAnEmptyMaskAndList) {
    auto f = get({});
    EXPECT_TRUE(f.attrmask.empty());
    EXPECT_TRUE(f.attr_vals.empty());
    EXPECT_EQ(out, xdr::testing::be({0, 0}));
}

TEST_F(FattrTest, SupportedAttrsListsEveryRequiredAttribute) {
    auto f = get({x4::FATTR4_SUPPORTED_ATTRS});
    xdr::Decoder d(f.attr_vals);
    x4::bitmap4 b(d.get_u32());
    for (auto& w : b) w = d.get_u32();
    ASSERT_TRUE(d.ok());
    AttrMask s = AttrMask::from_wire(b);
    for (uint32_t a : {0, 1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11, 19, 75}) EXPECT_TRUE(s.has(a)) << a;
    EXPECT_EQ(s, supported_attrs());
    EXPECT_TRUE(s.has(x4::FATTR4_ACL));
    EXPECT_TRUE(s.has(x4::FATTR4_ACLSUPPORT));
    EXPECT_FALSE(s.has(x4::FATTR4_DACL));
}

namespace {

struct Ace {
    uint32_t type, flag, mask;
    std::string who;
    bool operator==(const Ace&) const = default;
};

std::vector<Ace> acl_of(uint32_t mode) {
    std::vector<uint8_t> b;
    xdr::Encoder e(b);
    encode_mode_acl(mode, e);
    xdr::Decoder d(b);
    std::vector<Ace> out(d.get_u32());
    for (auto& a : out) {
        a.type = d.get_u32();
        a.flag = d.get_u32();
        a.mask = d.get_u32();
        a.who = d.get_string(64);
    }
    EXPECT_TRUE(d.ok());
    EXPECT_EQ(d.remaining(), 0u);
    return out;
}

std::vector<x4::nfsace4> wire(const std::vector<Ace>& acl) {
    std::vector<x4::nfsace4> out;
    for (const auto& a : acl)
        out.push_back({a.type,
                       a.flag,
                       a.mask,
                       {reinterpret_cast<const uint8_t*>(a.who.data()), a.who.size()}});
    return out;
}

constexpr uint32_t A = x4::ACE4_ACCESS_ALLOWED_ACE_TYPE, D = x4::ACE4_ACCESS_DENIED_ACE_TYPE;
constexpr uint32_t G = x4::ACE4_IDENTIFIER_GROUP;

}  // namespace

// RFC 8881 §6.4.2: the ACL of a mode-only object represents the mode; in the Linux
// server's form (acl.h). 0644: no DENY needed.
TEST_F(FattrTest, AclOfAModeIsTheLinuxServersForm) {
    EXPECT_EQ(acl_of(S_IFREG | 0644), (std::vector<Ace>{{A, 0, 0x160187, "OWNER@"},
                                                        {A, G, 0x120081, "GROUP@"},
                                                        {A, 0, 0x120081, "EVERYONE@"}}));
    // 0604 on a directory: the group lacks what other has (a GROUP@ DENY); write on a
    // directory includes DELETE_CHILD.
    EXPECT_EQ(acl_of(S_IFDIR | 0604), (std::vector<Ace>{{A, 0, 0x1601c7, "OWNER@"},
                                                        {A, G, 0x120080, "GROUP@"},
                                                        {D, G, 0x000001, "GROUP@"},
                                                        {A, 0, 0x120081, "EVERYONE@"}}));
    // 0077: the owner lacks what the others have (an OWNER@ DENY first).
    EXPECT_EQ(acl_of(S_IFREG | 0077).front(), (Ace{D, 0, 0x27, "OWNER@"}));
    // aclsupport: ALLOW and DENY.
    auto f = get({x4::FATTR4_ACLSUPPORT});
    xdr::Decoder d(f.attr_vals);
    EXPECT_EQ(d.get_u32(), 3u);
}

// §6.3.2 computes every mode back from its ACL.
TEST_F(FattrTest, ModeFromTheAclOfEveryMode) {
    for (uint32_t m = 0; m < 01000; ++m) {
        uint32_t bits = 0;
        ASSERT_EQ(mode_bits_of_acl(wire(acl_of(S_IFREG | m)), bits), x4::NFS4_OK) << m;
        EXPECT_EQ(bits, m) << std::oct << m;
    }
}

// §6.3.2 on ACLs a client writes, and what a mode cannot hold (§6.2.1.2: ATTRNOTSUPP).
TEST_F(FattrTest, AclsSetByAClient) {
    uint32_t bits = 0;
    // EVERYONE@ counts for all three; the first ACE to decide a bit wins; write needs
    // WRITE_DATA and APPEND_DATA.
    EXPECT_EQ(
        mode_bits_of_acl(
            wire({{D, 0, 0x2, "OWNER@"}, {A, 0, 0x27, "EVERYONE@"}, {A, G, 0x7, "GROUP@"}}), bits),
        x4::NFS4_OK);
    EXPECT_EQ(bits, 0577u);
    EXPECT_EQ(mode_bits_of_acl(wire({{A, 0, 0x3, "OWNER@"}}), bits), x4::NFS4_OK);
    EXPECT_EQ(bits, 0400u);  // WRITE_DATA without APPEND_DATA is no write bit
    EXPECT_EQ(mode_bits_of_acl({}, bits), x4::NFS4_OK);
    EXPECT_EQ(bits, 0u);
    for (const auto& bad : std::vector<std::vector<Ace>>{
             {{A, 0, 0x1, "alice@example.org"}},                    // a named user
             {{x4::ACE4_SYSTEM_AUDIT_ACE_TYPE, 0, 0x1, "OWNER@"}},  // AUDIT
             {{A, x4::ACE4_FILE_INHERIT_ACE, 0x1, "OWNER@"}},       // inheritance
             {{D, 0, x4::ACE4_READ_ATTRIBUTES, "EVERYONE@"}},       // cannot be enforced
             {{D, 0, x4::ACE4_WRITE_ACL, "OWNER@"}}}) {
        EXPECT_EQ(mode_bits_of_acl(wire(bad), bits), x4::NFS4ERR_ATTRNOTSUPP) << bad[0].who;
    }
}

TEST_F(FattrTest, FileTypes) {
    EXPECT_EQ(file_type(S_IFDIR | 0755), x4::NF4DIR);
    EXPECT_EQ(file_type(S_IFLNK), x4::NF4LNK);
    EXPECT_EQ(file_type(S_IFIFO), x4::NF4FIFO);
    EXPECT_EQ(file_type(S_IFSOCK), x4::NF4SOCK);
    EXPECT_EQ(file_type(S_IFCHR), x4::NF4CHR);
    EXPECT_EQ(file_type(S_IFBLK), x4::NF4BLK);
    EXPECT_EQ(file_type(S_IFREG), x4::NF4REG);
}

TEST(AttrMask, WireFormTrimsAndIgnoresBitsBeyondTheKnownWords) {
    AttrMask m{1, 33, 75};
    EXPECT_EQ(m.to_wire(), (x4::bitmap4{2, 2, 1u << 11}));
    EXPECT_EQ(AttrMask{1}.to_wire(), x4::bitmap4{2});
    bool beyond = false;
    EXPECT_EQ(AttrMask::from_wire({2, 0, 0, 5}, &beyond), AttrMask{1});
    EXPECT_TRUE(beyond);
    std::vector<uint32_t> seen;
    m.for_each([&](uint32_t a) { seen.push_back(a); });
    EXPECT_EQ(seen, (std::vector<uint32_t>{1, 33, 75}));
}

TEST(AttrMask, EveryWordsFirstAndLastBitInOrder) {
    std::vector<uint32_t> seen;
    AttrMask{95, 0, 64, 31, 32, 63}.for_each([&](uint32_t a) { seen.push_back(a); });
    EXPECT_EQ(seen, (std::vector<uint32_t>{0, 31, 32, 63, 64, 95}));
}

// GETATTR reads its bitmap4 straight into a mask: the same bytes accepted as the
// generated decoder accepts, the same mask as from_wire makes of what it decodes.
TEST(AttrMask, DecodeAgreesWithTheGeneratedDecoder) {
    using xdr::testing::be;
    const std::vector<std::vector<uint8_t>> inputs = {
        be({0}),                          // no words
        be({2, 0x0010011a, 0x00b0a23a}),  // what the Linux client asks
        be({5, 1, 2, 3, 4, 5}),           // words past the known ones
        be({3, 1, 2}),                    // a word short
        be({0x40000000, 1}),              // a count past the bytes
        {},                               // nothing at all
    };
    for (const auto& b : inputs) {
        xdr::Decoder generated(b), ours(b);
        x4::GETATTR4args a;  // one bitmap4
        const bool g = x4::xdr_decode(generated, a);
        AttrMask m;
        const bool o = AttrMask::decode(ours, m);
        ASSERT_EQ(o, g) << ::testing::PrintToString(b);
        if (!g) continue;
        EXPECT_EQ(ours.offset(), generated.offset());
        EXPECT_EQ(m, AttrMask::from_wire(a.attr_request));
    }
}

// Values pass through a buffer of a few hundred bytes on their way to the reply: long
// owner strings and the ACL (encoded straight into the reply) land in their places.
TEST_F(FattrTest, LongValuesAndTheAclKeepTheirOrder) {
    const std::string owner(600, 'o'), group(300, 'g');
    o.owner = owner;
    o.owner_group = group;
    auto f = get({x4::FATTR4_SIZE, x4::FATTR4_ACL, x4::FATTR4_FILEID, x4::FATTR4_MODE,
                  x4::FATTR4_OWNER, x4::FATTR4_OWNER_GROUP, x4::FATTR4_TIME_MODIFY});
    xdr::Decoder d(f.attr_vals);
    EXPECT_EQ(d.get_u64(), 12345u);     // 4 size
    const uint32_t aces = d.get_u32();  // 12 acl
    EXPECT_GE(aces, 3u);
    for (uint32_t i = 0; i < aces; ++i) {
        x4::nfsace4 ace;
        ASSERT_TRUE(x4::xdr_decode(d, ace));
    }
    EXPECT_EQ(d.get_u64(), 4242u);                 // 20 fileid
    EXPECT_EQ(d.get_u32(), 04755u);                // 33 mode
    EXPECT_EQ(d.get_string(1024), o.owner);        // 36 owner
    EXPECT_EQ(d.get_string(1024), o.owner_group);  // 37 owner_group
    EXPECT_EQ(d.get_i64(), 1700000000);            // 53 time_modify
    EXPECT_EQ(d.get_u32(), 5u);
    EXPECT_TRUE(d.ok());
    EXPECT_EQ(d.remaining(), 0u);
}
