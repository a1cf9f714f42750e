// How the TCP sender walks a reply (transport/tcp/reply_pieces.h): inline bytes and each
// payload segment in stream order, a payload's spliced head as a pipe piece.
#include <gtest/gtest.h>

#include "transport/tcp/reply_pieces.h"

using namespace nfsrdmad;

namespace {

// A payload buffer whose first `spliced` bytes wait in a pipe (fd `pipe`).
class FakePayload : public rpc::PayloadBuffer {
  public:
    FakePayload(size_t n, size_t spliced, int pipe)
        : bytes_(n, 7), spliced_(spliced), pipe_(pipe) {}
    uint8_t* data() override { return bytes_.data(); }
    size_t capacity() const override { return bytes_.size(); }
    size_t spliced() const override { return spliced_; }
    int spliced_source() const override { return pipe_; }

  private:
    std::vector<uint8_t> bytes_;
    size_t spliced_;
    int pipe_;
};

// A reply of inline bytes 0..`inline_len` with payload i (of sizes[i] bytes, `spliced[i]`
// of them piped) standing at offsets[i].
rpc::Reply make(size_t inline_len, std::vector<size_t> offsets, std::vector<size_t> sizes,
                std::vector<size_t> spliced) {
    rpc::Reply r;
    r.bytes.assign(inline_len, 1);
    for (size_t i = 0; i < sizes.size(); ++i) {
        auto b = std::make_unique<FakePayload>(sizes[i], spliced[i], 100 + int(i));
        r.payloads.push_back({offsets[i], {b->data(), sizes[i]}, xdr::pad4(sizes[i])});
        r.payload_owners.push_back(std::move(b));
    }
    return r;
}

}  // namespace

TEST(TcpReplyPieces, NoPayloadIsMarkThenBytes) {
    uint8_t mark[4] = {};
    rpc::Reply r;
    r.bytes.assign(28, 1);
    auto v = tcp::reply_pieces(mark, r);
    ASSERT_EQ(v.size(), 2u);
    EXPECT_EQ(v[0].data, mark);
    EXPECT_EQ(v[1].data, r.bytes.data());
    EXPECT_EQ(v[1].size, 28u);
}

// Two payloads from memory, 5 and 8 bytes, at 20 and 32 (the first's 3 pad bytes are in
// the inline bytes at 20..23): mark, [0,20), p1, [20,32), p2, [32,40).
TEST(TcpReplyPieces, PayloadsInStreamOrderFromWhereTheyAre) {
    uint8_t mark[4] = {};
    auto r = make(40, {20, 32}, {5, 8}, {0, 0});
    auto v = tcp::reply_pieces(mark, r);
    ASSERT_EQ(v.size(), 6u);
    EXPECT_EQ(v[1].size, 20u);
    EXPECT_EQ(v[2].data, r.payload_owners[0]->data());
    EXPECT_TRUE(v[2].payload);
    EXPECT_EQ(v[2].size, 5u);
    EXPECT_EQ(v[3].data, r.bytes.data() + 20);
    EXPECT_EQ(v[3].size, 12u);
    EXPECT_EQ(v[4].data, r.payload_owners[1]->data());
    EXPECT_EQ(v[4].size, 8u);
    EXPECT_EQ(v[5].data, r.bytes.data() + 32);
    EXPECT_EQ(v[5].size, 8u);
    size_t total = 0;
    for (auto& p : v) total += p.size;
    EXPECT_EQ(total, 4u + 40 + 5 + 8);
}

// The first payload wholly in its pipe, the second half in its pipe and half in memory.
TEST(TcpReplyPieces, SplicedHeadsArePipePieces) {
    uint8_t mark[4] = {};
    auto r = make(40, {20, 32}, {5, 8}, {5, 4});
    auto v = tcp::reply_pieces(mark, r);
    ASSERT_EQ(v.size(), 7u);
    EXPECT_EQ(v[2].pipe, 100);
    EXPECT_EQ(v[2].size, 5u);
    EXPECT_EQ(v[2].data, nullptr);
    EXPECT_EQ(v[4].pipe, 101);
    EXPECT_EQ(v[4].size, 4u);
    EXPECT_EQ(v[5].pipe, -1);
    EXPECT_EQ(v[5].data, r.payload_owners[1]->data() + 4);
    EXPECT_EQ(v[5].size, 4u);
    EXPECT_TRUE(v[5].payload);
}
