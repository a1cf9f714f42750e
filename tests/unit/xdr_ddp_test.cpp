// Several direct-data-placement items in one XDR stream (RFC 8166 §3.4.5, §3.4.6):
// a Decoder fed from several read chunks, an Encoder that leaves several opaques out.
#include <gtest/gtest.h>

#include <cstring>

#include "tests/unit/xdr_bytes.h"
#include "xdr/runtime/xdr.h"

using namespace nfsrdmad;
using xdr::testing::be;

namespace {

std::span<const uint8_t> text(const char* s) {
    return {reinterpret_cast<const uint8_t*>(s), std::strlen(s)};
}

}  // namespace

// Inline: [A][len 3][B][len 5][len 4][C], the three opaques' data in read chunks. The
// chunks' positions count the whole stream, earlier items in place (data and pad):
//   A@40 len@44 data@48(3+1) B@52 len@56 data@60(5+3) len@68 data@72(4) C@76
TEST(XdrDdp, ThreeReadChunksFeedThreeOpaquesInOrder) {
    const auto args = be({7, 3, 8, 5, 4, 9});
    const char *a = "xyz", *b = "hello", *c = "abcd";
    const std::vector<xdr::ReadChunk> chunks{{48, text(a)}, {60, text(b)}, {72, text(c)}};
    xdr::Decoder d(args, 40);
    d.set_read_chunks(chunks);
    EXPECT_EQ(d.get_u32(), 7u);
    auto o1 = d.get_opaque(100);
    EXPECT_EQ(d.get_u32(), 8u);
    auto o2 = d.get_opaque(100);
    auto o3 = d.get_opaque(100);
    EXPECT_EQ(d.get_u32(), 9u);
    ASSERT_TRUE(d.ok());
    EXPECT_EQ(d.remaining(), 0u);
    EXPECT_EQ(d.unconsumed_chunks(), 0u);
    EXPECT_EQ(o1.data(), chunks[0].data.data());
    EXPECT_EQ(o2.data(), chunks[1].data.data());
    EXPECT_EQ(o3.data(), chunks[2].data.data());
    EXPECT_EQ(o2.size(), 5u);
    // The stream as sent: 40 bytes before, 24 inline, the chunks' 3+1, 5+3 and 4 (the
    // size NFSv4.1 holds against ca_maxrequestsize), wherever decoding stands.
    EXPECT_EQ(d.stream_size(), 40u + 24u + 4u + 8u + 4u);
    xdr::Decoder fresh(args, 40);
    EXPECT_EQ(fresh.stream_size(), 64u);
}

// A chunk at a position no opaque reaches (beyond the arguments): decoding succeeds,
// and the caller sees the chunk was not used (RFC 8166 §4.5.2: GARBAGE_ARGS).
TEST(XdrDdp, ChunkNoOpaqueReachesIsReported) {
    const auto args = be({3, 9});  // [len 3][C]; data@4 (3+1), C@8
    const std::vector<xdr::ReadChunk> chunks{{4, text("xyz")}, {100, text("zz")}};
    xdr::Decoder d(args);
    d.set_read_chunks(chunks);
    EXPECT_EQ(d.get_opaque(100).data(), chunks[0].data.data());
    EXPECT_EQ(d.get_u32(), 9u);
    EXPECT_TRUE(d.ok());
    EXPECT_EQ(d.unconsumed_chunks(), 1u);
}

// A chunk positioned inside a fixed-size item: the next opaque is already past it.
TEST(XdrDdp, ChunkInsideAnotherItemFailsTheDecode) {
    const auto args = be({1, 2, 2, 0x61620000});                 // [A][B][len 2]['ab' pad]
    const std::vector<xdr::ReadChunk> chunks{{4, text("xyz")}};  // B's position
    xdr::Decoder d(args);
    d.set_read_chunks(chunks);
    d.get_u32();
    d.get_u32();
    d.get_opaque(100);
    EXPECT_FALSE(d.ok());
    EXPECT_EQ(d.unconsumed_chunks(), 1u);
}

TEST(XdrDdp, ChunkShorterThanItsOpaqueFailsTheDecode) {
    const auto args = be({6});
    const std::vector<xdr::ReadChunk> chunks{{4, text("xyz")}};
    xdr::Decoder d(args);
    d.set_read_chunks(chunks);
    d.get_opaque(100);
    EXPECT_FALSE(d.ok());
}

// Without chunks, opaques decode inline as ever.
TEST(XdrDdp, NoChunksMeansInline) {
    const auto args = be({2, 0x61620000});
    xdr::Decoder d(args);
    auto o = d.get_opaque(100);
    ASSERT_TRUE(d.ok());
    EXPECT_EQ(o.size(), 2u);
    EXPECT_EQ(o.data(), args.data() + 4);
    EXPECT_EQ(d.unconsumed_chunks(), 0u);
}

// Three opaques marked external (one marked before the others, out of stream order),
// one not: three segments in stream order, the unmarked one copied inline.
TEST(XdrDdp, EncoderRecordsEveryMarkedOpaqueInStreamOrder) {
    std::vector<uint8_t> p1(5, 1), p2(4, 2), p3(7, 3), p4(8, 4);
    std::vector<uint8_t> out;
    xdr::Encoder e(out);
    e.add_external(p4);
    e.add_external(p1);
    e.add_external(p3);
    e.put_u32(0xaa);   // 0..4
    e.put_opaque(p1);  // len 4..8, data out (pad 3 at 8..11)
    e.put_opaque(p2);  // len 11..15, data inline 15..19
    e.put_opaque(p3);  // len 19..23, data out (pad 1 at 23..24)
    e.put_opaque(p4);  // len 24..28, data out (no pad)
    e.put_u32(0xbb);   // 28..32
    const auto& x = e.externals();
    ASSERT_EQ(x.size(), 3u);
    EXPECT_EQ(x[0].data.data(), p1.data());
    EXPECT_EQ(x[0].offset, 8u);
    EXPECT_EQ(x[0].pad, 3u);
    EXPECT_EQ(x[1].data.data(), p3.data());
    EXPECT_EQ(x[1].offset, 23u);
    EXPECT_EQ(x[1].pad, 1u);
    EXPECT_EQ(x[2].data.data(), p4.data());
    EXPECT_EQ(x[2].offset, 28u);
    EXPECT_EQ(x[2].pad, 0u);
    EXPECT_EQ(out.size(), 32u);
    EXPECT_EQ(out[15], 2) << "the unmarked opaque is copied inline";
}

// A mark is for exactly its span: another opaque stays inline, and a marked span never
// encoded leaves no segment behind.
TEST(XdrDdp, UnusedMarksDoNotLeak) {
    std::vector<uint8_t> p(4, 1), q(4, 2);
    std::vector<uint8_t> out;
    xdr::Encoder e(out);
    e.add_external(q);
    e.put_opaque(p);
    EXPECT_TRUE(e.externals().empty());
    EXPECT_EQ(out.size(), 8u);
}
