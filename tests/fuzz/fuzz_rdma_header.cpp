// libFuzzer target: a received RPC-over-RDMA version 1 message (RFC 8166 §4) through
// what the verbs layer does with it: parse and validate the transport header, plan the
// call (RDMA Reads, where the RPC message is), decode the RPC call the plan locates,
// then plan a reply to it (RFC 8166 §3.5, RFC 8267 §4: Write list, inline, Reply chunk).
//
// Input: 4 bytes that shape the reply (payload length, inline threshold, flags), then
// the received message.
#include <algorithm>
#include <cstdint>
#include <cstdlib>
#include <variant>
#include <vector>

#include "transport/rdma/protocol/call_plan.h"
#include "transport/rdma/protocol/header.h"
#include "transport/rdma/protocol/reply_plan.h"
#include "transport/rpc/message.h"

using namespace nfsrdmad;
using namespace nfsrdmad::rdma;

namespace {

void check_pulls(const PullSet& p) {
    size_t at = 0;
    for (const auto& pull : p.pulls) {
        if (pull.offset != at) abort();
        at += pull.remote.length;
    }
    if (at != p.length) abort();
}

// DDP items: aligned, ascending, apart, each exactly covered by its pulls, and the pulls
// all inside one item or another.
void check_items(const CallPlan& plan) {
    if (plan.items.empty() != !plan.payload_pulls) abort();
    if (!plan.payload_pulls) return;
    size_t end = 0, covered = 0;
    for (const auto& item : plan.items) {
        if (item.offset % kItemAlign != 0 || item.offset < end) abort();
        end = item.offset + item.length;
        covered += item.length;
    }
    if (end != plan.payload_pulls->length) abort();
    size_t pulled = 0;
    for (const auto& pull : plan.payload_pulls->pulls) {
        const bool inside = std::any_of(plan.items.begin(), plan.items.end(), [&](auto& i) {
            return pull.offset >= i.offset &&
                   pull.offset + pull.remote.length <= i.offset + i.length;
        });
        if (!inside) abort();
        pulled += pull.remote.length;
    }
    if (pulled != covered || pulled != plan.payload_pulls->bytes()) abort();
}

uint64_t pushed(const ReplyPlan& plan) {
    uint64_t n = 0;
    for (const auto& w : plan.writes) {
        uint64_t local = 0;
        for (auto b : w.local) local += b.size();
        if (local != w.remote.length) abort();
        n += local;
    }
    return n;
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
    if (size < 4) return 0;
    const size_t payload_len = (size_t(data[0]) << 8 | data[1]) * 3;  // up to ~192 KiB
    const size_t inline_threshold = (size_t(data[2] & 0x7f) + 1) * 256;
    const bool remote_invalidate = data[3] & 1;
    const bool with_payload = data[3] & 2;
    const bool second_payload = data[2] & 0x80;  // an NFSv4 COMPOUND's second READ
    const size_t prefix_len = (data[3] >> 2) * 4;
    std::span<const uint8_t> msg(data + 4, size - 4);

    Limits limits;
    auto parsed = parse_header(msg, limits);
    if (auto* err = std::get_if<HeaderError>(&parsed)) {
        if (err->answer != HeaderError::Ignore) (void)encode_error(err->xid, 1, err->answer);
        return 0;
    }
    const auto& h = std::get<TransportHeader>(parsed);
    if (h.length > msg.size()) abort();

    CallPlan plan = plan_call(h, msg.size());
    std::vector<uint8_t> pulled;
    std::span<const uint8_t> call;
    if (plan.message_pulls) {
        check_pulls(*plan.message_pulls);
        if (plan.message_length != plan.message_pulls->length) abort();
        // What the RDMA Reads would bring: here, the inline bytes again, zero-filled.
        pulled.assign(plan.message_length, 0);
        std::copy_n(msg.begin(), std::min(msg.size(), pulled.size()), pulled.begin());
        call = pulled;
    } else {
        if (plan.message_offset + plan.message_length != msg.size()) abort();
        call = msg.subspan(plan.message_offset, plan.message_length);
    }
    check_items(plan);
    rpc::DecodedCall c = rpc::decode_call(call);
    if (c.status == rpc::DecodedCall::Ok && c.args_offset > call.size()) abort();

    // A reply: some RPC header bytes, optionally one or two READ-like opaque payloads
    // marked external (as the NFS layer encodes READ), then a trailing word.
    std::vector<uint8_t> payload(payload_len, 0x5a), payload2(payload_len / 2 + 1, 0xa5);
    std::vector<uint8_t> reply;
    xdr::Encoder e(reply);
    std::vector<uint8_t> prefix(prefix_len, 0x11);
    e.put_fixed(prefix.data(), prefix.size());
    if (with_payload) {
        e.add_external(payload);
        e.put_opaque(payload);
    }
    if (second_payload) {
        e.put_u32(1);
        e.add_external(payload2);
        e.put_opaque(payload2);
    }
    e.put_u32(0);
    ReplyInputs in;
    in.call = &h;
    in.credits = 32;
    in.rpc_reply = reply;
    in.payloads = e.externals();
    in.inline_threshold = inline_threshold;
    in.remote_invalidate = remote_invalidate;
    in.max_sge = 1 + (data[0] >> 5);  // 1 .. 8 gather entries per work request
    ReplyPlan rp = plan_reply(in);
    if (rp.header.empty()) abort();
    for (const auto& w : rp.writes)
        if (w.local.size() > in.max_sge) abort();
    const uint64_t written = pushed(rp);
    if (rp.type == MsgType::Error) {
        if (!rp.writes.empty()) abort();
    } else if (written != rp.write_chunk_bytes + rp.reply_chunk_bytes) {
        abort();
    }
    // Our reply header must be one we would accept back (a header that decodes).
    xdr::Decoder back(rp.header);
    (void)back.get_u32();
    return 0;
}
