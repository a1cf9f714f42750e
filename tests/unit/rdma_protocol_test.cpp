// RPC-over-RDMA version 1 protocol logic (transport/rdma/protocol), without verbs:
// transport headers written out word by word as RFC 8166 §4 lays them out, hostile
// ones, and the plans the verbs layer would execute.
#include <gtest/gtest.h>

#include <algorithm>

#include "transport/rdma/protocol/call_plan.h"
#include "transport/rdma/protocol/credits.h"
#include "transport/rdma/protocol/header.h"
#include "transport/rdma/protocol/private_data.h"
#include "transport/rdma/protocol/read_budget.h"
#include "transport/rdma/protocol/reply_plan.h"
#include "transport/rdma/protocol/send_queue.h"

using namespace nfsrdmad::rdma;
namespace xdr = nfsrdmad::xdr;

namespace {

// A big-endian word writer for hand-made headers.
struct W {
    std::vector<uint8_t> b;
    W& u(uint32_t v) {
        for (int s = 24; s >= 0; s -= 8) b.push_back(uint8_t(v >> s));
        return *this;
    }
    W& seg(uint32_t handle, uint32_t len, uint64_t off) {
        return u(handle).u(len).u(uint32_t(off >> 32)).u(uint32_t(off));
    }
    W& bytes(size_t n, uint8_t v = 0) {
        b.insert(b.end(), n, v);
        return *this;
    }
};

constexpr uint32_t kXid = 0x11223344;

// xid, vers 1, credits 32, proc
W head(uint32_t proc, uint32_t vers = 1) {
    return W().u(kXid).u(vers).u(32).u(proc);
}

// An inline RPC call body starting with the same XID, `len` bytes in all.
W& rpc_body(W& w, size_t len) {
    w.u(kXid);
    w.bytes(len - 4, 0xab);
    return w;
}

const TransportHeader& ok(const ParseResult& r) {
    if (auto* e = std::get_if<HeaderError>(&r)) ADD_FAILURE() << "unexpected error: " << e->why;
    return std::get<TransportHeader>(r);
}

HeaderError::Answer refused(const ParseResult& r) {
    if (std::holds_alternative<TransportHeader>(r)) {
        ADD_FAILURE() << "header was accepted";
        return HeaderError::Ignore;
    }
    return std::get<HeaderError>(r).answer;
}

Limits limits;

}  // namespace

// ---- parsing -----------------------------------------------------------------------------------

TEST(RdmaHeader, ShortRdmaMsgWithNoChunks) {
    W w = head(0).u(0).u(0).u(0);  // empty read list, write list, no reply chunk
    rpc_body(w, 40);
    auto h = ok(parse_header(w.b, limits));
    EXPECT_EQ(h.xid, kXid);
    EXPECT_EQ(h.credits, 32u);
    EXPECT_EQ(h.type, MsgType::Msg);
    EXPECT_EQ(h.length, 28u);
    EXPECT_TRUE(h.reads.empty());
    EXPECT_TRUE(h.writes.empty());
    EXPECT_FALSE(h.reply);
}

TEST(RdmaHeader, WriteCallWithAMultiSegmentReadChunk) {
    // An NFS WRITE: the data is a read chunk at position 100, in two segments.
    W w = head(0);
    w.u(1).u(100).seg(7, 4096, 0x1000);
    w.u(1).u(100).seg(8, 100, 0x9000);
    w.u(0).u(0).u(0);
    rpc_body(w, 100);
    auto h = ok(parse_header(w.b, limits));
    ASSERT_EQ(h.reads.size(), 1u);
    EXPECT_EQ(h.reads[0].position, 100u);
    ASSERT_EQ(h.reads[0].segments.size(), 2u);
    EXPECT_EQ(h.reads[0].segments[1], (Segment{8, 100, 0x9000}));
    EXPECT_EQ(h.reads[0].length(), 4196u);
}

TEST(RdmaHeader, ReadCallWithWriteListAndReplyChunk) {
    W w = head(0).u(0);
    w.u(1).u(2).seg(5, 65536, 0xa000).seg(6, 65536, 0x2a000);  // one write chunk, 2 segments
    w.u(0);
    w.u(1).u(1).seg(9, 4096, 0xf000);  // reply chunk
    rpc_body(w, 92);
    auto h = ok(parse_header(w.b, limits));
    ASSERT_EQ(h.writes.size(), 1u);
    EXPECT_EQ(h.writes[0].capacity(), 131072u);
    ASSERT_TRUE(h.reply);
    EXPECT_EQ(h.reply->segments[0].handle, 9u);
}

TEST(RdmaHeader, NoMsgWithPositionZeroChunk) {
    W w = head(1).u(1).u(0).seg(3, 2000, 0x100).u(0).u(0).u(0);
    auto h = ok(parse_header(w.b, limits));
    EXPECT_EQ(h.type, MsgType::NoMsg);
    ASSERT_EQ(h.reads.size(), 1u);
    EXPECT_EQ(h.reads[0].position, 0u);
}

// A long call larger than one payload buffer but under the maximum message size: it can
// never be RDMA-Read anywhere, so it is refused on arrival (ERR_CHUNK), not parked
// waiting for a buffer that cannot exist.
TEST(RdmaHeader, LongCallLargerThanAPayloadBufferIsErrChunk) {
    const uint64_t buffer = (1u << 20) + 4096;  // the verbs layer's payload buffer
    const Limits fitted = fit_to_buffer(Limits{}, buffer);
    EXPECT_EQ(fitted.max_call, buffer);
    EXPECT_LE(fitted.max_transfer, buffer);
    EXPECT_EQ(fitted.max_message, Limits{}.max_message);  // reply chunks are staged in pieces
    const uint32_t too_big = (1u << 20) + 8192;
    ASSERT_LT(too_big, Limits{}.max_call);  // the case the unfitted limits let through
    W big = head(1).u(1).u(0).seg(3, too_big, 0x100).u(0).u(0).u(0);
    EXPECT_EQ(refused(parse_header(big.b, fitted)), HeaderError::ErrChunk);
    W fits = head(1).u(1).u(0).seg(3, uint32_t(buffer), 0x100).u(0).u(0).u(0);
    EXPECT_EQ(ok(parse_header(fits.b, fitted)).reads[0].length(), buffer);
}

TEST(RdmaHeader, MsgpIsProcessedAsMsg) {
    W w = head(2).u(0).u(0).u(0).u(0).u(0);  // align, thresh, empty lists
    rpc_body(w, 24);
    auto h = ok(parse_header(w.b, limits));
    EXPECT_EQ(h.type, MsgType::Msg);
    EXPECT_EQ(h.length, 36u);
}

TEST(RdmaHeader, WrongVersionIsErrVers) {
    W w = head(0, 2).u(0).u(0).u(0);
    auto r = parse_header(w.b, limits);
    EXPECT_EQ(refused(r), HeaderError::ErrVers);
    EXPECT_EQ(std::get<HeaderError>(r).xid, kXid);
}

TEST(RdmaHeader, DoneErrorAndRunts) {
    EXPECT_EQ(refused(parse_header(head(3).b, limits)), HeaderError::Ignore);
    EXPECT_EQ(refused(parse_header(head(4).u(2).b, limits)), HeaderError::Ignore);
    EXPECT_EQ(refused(parse_header(W().u(1).u(1).b, limits)), HeaderError::Ignore);
    // The peer's RDMA_ERROR and RDMA_DONE are not answered even when what follows their
    // procedure does not decode: no body, ERR_VERS without its range, an unknown code.
    EXPECT_EQ(refused(parse_header(head(4).b, limits)), HeaderError::Ignore);
    EXPECT_EQ(refused(parse_header(head(4).u(1).b, limits)), HeaderError::Ignore);
    EXPECT_EQ(refused(parse_header(head(4).u(7).b, limits)), HeaderError::Ignore);
    EXPECT_EQ(refused(parse_header(head(3).u(99).b, limits)), HeaderError::Ignore);
}

// RFC 8166 §4.1.1: the transport XID is the RPC message's; an RDMA_NOMSG call is checked
// with xid_matches once its message is pulled (verbs/receive.cpp dispatch).
TEST(RdmaHeader, TheXidOfAPulledMessageIsChecked) {
    const uint8_t msg[] = {0x12, 0x34, 0x56, 0x78, 0, 0, 0, 0};
    EXPECT_TRUE(xid_matches(msg, 0x12345678u));
    EXPECT_FALSE(xid_matches(msg, 0x12345679u));
    EXPECT_FALSE(xid_matches(std::span<const uint8_t>(msg, 3), 0x12345678u));
}

TEST(RdmaHeader, MalformedHeadersAreErrChunk) {
    struct Case {
        const char* what;
        W w;
    };
    std::vector<Case> cases;
    cases.push_back({"unknown procedure", head(9).u(0).u(0).u(0)});
    cases.push_back({"truncated read list", head(0).u(1).u(8)});
    cases.push_back({"list flag 2", head(0).u(2).u(0).u(0)});
    cases.push_back({"unterminated write list", head(0).u(0).u(1).u(1).seg(1, 8, 0)});
    {
        W w = head(0).u(1).u(6).seg(1, 8, 0).u(0).u(0).u(0);
        rpc_body(w, 16);
        cases.push_back({"unaligned position", w});
    }
    {
        W w = head(0).u(1).u(16).seg(1, 8, 0).u(1).u(8).seg(2, 8, 0).u(0).u(0).u(0);
        rpc_body(w, 32);
        cases.push_back({"descending positions", w});
    }
    {
        W w = head(0).u(1).u(400).seg(1, 8, 0).u(0).u(0).u(0);
        rpc_body(w, 32);
        cases.push_back({"position beyond the inline message", w});
    }
    {
        W w = head(0).u(1).u(0).seg(1, 8, 0).u(0).u(0).u(0);
        rpc_body(w, 32);
        cases.push_back({"position zero in RDMA_MSG", w});
    }
    {
        W w = head(0).u(1).u(8).seg(1, (1u << 20) + 4, 0).u(0).u(0).u(0);
        rpc_body(w, 32);
        cases.push_back({"read chunk over the transfer limit", w});
    }
    {
        W w = head(0).u(0).u(1).u(65);
        for (int i = 0; i < 65; ++i) w.seg(1, 8, 0);
        w.u(0).u(0);
        rpc_body(w, 32);
        cases.push_back({"65 segments in a write chunk", w});
    }
    {
        W w = head(0).u(0);
        for (int i = 0; i < 5; ++i) w.u(1).u(1).seg(1, 8, 0);
        w.u(0).u(0);
        rpc_body(w, 32);
        cases.push_back({"5 write chunks", w});
    }
    {
        W w = head(0).u(0).u(1).u(0).u(0).u(0);
        rpc_body(w, 32);
        cases.push_back({"write chunk without segments", w});
    }
    {
        W w = head(0).u(0).u(0).u(1).u(2).seg(1, 0xffffffff, 0).seg(2, 0xffffffff, 0);
        rpc_body(w, 32);
        cases.push_back({"reply chunk lengths that overflow 32 bits", w});
    }
    {
        W w = head(0).u(0).u(0).u(0);
        w.u(kXid + 1).bytes(20);
        cases.push_back({"RPC XID differs", w});
    }
    cases.push_back({"RDMA_MSG without a message", head(0).u(0).u(0).u(0)});
    cases.push_back({"RDMA_NOMSG without position zero", head(1).u(0).u(0).u(0)});
    {
        // The first item, 16 bytes at 8, runs to 24: a chunk at 16 would start inside it.
        W w = head(0).u(1).u(8).seg(1, 16, 0).u(1).u(16).seg(1, 8, 0).u(0).u(0).u(0);
        rpc_body(w, 32);
        cases.push_back({"overlapping DDP chunks", w});
    }
    {
        W w = head(0);
        for (uint32_t i = 0; i < 9; ++i) w.u(1).u(4 + 8 * i).seg(1, 4, 0);
        w.u(0).u(0).u(0);
        rpc_body(w, 80);
        cases.push_back({"9 read chunks", w});
    }
    {
        // Two items each within the transfer limit, together over the per-call limit.
        W w = head(0).u(1).u(8).seg(1, 600000, 0).u(1).u(16).seg(2, 600000, 0);
        w.u(0).u(0).u(0);
        rpc_body(w, 32);
        cases.push_back({"read chunks over the per-call payload limit", w});
    }
    {
        // Beyond the inline message plus the items before it: 32 + 8 = 40 < 44.
        W w = head(0).u(1).u(8).seg(1, 8, 0).u(1).u(44).seg(2, 8, 0).u(0).u(0).u(0);
        rpc_body(w, 32);
        cases.push_back({"second position beyond the message and the first item", w});
    }
    {
        W w = head(1).u(1).u(0).seg(1, 64, 0).u(1).u(128).seg(2, 8, 0).u(0).u(0).u(0);
        cases.push_back({"second chunk beyond the position-zero chunk", w});
    }
    for (auto& c : cases) {
        auto r = parse_header(c.w.b, limits);
        EXPECT_EQ(refused(r), HeaderError::ErrChunk) << c.what;
        if (auto* e = std::get_if<HeaderError>(&r)) {
            EXPECT_FALSE(e->why.empty()) << c.what;
        }
    }
}

TEST(RdmaHeader, HugeSegmentCountsDoNotAllocate) {
    // A write chunk claiming 2^30 segments in a 60-byte message.
    W w = head(0).u(0).u(1).u(1u << 30).u(0).u(0);
    EXPECT_EQ(refused(parse_header(w.b, limits)), HeaderError::ErrChunk);
}

// ---- encoding ----------------------------------------------------------------------------------

TEST(RdmaHeader, ErrorRepliesAsTheRfcLaysThemOut) {
    EXPECT_EQ(encode_error(kXid, 8, HeaderError::ErrVers),
              W().u(kXid).u(1).u(8).u(4).u(1).u(1).u(1).b);
    EXPECT_EQ(encode_error(kXid, 8, HeaderError::ErrChunk), W().u(kXid).u(1).u(8).u(4).u(2).b);
}

// RFC 8167: reverse-direction calls go inline under an RDMA_MSG header with no chunks; the
// client's replies are recognized by that header and an RPC REPLY after it.
TEST(RdmaHeader, ReverseDirectionCallsAndReplies) {
    EXPECT_EQ(encode_reverse_call_header(kXid, 1), W().u(kXid).u(1).u(1).u(0).u(0).u(0).u(0).b);
    const W reply = W().u(kXid).u(1).u(5).u(0).u(0).u(0).u(0).u(kXid).u(1).u(0);
    auto rpc = reverse_reply(reply.b);
    ASSERT_EQ(rpc.size(), 12u);
    EXPECT_EQ(rpc.data(), reply.b.data() + 28);
    // A forward call (msg_type CALL), chunks, RDMA_NOMSG, another version, too short: no.
    EXPECT_TRUE(reverse_reply(W().u(kXid).u(1).u(5).u(0).u(0).u(0).u(0).u(kXid).u(0).b).empty());
    EXPECT_TRUE(reverse_reply(W().u(kXid).u(1).u(5).u(0).u(1).u(0).u(0).u(kXid).u(1).b).empty());
    EXPECT_TRUE(reverse_reply(W().u(kXid).u(1).u(5).u(1).u(0).u(0).u(0).u(kXid).u(1).b).empty());
    EXPECT_TRUE(reverse_reply(W().u(kXid).u(2).u(5).u(0).u(0).u(0).u(0).u(kXid).u(1).b).empty());
    EXPECT_TRUE(reverse_reply(W().u(kXid).u(1).u(5).u(0).u(0).u(0).u(0).u(kXid).b).empty());
    // The peer's RDMA_ERROR names the call it could not take.
    EXPECT_EQ(rdma_error_xid(encode_error(kXid, 1, HeaderError::ErrChunk)), kXid);
    EXPECT_EQ(rdma_error_xid(reply.b), 0u);
    // §4.2: the reply's rdma_credit grants reverse calls: at least one, at most the bound.
    EXPECT_EQ(reverse_grant(reply.b, 16), 5u);
    EXPECT_EQ(reverse_grant(reply.b, 4), 4u);
    EXPECT_EQ(reverse_grant(W().u(kXid).u(1).u(0).u(0).u(0).u(0).u(0).u(kXid).u(1).b, 16), 1u);
}

TEST(RdmaHeader, ReplyHeaderKeepsSegmentCountsAndReportsLengths) {
    TransportHeader call;
    call.xid = kXid;
    call.writes.push_back({{{5, 65536, 0xa000}, {6, 65536, 0x2a000}}});
    call.writes.push_back({{{7, 4096, 0x5000}}});  // unused: comes back with length 0
    call.reply = WriteChunk{{{9, 4096, 0xf000}}};
    ReplyChunks used;
    used.write_lengths = {{65536, 100}};
    auto msg = encode_reply_header(call, 16, MsgType::Msg, used);
    W want = W().u(kXid).u(1).u(16).u(0).u(0);
    want.u(1).u(2).seg(5, 65536, 0xa000).seg(6, 100, 0x2a000);
    want.u(1).u(1).seg(7, 0, 0x5000).u(0);
    want.u(0);  // no reply chunk in an RDMA_MSG reply
    EXPECT_EQ(msg, want.b);
    // RDMA_NOMSG: the Reply chunk is reported with what was written into it.
    auto nomsg = encode_reply_header(call, 16, MsgType::NoMsg, {{{1, 0}}, {3000}});
    W want2 = W().u(kXid).u(1).u(16).u(1).u(0);
    want2.u(1).u(2).seg(5, 1, 0xa000).seg(6, 0, 0x2a000);
    want2.u(1).u(1).seg(7, 0, 0x5000).u(0);
    want2.u(1).u(1).seg(9, 3000, 0xf000);
    EXPECT_EQ(nomsg, want2.b);
}

// ---- call plans --------------------------------------------------------------------------------

TEST(RdmaCallPlan, InlineCallWithPayloadChunk) {
    W w = head(0).u(1).u(100).seg(7, 4096, 0x1000).u(1).u(100).seg(8, 100, 0x9000);
    w.u(0).u(0).u(0);
    rpc_body(w, 100);
    auto h = ok(parse_header(w.b, limits));
    auto p = plan_call(h, w.b.size());
    EXPECT_EQ(p.message_offset, h.length);
    EXPECT_EQ(p.message_length, 100u);
    EXPECT_FALSE(p.message_pulls);
    ASSERT_EQ(p.items.size(), 1u);
    EXPECT_EQ(p.items[0], (DdpItem{100, 0, 4196}));
    ASSERT_TRUE(p.payload_pulls);
    EXPECT_EQ(p.payload_pulls->length, 4196u);
    ASSERT_EQ(p.payload_pulls->pulls.size(), 2u);
    EXPECT_EQ(p.payload_pulls->pulls[1], (Pull{{8, 100, 0x9000}, 4096}));
    EXPECT_EQ(p.read_bytes(), 4196u);
}

TEST(RdmaCallPlan, LongCallIsPulledWhole) {
    W w = head(1).u(1).u(0).seg(3, 3000, 0x100).u(1).u(0).seg(4, 1000, 0x8000);
    w.u(1).u(2000).seg(5, 65536, 0x20000).u(0).u(0).u(0);
    auto h = ok(parse_header(w.b, limits));
    auto p = plan_call(h, w.b.size());
    ASSERT_TRUE(p.message_pulls);
    EXPECT_EQ(p.message_length, 4000u);
    EXPECT_EQ(p.message_pulls->pulls[1].offset, 3000u);
    ASSERT_EQ(p.items.size(), 1u);
    EXPECT_EQ(p.items[0].position, 2000u);
    EXPECT_EQ(p.read_bytes(), 4000u + 65536u);
}

// Three DDP items in one RDMA_MSG (an NFSv4 COMPOUND with three WRITEs): one payload
// buffer, each item at a kItemAlign-aligned offset. Positions count the whole stream:
// item A (130 bytes, 132 with pad) at 8, B at 148, C at 160.
TEST(RdmaCallPlan, SeveralDdpItemsShareOnePayloadBufferAligned) {
    W w = head(0);
    w.u(1).u(8).seg(7, 100, 0x1000).u(1).u(8).seg(8, 30, 0x2000);
    w.u(1).u(148).seg(9, 5, 0x3000);
    w.u(1).u(160).seg(10, 64, 0x4000);
    w.u(0).u(0).u(0);
    rpc_body(w, 100);
    auto h = ok(parse_header(w.b, limits));
    ASSERT_EQ(h.reads.size(), 3u);
    auto p = plan_call(h, w.b.size());
    ASSERT_EQ(p.items.size(), 3u);
    EXPECT_EQ(p.items[0], (DdpItem{8, 0, 130}));
    EXPECT_EQ(p.items[1], (DdpItem{148, 192, 5}));
    EXPECT_EQ(p.items[2], (DdpItem{160, 256, 64}));
    ASSERT_TRUE(p.payload_pulls);
    EXPECT_EQ(p.payload_pulls->length, 320u) << "the buffer the items span";
    ASSERT_EQ(p.payload_pulls->pulls.size(), 4u);
    EXPECT_EQ(p.payload_pulls->pulls[1], (Pull{{8, 30, 0x2000}, 100}));
    EXPECT_EQ(p.payload_pulls->pulls[2], (Pull{{9, 5, 0x3000}, 192}));
    EXPECT_EQ(p.payload_pulls->pulls[3], (Pull{{10, 64, 0x4000}, 256}));
    EXPECT_EQ(p.read_bytes(), 199u) << "the gaps are not read";
}

TEST(RdmaCallPlan, LongCallWithTwoDdpItems) {
    W w = head(1).u(1).u(0).seg(3, 3000, 0x100);
    w.u(1).u(1000).seg(4, 10, 0x8000).u(1).u(2000).seg(5, 20, 0x9000).u(0).u(0).u(0);
    auto h = ok(parse_header(w.b, limits));
    auto p = plan_call(h, w.b.size());
    ASSERT_TRUE(p.message_pulls);
    EXPECT_EQ(p.message_length, 3000u);
    ASSERT_EQ(p.items.size(), 2u);
    EXPECT_EQ(p.items[0], (DdpItem{1000, 0, 10}));
    EXPECT_EQ(p.items[1], (DdpItem{2000, 64, 20}));
    EXPECT_EQ(p.read_bytes(), 3030u);
}

TEST(RdmaCallPlan, EightDdpItemsAreTheLimit) {
    W w = head(0);
    for (uint32_t i = 0; i < 8; ++i) w.u(1).u(4 + 8 * i).seg(1, 4, 0x1000 * i);
    w.u(0).u(0).u(0);
    rpc_body(w, 80);
    auto h = ok(parse_header(w.b, limits));
    auto p = plan_call(h, w.b.size());
    ASSERT_EQ(p.items.size(), 8u);
    EXPECT_EQ(p.items[7].offset, 7 * kItemAlign);
    EXPECT_EQ(p.payload_pulls->length, 7 * kItemAlign + 4);
    EXPECT_LT(p.payload_pulls->length, fit_to_buffer(limits, 1u << 20).max_call_payload);
}

// ---- reply plans -------------------------------------------------------------------------------

namespace {

// An RPC reply of `head_len` inline bytes, then a payload of `payload_len` bytes whose
// XDR pad is in the inline bytes (as xdr::Encoder leaves it), then `tail_len` bytes.
struct FakeReply {
    std::vector<uint8_t> bytes;
    std::vector<uint8_t> payload;
    std::vector<xdr::ExternalSegment> segs;
    FakeReply(size_t head_len, size_t payload_len, size_t tail_len) {
        bytes.assign(head_len, 1);
        payload.assign(payload_len, 2);
        segs = {{head_len, payload, xdr::pad4(payload_len)}};
        bytes.insert(bytes.end(), segs[0].pad, 0);
        bytes.insert(bytes.end(), tail_len, 3);
    }
};

// Two READ results (an NFSv4 COMPOUND): 100 inline bytes, payload 1 (`a` bytes, pad
// inline), 40 inline bytes, payload 2 (`b` bytes, pad inline), 20 inline bytes.
struct TwoReads {
    std::vector<uint8_t> bytes, p1, p2;
    std::vector<xdr::ExternalSegment> segs;
    TwoReads(size_t a, size_t b) : p1(a, 2), p2(b, 4) {
        bytes.assign(100, 1);
        segs.push_back({bytes.size(), p1, xdr::pad4(a)});
        bytes.insert(bytes.end(), xdr::pad4(a), 0);
        bytes.insert(bytes.end(), 40, 3);
        segs.push_back({bytes.size(), p2, xdr::pad4(b)});
        bytes.insert(bytes.end(), xdr::pad4(b), 0);
        bytes.insert(bytes.end(), 20, 5);
    }
    size_t inline_len() const { return bytes.size() - segs[0].pad - segs[1].pad; }
};

uint64_t sum(const std::vector<Bytes>& v) {
    uint64_t n = 0;
    for (auto b : v) n += b.size();
    return n;
}

}  // namespace

TEST(RdmaReplyPlan, ReadPayloadGoesToTheWriteChunkWithoutPad) {
    TransportHeader call;
    call.xid = kXid;
    call.writes.push_back({{{5, 4096, 0xa000}, {6, 4096, 0xb000}}});
    FakeReply r(120, 5001, 0);  // 5001 bytes: 3 pad bytes
    ReplyInputs in{&call, 32, r.bytes, r.segs, 1024, false};
    auto plan = plan_reply(in);
    ASSERT_EQ(plan.type, MsgType::Msg) << plan.error;
    EXPECT_EQ(plan.write_chunk_bytes, 5001u);
    ASSERT_EQ(plan.writes.size(), 2u);
    EXPECT_EQ(plan.writes[0].remote, (Segment{5, 4096, 0xa000}));
    EXPECT_EQ(plan.writes[1].remote, (Segment{6, 905, 0xb000}));  // not 908: no pad
    EXPECT_EQ(plan.writes[0].local[0].data(), r.payload.data()) << "pushed from where it is";
    EXPECT_EQ(sum(plan.send), 120u) << "neither payload nor its pad stays inline";
    // The header reports 4096 + 905 in the same two segments.
    W want = W().u(kXid)
                 .u(1)
                 .u(32)
                 .u(0)
                 .u(0)
                 .u(1)
                 .u(2)
                 .seg(5, 4096, 0xa000)
                 .seg(6, 905, 0xb000)
                 .u(0)
                 .u(0);
    EXPECT_EQ(plan.header, want.b);
}

TEST(RdmaReplyPlan, PayloadTooBigForTheWriteChunkIsErrChunk) {
    TransportHeader call;
    call.writes.push_back({{{5, 4096, 0xa000}}});
    FakeReply r(120, 8192, 0);
    auto plan = plan_reply({&call, 32, r.bytes, r.segs, 1024, false});
    EXPECT_EQ(plan.type, MsgType::Error);
    EXPECT_TRUE(plan.writes.empty());
    EXPECT_NE(plan.error.find("does not fit"), std::string::npos);
}

TEST(RdmaReplyPlan, PayloadWithoutWriteListStaysInTheStream) {
    TransportHeader call;
    call.reply = WriteChunk{{{9, 1 << 20, 0x100000}}};
    FakeReply r(120, 5001, 8);
    auto plan = plan_reply({&call, 32, r.bytes, r.segs, 1024, false});
    ASSERT_EQ(plan.type, MsgType::NoMsg) << plan.error;
    EXPECT_EQ(plan.reply_chunk_bytes, 120u + 5001u + 3u + 8u);
    ASSERT_EQ(plan.writes.size(), 1u) << "one gathered Write into one segment";
    ASSERT_EQ(plan.writes[0].local.size(), 3u);
    EXPECT_EQ(plan.writes[0].local[1].data(), r.payload.data()) << "gathered, not copied";
    EXPECT_TRUE(plan.send.empty());
}

TEST(RdmaReplyPlan, SmallReplyIsInlineAndReplyChunkIsNotReported) {
    TransportHeader call;
    call.xid = kXid;
    call.reply = WriteChunk{{{9, 4096, 0xf000}}};
    std::vector<uint8_t> rep(200, 1);
    auto plan = plan_reply({&call, 32, rep, {}, 1024, false});
    ASSERT_EQ(plan.type, MsgType::Msg);
    EXPECT_EQ(plan.header, W().u(kXid).u(1).u(32).u(0).u(0).u(0).u(0).b);
    EXPECT_EQ(sum(plan.send), 200u);
    EXPECT_TRUE(plan.writes.empty());
}

TEST(RdmaReplyPlan, InlineThresholdCountsTheTransportHeader) {
    TransportHeader call;
    call.reply = WriteChunk{{{9, 4096, 0xf000}}};
    std::vector<uint8_t> rep(1024 - 28, 1);  // exactly fits with the 28-byte header
    EXPECT_EQ(plan_reply({&call, 1, rep, {}, 1024, false}).type, MsgType::Msg);
    rep.push_back(0);
    rep.push_back(0);
    rep.push_back(0);
    rep.push_back(0);
    EXPECT_EQ(plan_reply({&call, 1, rep, {}, 1024, false}).type, MsgType::NoMsg);
}

TEST(RdmaReplyPlan, LongReplyAcrossReplyChunkSegments) {
    TransportHeader call;
    call.xid = kXid;
    call.reply = WriteChunk{{{9, 4096, 0x10000}, {10, 4096, 0x30000}, {11, 4096, 0x50000}}};
    std::vector<uint8_t> rep(6000, 1);
    auto plan = plan_reply({&call, 32, rep, {}, 1024, true});
    ASSERT_EQ(plan.type, MsgType::NoMsg);
    ASSERT_EQ(plan.writes.size(), 2u);
    EXPECT_EQ(plan.writes[1].remote, (Segment{10, 1904, 0x30000}));
    W want = W().u(kXid).u(1).u(32).u(1).u(0).u(0);
    want.u(1).u(3).seg(9, 4096, 0x10000).seg(10, 1904, 0x30000).seg(11, 0, 0x50000);
    EXPECT_EQ(plan.header, want.b);
    EXPECT_FALSE(plan.invalidate) << "three rkeys: no single one to invalidate";
}

TEST(RdmaReplyPlan, LongReplyWithoutReplyChunkIsErrChunk) {
    TransportHeader call;
    std::vector<uint8_t> rep(3000, 1);
    auto plan = plan_reply({&call, 32, rep, {}, 1024, false});
    EXPECT_EQ(plan.type, MsgType::Error);
    EXPECT_NE(plan.error.find("no reply chunk"), std::string::npos);
    EXPECT_EQ(plan.header.size(), 20u);
}

TEST(RdmaReplyPlan, SendWithInvalidateOnlyForASingleRkeyAndWhenAllowed) {
    TransportHeader call;
    call.writes.push_back({{{5, 8192, 0xa000}}});
    FakeReply r(100, 4000, 0);
    EXPECT_EQ(plan_reply({&call, 1, r.bytes, r.segs, 1024, true}).invalidate, 5u);
    EXPECT_FALSE(plan_reply({&call, 1, r.bytes, r.segs, 1024, false}).invalidate);
}

// RFC 8166 §4.3.2: each payload takes the next write chunk; with one chunk, the second
// READ's data stays in the stream (inline here), gathered from where it is.
TEST(RdmaReplyPlan, TwoPayloadsOneWriteChunk) {
    TransportHeader call;
    call.xid = kXid;
    call.writes.push_back({{{5, 8192, 0xa000}}});
    TwoReads r(5001, 300);
    auto plan = plan_reply({&call, 32, r.bytes, r.segs, 1024, false});
    ASSERT_EQ(plan.type, MsgType::Msg) << plan.error;
    EXPECT_EQ(plan.write_chunks, 1u);
    EXPECT_EQ(plan.write_chunk_bytes, 5001u);
    ASSERT_EQ(plan.writes.size(), 1u);
    EXPECT_EQ(plan.writes[0].local[0].data(), r.p1.data());
    EXPECT_EQ(sum(plan.send), 100u + 40 + 300 + 20);
    EXPECT_TRUE(std::any_of(plan.send.begin(), plan.send.end(), [&](Bytes b) {
        return b.data() == r.p2.data();
    })) << "gathered, not copied";
    W want = W().u(kXid).u(1).u(32).u(0).u(0);
    want.u(1).u(1).seg(5, 5001, 0xa000).u(0).u(0);
    EXPECT_EQ(plan.header, want.b);
}

TEST(RdmaReplyPlan, TwoPayloadsTwoWriteChunksInOrder) {
    TransportHeader call;
    call.xid = kXid;
    call.writes.push_back({{{5, 8192, 0xa000}}});
    call.writes.push_back({{{6, 4096, 0xb000}, {7, 4096, 0xc000}}});
    TwoReads r(5001, 6000);
    auto plan = plan_reply({&call, 32, r.bytes, r.segs, 1024, false});
    ASSERT_EQ(plan.type, MsgType::Msg) << plan.error;
    EXPECT_EQ(plan.write_chunks, 2u);
    EXPECT_EQ(plan.write_chunk_bytes, 11001u);
    ASSERT_EQ(plan.writes.size(), 3u);
    EXPECT_EQ(plan.writes[0].local[0].data(), r.p1.data());
    EXPECT_EQ(plan.writes[1].remote, (Segment{6, 4096, 0xb000}));
    EXPECT_EQ(plan.writes[1].local[0].data(), r.p2.data());
    EXPECT_EQ(plan.writes[2].remote, (Segment{7, 1904, 0xc000}));
    EXPECT_EQ(sum(plan.send), r.inline_len()) << "neither payloads nor their pads inline";
    W want = W().u(kXid).u(1).u(32).u(0).u(0);
    want.u(1).u(1).seg(5, 5001, 0xa000);
    want.u(1).u(2).seg(6, 4096, 0xb000).seg(7, 1904, 0xc000).u(0).u(0);
    EXPECT_EQ(plan.header, want.b);
}

TEST(RdmaReplyPlan, UnusedThirdWriteChunkReturnsWithZeroLength) {
    TransportHeader call;
    call.xid = kXid;
    call.writes.push_back({{{5, 8192, 0xa000}}});
    call.writes.push_back({{{6, 8192, 0xb000}}});
    call.writes.push_back({{{7, 8192, 0xc000}}});
    TwoReads r(10, 0);  // the second READ hit EOF: its chunk is used, with 0 bytes
    auto plan = plan_reply({&call, 32, r.bytes, r.segs, 1024, false});
    ASSERT_EQ(plan.type, MsgType::Msg) << plan.error;
    EXPECT_EQ(plan.write_chunks, 1u) << "chunks that carry bytes";
    W want = W().u(kXid).u(1).u(32).u(0).u(0);
    want.u(1).u(1).seg(5, 10, 0xa000);
    want.u(1).u(1).seg(6, 0, 0xb000);
    want.u(1).u(1).seg(7, 0, 0xc000).u(0).u(0);
    EXPECT_EQ(plan.header, want.b);
}

// One write chunk and a Reply chunk: the first payload by its write chunk, the second
// (too big to go inline) in the Reply chunk with the rest of the reply.
TEST(RdmaReplyPlan, SecondPayloadRidesTheReplyChunk) {
    TransportHeader call;
    call.xid = kXid;
    call.writes.push_back({{{5, 8192, 0xa000}}});
    call.reply = WriteChunk{{{9, 65536, 0x100000}}};
    TwoReads r(5000, 3001);
    // Enough gather entries for the reply chunk's pieces in one Write (the split at fewer
    // is RdmaGather's subject below).
    auto plan = plan_reply({&call, 32, r.bytes, r.segs, 1024, false, 8});
    ASSERT_EQ(plan.type, MsgType::NoMsg) << plan.error;
    EXPECT_EQ(plan.write_chunk_bytes, 5000u);
    EXPECT_EQ(plan.reply_chunk_bytes, 100u + 40 + 3001 + 3 + 20);
    ASSERT_EQ(plan.writes.size(), 2u);
    EXPECT_EQ(plan.writes[1].remote.handle, 9u);
    EXPECT_TRUE(std::any_of(plan.writes[1].local.begin(), plan.writes[1].local.end(),
                            [&](Bytes b) { return b.data() == r.p2.data(); }));
    EXPECT_TRUE(plan.send.empty());
}

// ---- gather entries per work request (the QP's max_send_sge) ------------------------------------

namespace {

// k READ results with no write chunks (an NFSv4.1 COMPOUND of small READs): 2k+1 inline
// pieces around k payloads, 8 bytes each of inline bytes between them.
struct ManyReads {
    std::vector<uint8_t> bytes;
    std::vector<std::vector<uint8_t>> payloads;
    std::vector<xdr::ExternalSegment> segs;
    ManyReads(size_t k, size_t len) : payloads(k, std::vector<uint8_t>(len, 7)) {
        bytes.assign(8, 1);
        for (auto& p : payloads) {
            segs.push_back({bytes.size(), p, xdr::pad4(len)});
            bytes.insert(bytes.end(), xdr::pad4(len), 0);
            bytes.insert(bytes.end(), 8, 3);
        }
    }
};

}  // namespace

TEST(RdmaGather, ScatterPutsAtMostMaxLocalPiecesInOneWrite) {
    WriteChunk chunk{{{9, 1 << 20, 0x100000}}};
    std::vector<uint8_t> mem(400, 1);
    std::vector<Bytes> pieces;
    for (size_t i = 0; i < 20; ++i) pieces.push_back(Bytes(mem).subspan(i * 20, 20));
    std::vector<Push> out;
    std::vector<uint32_t> lengths;
    ASSERT_TRUE(scatter(pieces, chunk, out, lengths, 8));
    ASSERT_EQ(out.size(), 3u);  // 8 + 8 + 4 pieces, one remote range after the other
    uint64_t at = 0x100000;
    for (size_t i = 0; i < out.size(); ++i) {
        EXPECT_EQ(out[i].local.size(), i < 2 ? 8u : 4u);
        EXPECT_EQ(out[i].remote.handle, 9u);
        EXPECT_EQ(out[i].remote.offset, at);
        EXPECT_EQ(out[i].remote.length, sum(out[i].local));
        at += out[i].remote.length;
    }
    EXPECT_EQ(lengths, std::vector<uint32_t>{400});
    // one entry per Write at the extreme
    out.clear();
    ASSERT_TRUE(scatter(pieces, chunk, out, lengths, 1));
    EXPECT_EQ(out.size(), 20u);
}

TEST(RdmaGather, AReplyChunkOfManyInlineReadsNeverGathersMoreThanTheQp) {
    TransportHeader call;
    call.xid = kXid;
    call.reply = WriteChunk{{{9, 4096, 0x10000}, {10, 65536, 0x30000}}};
    ManyReads r(40, 100);  // 81 inline pieces and 40 payloads, no write list
    for (size_t max_sge : {1u, 2u, 3u, 8u}) {
        ReplyInputs in{&call, 32, r.bytes, r.segs, 1024, false};
        in.max_sge = max_sge;
        auto plan = plan_reply(in);
        ASSERT_EQ(plan.type, MsgType::NoMsg) << plan.error;
        uint64_t bytes = 0;
        for (const auto& w : plan.writes) {
            EXPECT_LE(w.local.size(), max_sge);
            EXPECT_EQ(w.remote.length, sum(w.local));
            bytes += w.remote.length;
        }
        EXPECT_EQ(bytes, plan.reply_chunk_bytes);
        EXPECT_EQ(bytes, 8u + 40 * (100 + 8));
    }
}

TEST(RdmaGather, MergeAdjacentJoinsWhatContinuesInOneRegistration) {
    struct Sge {
        uint64_t addr;
        uint32_t length;
        uint32_t lkey;
    };
    // a send buffer (lkey 1): header at 0, staged pieces after it; a payload (lkey 2)
    // between them; an empty piece; a piece of another buffer that happens to follow
    std::vector<Sge> v{{1000, 28, 1}, {1028, 100, 1}, {5000, 64, 2}, {1128, 0, 1},
                       {1128, 8, 1},  {1136, 4, 1},   {1140, 4, 3},  {1144, 4, 3}};
    merge_adjacent(v);
    ASSERT_EQ(v.size(), 4u);
    EXPECT_EQ(v[0].addr, 1000u);
    EXPECT_EQ(v[0].length, 128u);
    EXPECT_EQ(v[1].lkey, 2u);
    EXPECT_EQ(v[2].addr, 1128u);
    EXPECT_EQ(v[2].length, 12u);
    EXPECT_EQ(v[3].lkey, 3u);
    EXPECT_EQ(v[3].length, 8u);
    std::vector<Sge> empty;
    merge_adjacent(empty);
    EXPECT_TRUE(empty.empty());
}

TEST(RdmaReplyPlan, SecondPayloadTooBigForItsWriteChunkIsErrChunk) {
    TransportHeader call;
    call.writes.push_back({{{5, 8192, 0xa000}}});
    call.writes.push_back({{{6, 100, 0xb000}}});
    TwoReads r(5000, 101);
    auto plan = plan_reply({&call, 32, r.bytes, r.segs, 1024, false});
    EXPECT_EQ(plan.type, MsgType::Error);
    EXPECT_TRUE(plan.writes.empty()) << "nothing of the first payload is written either";
    EXPECT_NE(plan.error.find("write chunk 1"), std::string::npos) << plan.error;
}

// ---- private data, credits ---------------------------------------------------------------------

TEST(RdmaPrivateData, LinuxClientsBytes) {
    // What the Linux 6.1 client sends (shared/vmtest notes): f6ab0e18 01 01 03 03.
    std::vector<uint8_t> b{0xf6, 0xab, 0x0e, 0x18, 1, 1, 3, 3};
    auto pd = parse_private_data(b);
    ASSERT_TRUE(pd);
    EXPECT_TRUE(pd->remote_invalidate);
    EXPECT_EQ(pd->send_size, 4096u);
    EXPECT_EQ(pd->receive_size, 4096u);
}

TEST(RdmaPrivateData, FoundAtAnyOffsetAndRejectedWhenForeign) {
    std::vector<uint8_t> b{9, 9, 9, 0xf6, 0xab, 0x0e, 0x18, 1, 0, 0, 255};
    auto pd = parse_private_data(b);
    ASSERT_TRUE(pd);
    EXPECT_FALSE(pd->remote_invalidate);
    EXPECT_EQ(pd->send_size, 1024u);
    EXPECT_EQ(pd->receive_size, 256u * 1024u);
    EXPECT_FALSE(parse_private_data(std::vector<uint8_t>{0xf6, 0xab, 0x0e, 0x18, 2, 0, 0, 0}));
    EXPECT_FALSE(parse_private_data(std::vector<uint8_t>{0xf6, 0xab, 0x0e, 0x18, 1, 0, 0}));
    EXPECT_FALSE(parse_private_data({}));
}

TEST(RdmaPrivateData, OursRoundTrips) {
    PrivateData pd{4096, 8192, true};
    auto b = encode_private_data(pd);
    EXPECT_EQ(b, (std::vector<uint8_t>{0xf6, 0xab, 0x0e, 0x18, 1, 1, 3, 7}));
    auto back = parse_private_data(b);
    ASSERT_TRUE(back);
    EXPECT_EQ(back->receive_size, 8192u);
}

TEST(RdmaCredits, ExceedingTheGrantIsDetected) {
    CreditWindow w(2);
    EXPECT_TRUE(w.on_call());
    EXPECT_TRUE(w.on_call());
    EXPECT_FALSE(w.on_call()) << "a third call with two credits";
    w.on_reply();
    EXPECT_TRUE(w.on_call());
    EXPECT_EQ(w.outstanding(), 2u);
}

TEST(RdmaCredits, TheShareFallsAsConnectionsComeAndNeverPassesTheBudget) {
    // 4096 receive buffers, 1024 posted on the SRQ: 3072 for calls in flight.
    EXPECT_EQ(credit_share(3072, 1, 128), 128u) << "one connection: the configured maximum";
    EXPECT_EQ(credit_share(3072, 0, 128), 128u);
    EXPECT_EQ(credit_share(3072, 64, 128), 48u);
    EXPECT_EQ(credit_share(3072, 200, 128), 15u);
    EXPECT_EQ(credit_share(3072, 5000, 128), 1u) << "never zero: the requester would wait forever";
    for (size_t n : {1, 2, 3, 24, 25, 64, 200, 1024, 3072})
        EXPECT_LE(credit_share(3072, n, 128) * n, std::max<size_t>(3072, n)) << n << " connections";
}

TEST(RdmaCredits, ALoweredGrantStillAdmitsWhatThePeerWasSentBefore) {
    CreditWindow w(8);
    EXPECT_EQ(w.grant(2), 2u);
    EXPECT_EQ(w.ceiling(), 8u) << "the peer may not have read the lower grant yet";
    for (int i = 0; i < 8; ++i) EXPECT_TRUE(w.on_call());
    EXPECT_FALSE(w.on_call()) << "more than it was ever granted";
    EXPECT_EQ(w.grant(16), 16u);
    EXPECT_TRUE(w.on_call()) << "a raised grant raises the ceiling";
    EXPECT_EQ(w.grant(0), 1u) << "a grant is at least one credit";
}

// ---- the device's RDMA Read budget (transport/rdma/protocol/read_budget.h) ----------

// One connection's Reads: its peer's initiator depth and its own bytes bound them, and a
// Read larger than the bytes still runs, alone (issue 16: one deep queue must not take
// the device's whole budget, now the payload pool's).
TEST(RdmaReadWindow, BoundsReadsAndBytesAndLetsOneLargeReadRunAlone) {
    ReadWindow w(/*depth=*/3, /*bytes=*/4 << 20);
    EXPECT_EQ(w.depth(), 3u);
    EXPECT_TRUE(w.admits(1 << 20));
    w.posted(1 << 20);
    w.posted(2 << 20);
    EXPECT_TRUE(w.admits(1 << 20)) << "4 MiB in all fits";
    EXPECT_FALSE(w.admits((1 << 20) + 1)) << "past the bytes";
    w.posted(1 << 20);
    EXPECT_FALSE(w.admits(1)) << "the depth is reached";
    w.done(2 << 20);
    EXPECT_EQ(w.reads(), 2u);
    EXPECT_EQ(w.in_flight(), size_t(2) << 20);
    EXPECT_TRUE(w.admits(2 << 20));
    EXPECT_FALSE(w.admits(3 << 20));
    EXPECT_EQ(w.peak(), size_t(4) << 20);
    w.done(1 << 20);
    w.done(1 << 20);
    EXPECT_TRUE(w.admits(16 << 20)) << "nothing in flight: one large Read runs alone";
    w.posted(16 << 20);
    EXPECT_FALSE(w.admits(1));
    EXPECT_EQ(w.peak(), size_t(16) << 20);
    w.done(16 << 20);
    EXPECT_EQ(w.in_flight(), 0u);
    EXPECT_EQ(w.reads(), 0u);
}

TEST(RdmaReadWindow, DepthZeroStillLetsOneReadGo) {
    ReadWindow w(0, 8 << 20);
    EXPECT_TRUE(w.admits(1 << 20));
    w.posted(1 << 20);
    EXPECT_FALSE(w.admits(1 << 20));
}

TEST(RdmaReadBudget, BoundsBytesInFlightAndLetsOneLargeReadRunAlone) {
    ReadBudget b(4 << 20);
    EXPECT_TRUE(b.take(1 << 20, false));
    EXPECT_TRUE(b.take(3 << 20, false));
    EXPECT_FALSE(b.take(1, false)) << "the budget is spent";
    b.give(4 << 20);
    EXPECT_TRUE(b.take(8 << 20, false)) << "larger than the budget: runs, alone";
    EXPECT_FALSE(b.take(1, false));
    b.give(8 << 20);
    EXPECT_EQ(b.in_flight(), 0u);
}

TEST(RdmaReadBudget, WaitersGoInOrderAndNobodyCutsInLine) {
    ReadBudget b(2);
    std::vector<std::string> woken;
    ASSERT_TRUE(b.take(2, false));
    EXPECT_FALSE(b.take(1, false));
    b.wait([&] { woken.push_back("A"); });
    b.wait([&] { woken.push_back("B"); });
    b.give(1);  // room for one byte: A's turn
    ASSERT_EQ(woken, std::vector<std::string>{"A"});
    EXPECT_FALSE(b.take(1, false)) << "C, new, must not take A's room";
    b.wait([&] { woken.push_back("C"); });
    EXPECT_TRUE(b.take(1, true)) << "A spends its turn";
    EXPECT_EQ(woken, std::vector<std::string>{"A"}) << "no room left: B sleeps";
    b.give(1);
    EXPECT_EQ(woken, (std::vector<std::string>{"A", "B"}));
    // B cannot fit 2 bytes with one in flight: it waits at the front, still the oldest.
    EXPECT_FALSE(b.take(2, true));
    b.wait([&] { woken.push_back("B"); }, /*front=*/true);
    b.give(1);
    EXPECT_EQ(woken, (std::vector<std::string>{"A", "B", "B"})) << "B again before C";
    EXPECT_TRUE(b.take(2, true));
    b.give(2);
    EXPECT_EQ(woken, (std::vector<std::string>{"A", "B", "B", "C"}));
    b.pass();  // C went away: its turn passes on, nobody else waits
    EXPECT_EQ(b.waiting(), 0u);
    EXPECT_TRUE(b.take(2, false)) << "no turn outstanding after pass()";
}

TEST(RdmaReadBudget, AWaiterWithNothingInFlightIsWokenAtOnce) {
    ReadBudget b(1);
    int woken = 0;
    b.wait([&] { ++woken; });
    EXPECT_EQ(woken, 1);
    EXPECT_TRUE(b.take(1, true));
}

// ---- a connection's send queue (transport/rdma/protocol/send_queue.h) ----------------

TEST(RdmaSendQueue, SlotsAreTakenPerChainAndGivenBackByItsCompletion) {
    SendQueueSlots q(5);
    EXPECT_TRUE(q.take(2)) << "a Write and its Send";
    EXPECT_TRUE(q.take(1)) << "an RDMA Read";
    EXPECT_FALSE(q.take(3)) << "two slots free: a chain of three waits";
    EXPECT_EQ(q.free(), 2u) << "a refused take takes nothing";
    q.give(2);  // the reply's Send completed: its Write's slot comes back with it
    EXPECT_TRUE(q.take(3));
    q.give(100);
    EXPECT_EQ(q.free(), 5u) << "never more than the depth";
}

TEST(RdmaSendQueue, DepthIsACreditEachAndTheReadsAndReverseCalls) {
    EXPECT_EQ(send_queue_depth(0, 128, 16, 16), 160u) << "credits + Reads + reverse calls";
    EXPECT_EQ(send_queue_depth(0, 128, 128, 16), 208u)
        << "the Linux client on Soft-RoCE: Reads capped at kMaxReadsInFlight (a 256-slot ring)";
    EXPECT_LT(send_queue_depth(0, 128, 255, 16), 256u) << "under Soft-RoCE's next ring size";
    EXPECT_EQ(send_queue_depth(4, 128, 16, 16), 4u) << "configured";
    Limits l;
    EXPECT_EQ(longest_reply_chain(l), 321u) << "(4 write chunks + the reply chunk) x 64 + Send";
    EXPECT_GT(longest_reply_chain(l), send_queue_depth(0, 128, 128, 16))
        << "the longest reply is longer than the queue: it goes in parts";
}

TEST(RdmaSendQueue, AChainThatFitsTheQueueGoesWholeOrWaits) {
    auto p = next_chain_part(1, 2, 208);  // a READ's Write and Send, two slots free
    EXPECT_EQ(p.writes, 1u);
    EXPECT_TRUE(p.send);
    EXPECT_TRUE(next_chain_part(0, 1, 208).send) << "an inline reply: its Send";
    EXPECT_TRUE(next_chain_part(1, 1, 208).empty()) << "it fits the queue: wait, not a part";
    EXPECT_TRUE(next_chain_part(0, 0, 208).empty());
    EXPECT_TRUE(next_chain_part(206, 100, 208).empty()) << "fits an emptier queue whole";
}

TEST(RdmaSendQueue, AChainLongerThanTheQueueGoesInPartsOfAtLeastHalfIt) {
    EXPECT_TRUE(next_chain_part(320, 103, 208).empty()) << "under half the queue free: wait";
    auto p = next_chain_part(320, 104, 208);
    EXPECT_EQ(p.writes, 104u) << "Writes only, as many as are free";
    EXPECT_FALSE(p.send);
    p = next_chain_part(320, 208, 208);
    EXPECT_EQ(p.writes, 208u);
    EXPECT_FALSE(p.send);
    p = next_chain_part(5, 4, 4);  // the VM test's queue of 4, the v41reads reply chunk
    EXPECT_EQ(p.writes, 4u);
    EXPECT_FALSE(p.send);
    p = next_chain_part(1, 2, 4);
    EXPECT_EQ(p.writes, 1u);
    EXPECT_TRUE(p.send) << "the rest fits: the last Write and the Send";
}

// The longest reply the limits allow (every segment used, and the reply chunk's first
// segment given four pieces, more than a Write gathers: the four 16-byte spans between
// the payloads) is posted on the Linux client's queue: parts and then the Send, each
// Write exactly once, whatever else holds slots meanwhile.
TEST(RdmaSendQueue, TheLongestReplyPlanIsPostedInParts) {
    Limits l;
    TransportHeader call;
    call.xid = kXid;
    uint32_t handle = 1;
    for (size_t c = 0; c < l.max_write_chunks; ++c) {
        WriteChunk w;
        for (size_t s = 0; s < l.max_segments; ++s, ++handle)
            w.segments.push_back({handle, 16, uint64_t(handle) << 16});
        call.writes.push_back(w);
    }
    WriteChunk rc;
    for (size_t s = 0; s < l.max_segments; ++s, ++handle)
        rc.segments.push_back({handle, 64, uint64_t(handle) << 16});
    call.reply = rc;
    // Four payloads, each exactly filling a write chunk; the inline rest (64 x 64 bytes)
    // exactly fills the reply chunk.
    std::vector<std::vector<uint8_t>> payloads(l.max_write_chunks,
                                               std::vector<uint8_t>(l.max_segments * 16, 2));
    std::vector<uint8_t> bytes;
    std::vector<xdr::ExternalSegment> segs;
    for (auto& p : payloads) {
        bytes.insert(bytes.end(), 16, 1);
        segs.push_back({bytes.size(), p, 0});
    }
    bytes.insert(bytes.end(), l.max_segments * 64 - bytes.size(), 3);
    auto plan = plan_reply({&call, 32, bytes, segs, 1024, false, 3});
    ASSERT_EQ(plan.type, MsgType::NoMsg) << plan.error;
    ASSERT_GT(plan.writes.size() + 1, longest_reply_chain(l)) << "one segment took two Writes";

    // The queue, with other work (a Read, an inline reply) taking and freeing a few slots
    // between the parts.
    SendQueueSlots q(send_queue_depth(0, 128, 128, 16));
    ASSERT_TRUE(q.take(150)) << "other work holds most of the queue at first";
    size_t left = plan.writes.size(), parts = 0, waits = 0;
    std::vector<size_t> posted_parts;  // slots each part holds until its completion
    bool sent = false;
    for (int round = 0; round < 1000 && !sent; ++round) {
        const auto part = next_chain_part(left, q.free(), q.depth());
        if (part.empty()) {
            ++waits;
            // A completion: the oldest part, or the other work, gives its slots back.
            if (!posted_parts.empty()) {
                q.give(posted_parts.front());
                posted_parts.erase(posted_parts.begin());
            } else {
                q.give(50);
            }
            continue;
        }
        const size_t n = part.writes + (part.send ? 1 : 0);
        ASSERT_TRUE(q.take(n)) << "a part never takes more than is free";
        left -= part.writes;
        sent = part.send;
        if (!sent) {
            ++parts;
            EXPECT_GE(part.writes, q.depth() / 2u) << "parts are not posted a slot at a time";
            posted_parts.push_back(n);
        }
    }
    EXPECT_TRUE(sent) << "the Send went";
    EXPECT_EQ(left, 0u) << "every Write once";
    EXPECT_GE(parts, 1u);
    EXPECT_GE(waits, 1u);
}
