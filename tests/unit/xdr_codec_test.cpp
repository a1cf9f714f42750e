// The generated codecs (xdr/gen/xdrgen.py) against byte strings written out by hand
// from RFC 4506 / RFC 1813.
#include <gtest/gtest.h>

#include <variant>  // std::bad_variant_access: a union arm that is not live

#include "xdr/mount_prot.h"
#include "xdr/nfs3_prot.h"
#include "xdr/rpc_prot.h"
#include "tests/unit/xdr_bytes.h"

using namespace nfsrdmad;
namespace n3 = xdr::nfs3;

namespace {

using xdr::testing::be;
using xdr::testing::encode;

}  // namespace

TEST(XdrCodec, PrimitivesAreBigEndian) {
    std::vector<uint8_t> out;
    xdr::Encoder e(out);
    e.put_u32(0x01020304);
    e.put_u64(0x0a0b0c0d0e0f1011ull);
    e.put_bool(true);
    EXPECT_EQ(out, (std::vector<uint8_t>{1, 2, 3, 4, 0xa, 0xb, 0xc, 0xd, 0xe, 0xf, 0x10, 0x11, 0, 0, 0, 1}));
}

// A struct whose wire form has one size (fattr3: 84 bytes) is written in place
// (xdr_store into Encoder::extend); the bytes are those of RFC 1813 §2.6's field order,
// behind whatever the vector held, and a counting encoder counts them.
TEST(XdrCodec, FixedSizeStructsAreStoredInPlace) {
    n3::fattr3 a;
    a.type = n3::NF3LNK;
    a.mode = 0755;
    a.nlink = 3;
    a.uid = 1000;
    a.gid = 1001;
    a.size = 0x0000000500000006ull;
    a.used = 7;
    a.rdev = {8, 9};
    a.fsid = 0x0a0000000bull;
    a.fileid = 0xffffffff0000000cull;
    a.atime = {13, 14};
    a.mtime = {15, 16};
    a.ctime = {17, 18};
    std::vector<uint8_t> out = be({0xdeadbeef});
    xdr::Encoder e(out);
    n3::post_op_attr p;
    p.set_attributes_follow(true).attributes() = a;
    n3::xdr_encode(e, p);
    EXPECT_EQ(out, be({0xdeadbeef, 1,    n3::NF3LNK, 0755,       3,  1000, 1001, 5,  6,  0,  7, 8,
                       9,          0x0a, 0x0b,       0xffffffff, 12, 13,   14,   15, 16, 17, 18}));
    xdr::Encoder count;
    n3::xdr_encode(count, a);
    EXPECT_EQ(count.size(), 84u);
    xdr::Decoder d(std::span<const uint8_t>(out).subspan(8));
    n3::fattr3 back;
    ASSERT_TRUE(n3::xdr_decode(d, back));
    EXPECT_EQ(back.fileid, a.fileid);
    EXPECT_EQ(back.ctime.nseconds, 18u);
}

TEST(XdrCodec, OpaqueIsPaddedAndDecodedAsAView) {
    const uint8_t data[] = {'a', 'b', 'c', 'd', 'e'};
    n3::nfs_fh3 fh;
    fh.data = data;
    auto bytes = encode(fh);
    EXPECT_EQ(bytes, (std::vector<uint8_t>{0, 0, 0, 5, 'a', 'b', 'c', 'd', 'e', 0, 0, 0}));
    xdr::Decoder d(bytes);
    n3::nfs_fh3 back;
    ASSERT_TRUE(xdr_decode(d, back));
    ASSERT_EQ(back.data.size(), 5u);
    EXPECT_EQ(back.data.data(), bytes.data() + 4) << "opaque must borrow, not copy";
    EXPECT_EQ(d.remaining(), 0u);
}

TEST(XdrCodec, BoundedOpaqueRejectsOverlongLength) {
    // nfs_fh3 is opaque<64>: a length of 65 is garbage even when the bytes are there.
    std::vector<uint8_t> bytes = be({65});
    bytes.resize(4 + 68, 0);
    xdr::Decoder d(bytes);
    n3::nfs_fh3 fh;
    EXPECT_FALSE(xdr_decode(d, fh));
}

TEST(XdrCodec, TruncatedInputFails) {
    auto bytes = be({3});  // a 3-byte opaque with no data
    xdr::Decoder d(bytes);
    n3::nfs_fh3 fh;
    EXPECT_FALSE(xdr_decode(d, fh));
}

TEST(XdrCodec, BoolOtherThanZeroOrOneIsGarbage) {
    auto bytes = be({2});
    xdr::Decoder d(bytes);
    n3::post_op_attr a;
    EXPECT_FALSE(xdr_decode(d, a));
}

// Once a read fails, nothing more is read, though words remain: the decoder's bounds check
// alone must turn every later read away (Decoder::fail leaves nothing to read).
TEST(XdrCodec, AFailedDecoderReadsNothingMore) {
    auto bytes = be({2, 7, 8, 0});  // a bool that is not one, then words that would decode
    xdr::Decoder d(bytes);
    (void)d.get_bool();
    ASSERT_FALSE(d.ok());
    EXPECT_EQ(d.get_u32(), 0u);
    EXPECT_TRUE(d.get_fixed(4).empty());
    EXPECT_TRUE(d.get_opaque(16).empty());
    EXPECT_EQ(d.remaining(), 0u);
    EXPECT_FALSE(d.ok());

    xdr::Decoder over(bytes);
    EXPECT_TRUE(over.get_opaque(1).empty());  // a length of 2 over a bound of 1
    ASSERT_FALSE(over.ok());
    EXPECT_EQ(over.get_u32(), 0u);
    EXPECT_FALSE(over.ok());
}

TEST(XdrCodec, UnionEncodesOnlyTheSelectedArm) {
    n3::GETATTR3res r;
    EXPECT_EQ(r.status(), n3::NFS3_OK) << "a default union holds discriminant 0 and its arm";
    r.resok().obj_attributes.size = 1234;
    r.set_status(n3::NFS3ERR_STALE);  // the void default arm: resok is gone
    EXPECT_THROW(r.resok(), std::bad_variant_access);
    EXPECT_EQ(encode(r), be({70}));
    r.set_status(n3::NFS3_OK);
    EXPECT_EQ(r.resok().obj_attributes.size, 0u) << "a newly selected arm starts empty";
    r.resok().obj_attributes.type = n3::NF3REG;
    r.resok().obj_attributes.size = 0x100000002ull;
    r.set_status(n3::NFS3_OK);  // the same arm: kept
    auto bytes = encode(r);
    ASSERT_EQ(bytes.size(), 4u + 84u);  // fattr3 is 84 bytes (RFC 1813 §2.6)
    xdr::Decoder d(bytes);
    n3::GETATTR3res back;
    ASSERT_TRUE(xdr_decode(d, back));
    EXPECT_EQ(back.resok().obj_attributes.size, 0x100000002ull);
    EXPECT_EQ(back.resok().obj_attributes.type, n3::NF3REG);
}

TEST(XdrCodec, UnionWithoutDefaultRejectsUnknownDiscriminant) {
    auto bytes = be({7});  // createmode3 7 does not exist
    xdr::Decoder d(bytes);
    n3::createhow3 how;
    EXPECT_FALSE(xdr_decode(d, how));
}

// RFC 4506 §4.3: an enum holds only the values its declaration lists.
TEST(XdrCodec, EnumOutsideItsDeclarationIsGarbage) {
    // WRITE3args: handle, offset, count, stable_how, data<>.
    auto write_args = [](uint32_t stable) {
        return be({4, 0x01020304, 0, 0, 3, stable, 3, 0x61626300});
    };
    for (uint32_t stable : {0u, 1u, 2u}) {
        auto bytes = write_args(stable);
        xdr::Decoder d(bytes);
        n3::WRITE3args w;
        EXPECT_TRUE(xdr_decode(d, w)) << "stable_how " << stable;
        EXPECT_EQ(static_cast<uint32_t>(w.stable), stable);
    }
    for (uint32_t stable : {3u, 7u, 0xffffffffu}) {
        auto bytes = write_args(stable);
        xdr::Decoder d(bytes);
        n3::WRITE3args w;
        EXPECT_FALSE(xdr_decode(d, w)) << "stable_how " << stable;
        EXPECT_FALSE(d.ok());
    }
    // An enum discriminant with a default arm is still closed: ftype3 has no 0 or 8.
    for (uint32_t type : {0u, 8u}) {
        auto bytes = be({type});
        xdr::Decoder d(bytes);
        n3::mknoddata3 m;
        EXPECT_FALSE(xdr_decode(d, m)) << "ftype3 " << type;
    }
    // Sparse enums: nfsstat3 has 10001 (NFS3ERR_BADHANDLE) but not 10000.
    auto ok = be({10001, 0});
    xdr::Decoder d1(ok);
    n3::GETATTR3res r;
    EXPECT_TRUE(xdr_decode(d1, r));
    auto bad = be({10000, 0});
    xdr::Decoder d2(bad);
    EXPECT_FALSE(xdr_decode(d2, r));
}

// RFC 5531 §8.2: auth flavors are an open set; an unknown one decodes (and is then
// answered AUTH_BADCRED by the credential check, not GARBAGE_ARGS).
TEST(XdrCodec, AuthFlavorStaysOpen) {
    auto bytes = be({390004, 0});
    xdr::Decoder d(bytes);
    xdr::rpc::opaque_auth a;
    ASSERT_TRUE(xdr_decode(d, a));
    EXPECT_EQ(a.flavor, 390004u);
}

// The generated table of every procedure's codecs (xdrgen's proc_codecs()).
TEST(XdrCodec, ProcCodecTableCoversEveryProcedure) {
    EXPECT_EQ(n3::proc_codecs().size(), 22u);
    EXPECT_EQ(xdr::mount::proc_codecs().size(), 12u);
    const xdr::ProcCodec* write = nullptr;
    for (const auto& pc : n3::proc_codecs())
        if (pc.proc == n3::NFSPROC3_WRITE) write = &pc;
    ASSERT_NE(write, nullptr);
    EXPECT_STREQ(write->name, "NFSPROC3_WRITE");
    auto args = be({4, 0x01020304, 0, 0, 3, 2, 3, 0x61626300});
    std::vector<uint8_t> out;
    ASSERT_TRUE(write->args(args, out));
    EXPECT_EQ(out, args);
    args[5 * 4 + 3] = 7;  // stable_how 7
    out.clear();
    EXPECT_FALSE(write->args(args, out));
    // MOUNT's MNT takes a bare dirpath (a typedef'd string).
    const auto& mnt = xdr::mount::proc_codecs()[xdr::mount::MOUNTPROC_MNT];
    auto path = be({2, 0x2f780000});
    out.clear();
    ASSERT_TRUE(mnt.args(path, out));
    EXPECT_EQ(out, path);
    EXPECT_EQ(n3::proc_codecs()[n3::NFSPROC3_NULL].args, nullptr);
}

TEST(XdrCodec, LinkedListsBecomeVectors) {
    // dirlist3: entry3 *entries ... each entry introduced by TRUE, ended by FALSE, then eof.
    n3::dirlist3 list;
    for (uint64_t i = 1; i <= 3; ++i) {
        n3::entry3 e;
        e.fileid = i;
        e.name = i == 1 ? "a" : i == 2 ? "bb" : "ccc";
        e.cookie = i * 10;
        list.entries.push_back(e);
    }
    list.eof = true;
    auto bytes = encode(list);
    std::vector<uint8_t> want;
    auto add = [&](std::vector<uint8_t> v) { want.insert(want.end(), v.begin(), v.end()); };
    add(be({1, 0, 1, 1, 'a' << 24, 0, 10}));
    add(be({1, 0, 2, 2, ('b' << 24) | ('b' << 16), 0, 20}));
    add(be({1, 0, 3, 3, ('c' << 24) | ('c' << 16) | ('c' << 8), 0, 30}));
    add(be({0, 1}));
    EXPECT_EQ(bytes, want);
    xdr::Decoder d(bytes);
    n3::dirlist3 back;
    ASSERT_TRUE(xdr_decode(d, back));
    ASSERT_EQ(back.entries.size(), 3u);
    EXPECT_EQ(back.entries[2].name, "ccc");
    EXPECT_TRUE(back.eof);
}

TEST(XdrCodec, LongListsDoNotRecurse) {
    n3::dirlist3 list;
    for (uint64_t i = 0; i < 200000; ++i) list.entries.push_back({i, "x", i});
    auto bytes = encode(list);
    xdr::Decoder d(bytes);
    n3::dirlist3 back;
    ASSERT_TRUE(xdr_decode(d, back));
    EXPECT_EQ(back.entries.size(), 200000u);
}

TEST(XdrCodec, VariableArrayBoundIsEnforced) {
    // authsys_parms gids<16>: 17 groups are garbage.
    std::vector<uint8_t> bytes = be({0, 0, 0, 0, 17});
    for (int i = 0; i < 17; ++i) bytes.resize(bytes.size() + 4, 0);
    xdr::Decoder d(bytes);
    xdr::rpc::authsys_parms p;
    EXPECT_FALSE(xdr_decode(d, p));
}

TEST(XdrCodec, HugeArrayCountIsRejectedBeforeAllocating) {
    // mountres3_ok: an empty handle, then an auth_flavors<> count of ~4 billion.
    auto bytes = be({0, 0xfffffff0, 1});
    xdr::Decoder d(bytes);
    xdr::mount::mountres3_ok r;
    EXPECT_FALSE(xdr_decode(d, r));
    EXPECT_TRUE(r.auth_flavors.empty());
}

TEST(XdrCodec, ExternalOpaqueIsRecordedNotCopied) {
    std::vector<uint8_t> payload(5000, 0x5a);
    n3::READ3res r;
    r.set_status(n3::NFS3_OK);
    r.resok().count = 5000;
    r.resok().eof = true;
    r.resok().data = payload;
    std::vector<uint8_t> out;
    xdr::Encoder e(out);
    e.add_external(r.resok().data);
    xdr_encode(e, r);
    ASSERT_EQ(e.externals().size(), 1u);
    EXPECT_EQ(e.externals()[0].data.data(), payload.data());
    // status, post_op_attr FALSE, count, eof, length; then (out of line) 5000 bytes
    // whose XDR padding is 0 bytes.
    EXPECT_EQ(out.size(), 20u);
    EXPECT_EQ(e.externals()[0].offset, 20u);
    EXPECT_EQ(e.externals()[0].pad, 0u);
}

// The first mark is held inline and any more in a list (xdr.h): each marked span, and
// only a marked one, is taken out of line once, whichever slot held it; an unmarked
// opaque with the same bytes elsewhere is copied.
TEST(XdrCodec, SeveralMarkedOpaquesAreEachTakenOnce) {
    std::vector<uint8_t> a(8, 1), b(12, 2), c(4, 3);
    std::vector<uint8_t> out;
    xdr::Encoder e(out);
    e.add_external(a);
    e.add_external(b);
    e.add_external(std::span<const uint8_t>(a).first(4));  // another span of a's bytes
    e.put_opaque(b);
    e.put_opaque(c);  // not marked: inline
    e.put_opaque(a);
    e.put_opaque(a);  // marked once: the second goes inline
    e.put_opaque(std::span<const uint8_t>(a).first(4));
    ASSERT_EQ(e.externals().size(), 3u);
    EXPECT_EQ(e.externals()[0].data.data(), b.data());
    EXPECT_EQ(e.externals()[1].data.data(), a.data());
    EXPECT_EQ(e.externals()[1].data.size(), 8u);
    EXPECT_EQ(e.externals()[2].data.size(), 4u);
    // lengths 5 x 4, c inline 4, the second a inline 8
    EXPECT_EQ(out.size(), 20u + 4u + 8u);
    auto taken = e.take_externals();
    EXPECT_EQ(taken.size(), 3u);
    EXPECT_TRUE(e.externals().empty());
}

TEST(XdrCodec, ReadChunkSuppliesOpaqueData) {
    // WRITE3args whose data travelled in a read chunk (RFC 8166 §3.4.5): the
    // length is inline; the bytes, and their padding, are not.
    std::vector<uint8_t> fh = be({4, 0x01020304});
    std::vector<uint8_t> args = fh;
    auto tail = be({0, 100, 3, 2, 3});  // offset(hyper), count, stable, data length 3
    args.insert(args.end(), tail.begin(), tail.end());
    const uint8_t chunk[] = {'x', 'y', 'z'};
    const size_t base = 40;  // pretend the args start 40 bytes into the RPC message
    xdr::Decoder d(args, base);
    const std::vector<xdr::ReadChunk> chunks{{base + args.size(), chunk}};
    d.set_read_chunks(chunks);
    n3::WRITE3args w;
    ASSERT_TRUE(xdr_decode(d, w));
    EXPECT_EQ(d.unconsumed_chunks(), 0u);
    EXPECT_EQ(w.offset, 100u);
    EXPECT_EQ(w.data.data(), chunk);
    EXPECT_EQ(w.data.size(), 3u);
}
