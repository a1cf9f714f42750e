// Replies, RFC 8166 §3.4-4: the reply plan says which parts of the RPC reply go by RDMA
// Write into the requester's write chunk or reply chunk and what rides inline in the
// Send; one chain of Writes ends in one signaled Send (or Send With Invalidate, RFC 8166
// §3.4.7 when the peer asked for it in its private data, RFC 8797).
//
// What it copies: nothing of the file data. READ payload sits in a registered payload
// buffer the file was read into, and goes out as it is; the RPC header, attributes and
// directory entries are staged into registered send (or payload) buffers
// (counters: staged_bytes; payload_memcpy_bytes must stay 0).
//
// What it bounds: a reply that finds no send buffer, or too few send queue slots for its
// Writes and Send, waits in order (starved_replies_) and goes first when one frees up,
// since it hands a credit and buffers back. A Send the peer does not take (it posts no
// receives) ends the connection after `send_timeout` (check_stalled_sends): never an
// unbounded hold on credits and memory.
#include <spdlog/spdlog.h>

#include <algorithm>
#include <chrono>
#include <cstring>
#include <string>
#include <utility>

#include "transport/rdma/verbs/connection.h"
#include "transport/rdma/verbs/work.h"

namespace nfsrdmad::rdma::verbs {

namespace {

// Where a local span can be sent from: its own registered buffer, or staged.
struct Gather {
    std::vector<ibv_sge> sges;
    uint64_t staged = 0;
};

}  // namespace

void Connection::send_reply(std::shared_ptr<CallWork> call, ReplyPtr reply) {
    if (closed_) {
        release_credit();
        return;
    }
    if (!*reply) {  // dropped by the RPC layer (e.g. a retransmission in progress)
        release_credit();
        return;
    }
    if (!starved_replies_.empty() || !try_send_reply(call, **reply)) {
        starved_replies_.emplace_back(std::move(call), std::move(reply));
        wait_for_buffers();
    }
}

bool Connection::try_send_reply(const std::shared_ptr<CallWork>& call, rpc::Reply& r) {
    rpc::Reply* reply = &r;
    ReplyInputs in;
    in.call = &call->header;
    in.credits = grant();
    in.rpc_reply = reply->bytes;
    in.payloads = reply->payloads;
    in.inline_threshold = std::min(opts_.peer_receive, opts_.inline_size);
    in.remote_invalidate = opts_.peer_remote_invalidate;
    in.max_sge = max_send_sge_;
    ReplyPlan plan = plan_reply(in);
    if (plan.type == MsgType::Error) {
        spdlog::info("rdma {}: ERR_CHUNK for xid {:#x}: {}", peer_.text, call->header.xid,
                     plan.error);
        send_error(call->header.xid, HeaderError::ErrChunk);
        return true;
    }
    // The Writes and the Send go in one post: they need that many send queue slots.
    const size_t chain = plan.writes.size() + 1;
    if (!sq_.fits(chain)) {  // more segments than the queue could ever hold at once
        spdlog::info(
            "rdma {}: ERR_CHUNK for xid {:#x}: the reply takes {} work requests, the "
            "send queue holds {}",
            peer_.text, call->header.xid, chain, sq_.depth());
        send_error(call->header.xid, HeaderError::ErrChunk);
        return true;
    }
    if (sq_.free() < chain) {
        wait_for_send_queue(true);
        return false;
    }

    auto rec = std::make_unique<ReplyRecord>();
    rec->slots = static_cast<uint32_t>(chain);
    rec->call = call;
    // The registered buffers the payloads were read into (one per payload_buffer() call).
    std::vector<const Buffer*> registered;
    for (const auto& owner : reply->payload_owners)
        if (auto* rp = dynamic_cast<RegisteredPayload*>(owner.get()))
            registered.push_back(&rp->buffer());
    auto registered_in = [&](Bytes b) -> const Buffer* {
        for (const Buffer* buf : registered)
            if (buf->contains(b.data(), b.size())) return buf;
        return nullptr;
    };
    auto is_payload = [&](Bytes b) {
        return std::any_of(reply->payloads.begin(), reply->payloads.end(), [&](const auto& p) {
            return b.data() >= p.data.data() && b.data() < p.data.data() + p.data.size();
        });
    };

    // Spans in registered memory go out as they are; the rest (RPC header, attributes,
    // directory entries) is staged into registered buffers.
    auto gather = [&](const std::vector<Bytes>& pieces, Gather& g) -> bool {
        for (Bytes b : pieces) {
            if (const Buffer* buf = registered_in(b)) {
                g.sges.push_back({reinterpret_cast<uintptr_t>(b.data()),
                                  static_cast<uint32_t>(b.size()), buf->lkey()});
                continue;
            }
            while (!b.empty()) {
                auto& pool =
                    b.size() <= dev_->sends().buffer_size() ? dev_->sends() : dev_->payloads();
                auto nb = pool.get();
                if (!nb) {
                    short_of_ = &pool;
                    return false;
                }
                size_t n = std::min(b.size(), nb->size());
                std::memcpy(nb->data(), b.data(), n);
                // File data that was not in registered memory: must never happen.
                if (is_payload(b)) count(&TransportCounters::payload_memcpy_bytes, n);
                g.sges.push_back({reinterpret_cast<uintptr_t>(nb->data()), static_cast<uint32_t>(n),
                                  nb->lkey()});
                g.staged += n;
                rec->staging.push_back(std::move(nb));
                b = b.subspan(n);
            }
        }
        return true;
    };

    std::vector<ibv_send_wr> wrs(plan.writes.size() + 1);
    std::vector<Gather> gathers(plan.writes.size() + 1);
    uint64_t staged = 0;
    for (size_t i = 0; i < plan.writes.size(); ++i) {
        const auto& push = plan.writes[i];
        if (!gather(push.local, gathers[i])) return false;  // staging buffers go back
        // The plan gives a Write at most max_sge pieces, and each becomes one entry (a
        // staged piece fits one buffer: replies are at most a payload buffer long).
        if (gathers[i].sges.size() > max_send_sge_) {
            spdlog::warn("rdma {}: ERR_CHUNK for xid {:#x}: a Write gathers {} pieces, the QP {}",
                         peer_.text, call->header.xid, gathers[i].sges.size(), max_send_sge_);
            send_error(call->header.xid, HeaderError::ErrChunk);
            return true;
        }
        staged += gathers[i].staged;
        ibv_send_wr& wr = wrs[i];
        wr.opcode = IBV_WR_RDMA_WRITE;
        wr.sg_list = gathers[i].sges.data();
        wr.num_sge = static_cast<int>(gathers[i].sges.size());
        wr.wr.rdma.remote_addr = push.remote.offset;
        wr.wr.rdma.rkey = push.remote.handle;
        wr.next = &wrs[i + 1];
    }
    // The Send: transport header, then (RDMA_MSG) the inline reply.
    std::vector<Bytes> send_pieces;
    send_pieces.push_back(plan.header);
    for (auto b : plan.send) send_pieces.push_back(b);
    Gather& sg = gathers.back();
    // Header and staged pieces share one send buffer, one after the other, so they join
    // into one gather entry; pieces in registered memory (inline READ data) go as they
    // are. A reply with more inline payloads than the QP gathers (an NFSv4.1 COMPOUND of
    // several small READs with no write chunks: 2 entries each) is copied whole into the
    // send buffer: it is inline, so it fits, and the copy is counted (payload_memcpy_bytes),
    // never a post the device refuses.
    {
        auto sb = dev_->sends().get();
        if (!sb) {
            short_of_ = &dev_->sends();
            return false;
        }
        for (bool copy_all : {false, true}) {
            sg.sges.clear();
            size_t off = 0;
            uint64_t copied_payload = 0;
            for (Bytes b : send_pieces) {
                const Buffer* buf = copy_all ? nullptr : registered_in(b);
                if (buf) {
                    sg.sges.push_back({reinterpret_cast<uintptr_t>(b.data()),
                                       static_cast<uint32_t>(b.size()), buf->lkey()});
                    continue;
                }
                if (off + b.size() > sb->size()) {
                    disconnect("a reply does not fit its send buffer");
                    return true;
                }
                std::memcpy(sb->data() + off, b.data(), b.size());
                if (copy_all && registered_in(b)) copied_payload += b.size();
                sg.sges.push_back({reinterpret_cast<uintptr_t>(sb->data() + off),
                                   static_cast<uint32_t>(b.size()), sb->lkey()});
                off += b.size();
            }
            merge_adjacent(sg.sges);
            if (sg.sges.size() <= max_send_sge_) {
                staged += off;
                if (copied_payload) {
                    count(&TransportCounters::payload_memcpy_bytes, copied_payload);
                    spdlog::debug(
                        "rdma {}: xid {:#x}: {} inline payload bytes copied: more "
                        "pieces than {} gather entries",
                        peer_.text, call->header.xid, copied_payload, max_send_sge_);
                }
                break;
            }
        }
        rec->buffer = std::move(sb);
    }
    ibv_send_wr& send = wrs.back();
    send.opcode = plan.invalidate ? IBV_WR_SEND_WITH_INV : IBV_WR_SEND;
    if (plan.invalidate) {
        send.invalidate_rkey = *plan.invalidate;
        count(&TransportCounters::send_invalidate);
    }
    send.send_flags = IBV_SEND_SIGNALED;
    send.sg_list = sg.sges.data();
    send.num_sge = static_cast<int>(sg.sges.size());
    rec->payloads = std::move(reply->payload_owners);
    send.wr_id = track(std::move(rec));

    count(&TransportCounters::staged_bytes, staged);
    if (plan.write_chunks) {
        count(&TransportCounters::write_chunks, plan.write_chunks);
        count(&TransportCounters::write_bytes, plan.write_chunk_bytes);
    }
    if (plan.reply_chunk_bytes) {
        count(&TransportCounters::reply_chunks);
        count(&TransportCounters::reply_bytes, plan.reply_chunk_bytes);
    } else {
        count(&TransportCounters::inline_replies);
    }
    ibv_send_wr* bad = nullptr;
    sends_in_flight_.push_back({send.wr_id, std::chrono::steady_clock::now()});
    sq_.take(chain);
    if (ibv_post_send(id_->qp, wrs.data(), &bad) != 0) {
        sq_.give(chain);
        auto node = work_.extract(send.wr_id);
        // Writes before `bad` were posted: their buffers stay until the QP is gone.
        if (bad != wrs.data()) lingering_.push_back(std::move(node.mapped()));
        release_credit();
        disconnect(std::string("ibv_post_send (reply): ") + std::strerror(errno));
    }
    return true;
}

void Connection::send_error(uint32_t xid, HeaderError::Answer err) {
    if (err == HeaderError::ErrVers) {
        count(&TransportCounters::err_vers);
    } else {
        count(&TransportCounters::err_chunk);
    }
    // No send buffer or send queue slot free: the RDMA_ERROR waits its turn like a reply
    // (it holds the call's credit until sent), never a disconnect.
    if (!starved_errors_.empty() || !try_send_error(xid, err)) {
        starved_errors_.emplace_back(xid, err);
        wait_for_buffers();
    }
}

bool Connection::try_send_error(uint32_t xid, HeaderError::Answer err) {
    if (!sq_.free()) {
        wait_for_send_queue(true);
        return false;
    }
    auto sb = dev_->sends().get();
    if (!sb) {
        short_of_ = &dev_->sends();
        return false;
    }
    auto hdr = encode_error(xid, grant(), err);
    std::memcpy(sb->data(), hdr.data(), hdr.size());
    post_inline_send(std::move(sb), hdr.size(), true, "RDMA_ERROR");
    return true;
}

void Connection::post_inline_send(BufferPtr buffer, size_t length, bool holds_credit,
                                  const char* what) {
    ibv_sge sge{reinterpret_cast<uintptr_t>(buffer->data()), static_cast<uint32_t>(length),
                buffer->lkey()};
    auto rec = std::make_unique<ReplyRecord>();
    rec->buffer = std::move(buffer);
    rec->holds_credit = holds_credit;
    ibv_send_wr wr{};
    wr.opcode = IBV_WR_SEND;
    wr.send_flags = IBV_SEND_SIGNALED;
    wr.sg_list = &sge;
    wr.num_sge = 1;
    wr.wr_id = track(std::move(rec));
    ibv_send_wr* bad = nullptr;
    sends_in_flight_.push_back({wr.wr_id, std::chrono::steady_clock::now()});
    sq_.take(1);
    if (ibv_post_send(id_->qp, &wr, &bad) != 0) {
        sq_.give(1);
        work_.erase(wr.wr_id);
        if (holds_credit) release_credit();
        disconnect(std::string("ibv_post_send (") + what + "): " + std::strerror(errno));
    }
}

void Connection::forget_completed_sends() {
    while (!sends_in_flight_.empty() && !work_.contains(sends_in_flight_.front().first)) {
        sends_in_flight_.pop_front();
        sends_progressed_ = true;
    }
}

void Connection::check_stalled_sends(std::chrono::steady_clock::time_point now,
                                     std::chrono::milliseconds limit) {
    // Sends complete in the order they were posted (one RC send queue): completed ones
    // leave the front (forget_completed_sends). Any gone since the last check means the
    // peer is taking replies; a deep queue draining slowly is progress, not a stall. Stalled: the
    // oldest Send is older than `limit` and none has completed for `limit` either.
    forget_completed_sends();
    if (std::exchange(sends_progressed_, false)) send_progress_at_ = now;
    if (closed_ || sends_in_flight_.empty() || limit.count() <= 0) return;
    const auto since = std::max(sends_in_flight_.front().second, send_progress_at_);
    const auto age = now - since;
    if (age < limit) return;
    count(&TransportCounters::stalled_sends);
    disconnect("a reply Send has not completed for " +
               std::to_string(std::chrono::duration_cast<std::chrono::seconds>(age).count()) +
               " s: the peer posts no receives (its credits and our buffers are released)");
}

}  // namespace nfsrdmad::rdma::verbs
