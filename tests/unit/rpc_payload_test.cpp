// Reply payloads through the dispatcher (transport/rpc): several per reply, every buffer
// a procedure asked for alive until the reply is sent, read chunks that match no
// argument answered GARBAGE_ARGS (RFC 8166 §4.5.2), and no reply with payloads cached.
#include <gtest/gtest.h>

#include <cstring>

#include "transport/rpc/dispatcher.h"
#include "xdr/rpc_prot.h"

using namespace nfsrdmad;
namespace x = xdr::rpc;

namespace {

std::vector<uint8_t> words(std::initializer_list<uint32_t> ws) {
    std::vector<uint8_t> b;
    for (uint32_t w : ws)
        for (int s = 24; s >= 0; s -= 8) b.push_back(uint8_t(w >> s));
    return b;
}

// xid, CALL, rpcvers 2, prog 400100, vers 1, proc, AUTH_NONE credential and verifier:
// the arguments start 40 bytes into the message.
std::vector<uint8_t> call(uint32_t xid, uint32_t proc, std::initializer_list<uint32_t> args) {
    auto b = words({xid, 0, 2, 400100, 1, proc, 0, 0, 0, 0});
    auto a = words(args);
    b.insert(b.end(), a.begin(), a.end());
    return b;
}

// Heap memory that counts how many of its kind are alive.
class CountedBuffer : public rpc::PayloadBuffer {
  public:
    CountedBuffer(size_t n, int& live) : bytes_(n), live_(live) { ++live_; }
    ~CountedBuffer() override { --live_; }
    uint8_t* data() override { return bytes_.data(); }
    size_t capacity() const override { return bytes_.size(); }

  private:
    std::vector<uint8_t> bytes_;
    int& live_;
};

class CountingAlloc : public rpc::PayloadAllocator {
  public:
    std::unique_ptr<rpc::PayloadBuffer> allocate(size_t bytes) override {
        if (given == limit) return nullptr;
        ++given;
        return std::make_unique<CountedBuffer>(bytes, live);
    }
    int live = 0;
    int given = 0;
    int limit = 100;
};

// proc 0 (idempotent) and proc 2 (not): READ-like results with `n` payloads, each in a
// buffer of its own filled with 'a', 'b', ...; proc 1: one opaque argument, echoed.
class PayloadProgram : public rpc::Program {
  public:
    uint32_t number() const override { return 400100; }
    std::vector<uint32_t> versions() const override { return {1}; }
    rpc::ProcedureInfo procedure(uint32_t, uint32_t proc) const override {
        return {proc <= 2, proc != 2, "payload"};
    }
    rpc::Outcome call(rpc::CallContext& ctx) override {
        ++calls;
        if (ctx.header.proc == 1) {
            auto o = ctx.args.get_opaque(1000);
            if (!ctx.args.ok()) return rpc::Outcome::garbage();
            ctx.res.put_opaque(o);
            return rpc::Outcome::ok();
        }
        const uint32_t n = ctx.args.get_u32();
        std::vector<std::span<const uint8_t>> data;
        for (uint32_t i = 0; i < n; ++i) {
            rpc::PayloadBuffer* b = ctx.payload_buffer(10 + i);
            if (!b) {
                ctx.res.put_u32(0);  // as NFS3ERR_JUKEBOX: fewer results
                break;
            }
            std::memset(b->data(), 'a' + int(i), 10 + i);
            data.push_back({b->data(), 10 + i});
            ctx.res.add_external(data.back());
        }
        // Encoded after every buffer was asked for: a buffer freed by a later request
        // would be read here (and by the test) after it is gone.
        for (auto d : data) ctx.res.put_opaque(d);
        return rpc::Outcome::ok();
    }
    int calls = 0;
};

struct Fixture : ::testing::Test {
    Fixture() {
        prog = std::make_shared<PayloadProgram>();
        d.add(prog);
        peer.text = "192.0.2.1:800";
    }
    std::optional<rpc::Reply> send(const std::vector<uint8_t>& bytes,
                                   std::vector<xdr::ReadChunk> chunks = {}) {
        rpc::Message m;
        m.bytes = bytes;
        m.read_chunks = std::move(chunks);
        return d.dispatch(m, peer, alloc);
    }
    x::accept_stat stat(const rpc::Reply& r) {
        xdr::Decoder dec(r.bytes);
        x::rpc_msg m;
        EXPECT_TRUE(x::xdr_decode(dec, m));
        return m.body.rbody().areply().reply_data.stat();
    }
    std::shared_ptr<PayloadProgram> prog;
    rpc::Dispatcher d;
    rpc::Peer peer;
    CountingAlloc alloc;
};

}  // namespace

TEST_F(Fixture, EveryPayloadBufferLivesUntilTheReplyIsGone) {
    auto r = send(call(1, 0, {3}));
    ASSERT_TRUE(r);
    EXPECT_EQ(stat(*r), x::SUCCESS);
    ASSERT_EQ(r->payloads.size(), 3u);
    size_t last = 0;
    for (size_t i = 0; i < 3; ++i) {
        const auto& p = r->payloads[i];
        ASSERT_EQ(p.data.size(), 10 + i);
        // Read through the segment first: under ASan, a freed buffer fails here.
        for (uint8_t c : p.data) ASSERT_EQ(c, 'a' + i);
        EXPECT_GT(p.offset, last) << "stream order";
        last = p.offset;
    }
    EXPECT_EQ(alloc.live, 3) << "no buffer freed while its bytes are referenced";
    ASSERT_EQ(r->payload_owners.size(), 3u);
    for (size_t i = 0; i < 3; ++i)
        EXPECT_EQ(r->payloads[i].data.data(), r->payload_owners[i]->data());
    r.reset();
    EXPECT_EQ(alloc.live, 0);
}

TEST_F(Fixture, AFailedAllocationKeepsTheEarlierBuffers) {
    alloc.limit = 1;
    auto r = send(call(2, 0, {2}));
    ASSERT_TRUE(r);
    EXPECT_EQ(alloc.live, 1);
    ASSERT_EQ(r->payloads.size(), 1u);
    for (uint8_t c : r->payloads[0].data) ASSERT_EQ(c, 'a');
}

TEST_F(Fixture, ReadChunksFeedTheArguments) {
    const std::vector<uint8_t> data{'x', 'y', 'z'};
    // The opaque's length word is at 40, its data at 44.
    auto r = send(call(3, 1, {3}), {{44, data}});
    ASSERT_TRUE(r);
    EXPECT_EQ(stat(*r), x::SUCCESS);
    EXPECT_EQ(d.counters().garbage_args.load(), 0u);
    EXPECT_EQ(r->bytes.back(), 0) << "pad";
    EXPECT_EQ(r->bytes[r->bytes.size() - 4], 'x');
}

TEST_F(Fixture, AReadChunkNoArgumentReachesIsGarbageArgs) {
    const std::vector<uint8_t> data{'x', 'y', 'z'}, more{'q'};
    auto r = send(call(4, 1, {3}), {{44, data}, {200, more}});
    ASSERT_TRUE(r);
    EXPECT_EQ(stat(*r), x::GARBAGE_ARGS);
    EXPECT_EQ(d.counters().garbage_args.load(), 1u);
    EXPECT_TRUE(r->payloads.empty());
}

TEST_F(Fixture, RepliesWithPayloadsAreNotCached) {
    auto msg = call(5, 2, {2});
    ASSERT_TRUE(send(msg));
    ASSERT_TRUE(send(msg));
    EXPECT_EQ(prog->calls, 2) << "rerun: the cache holds no payloads to replay";
    EXPECT_EQ(d.counters().cache_replays.load(), 0u);
    // Without payloads the same procedure is cached and replayed.
    auto plain = call(6, 2, {0});
    ASSERT_TRUE(send(plain));
    ASSERT_TRUE(send(plain));
    EXPECT_EQ(prog->calls, 3);
    EXPECT_EQ(d.counters().cache_replays.load(), 1u);
}
