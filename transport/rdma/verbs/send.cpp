// Replies, RFC 8166 §3.4-4: the reply plan says which parts of the RPC reply go by RDMA
// Write into the requester's write chunk or reply chunk and what rides inline in the
// Send; one chain of Writes (posted in parts when it is longer than the send queue) ends
// in one signaled Send (or Send With Invalidate, RFC 8166 §3.4.7 when the peer asked for
// it in its private data, RFC 8797).
//
// What it copies: nothing of the file data. READ payload sits in a registered payload
// buffer the file was read into, and goes out as it is; the RPC header, attributes and
// directory entries are staged into registered send (or payload) buffers
// (counters: staged_bytes; payload_memcpy_bytes must stay 0).
//
// What it bounds: a reply that finds no send buffer, or too few send queue slots for its
// Writes and Send, waits in order (starved_replies_) and goes first when one frees up,
// since it hands a credit and buffers back. A reply longer than the whole send queue is
// posted in parts (send_queue.h, post_reply below), never refused. A Send the peer does
// not take (it posts no receives) ends the connection after `send_timeout`
// (check_stalled_sends): never an unbounded hold on credits and memory.
#include <spdlog/spdlog.h>

#include <algorithm>
#include <chrono>
#include <cstring>
#include <string>
#include <utility>

#include "transport/rdma/verbs/connection.h"
#include "transport/rdma/verbs/work.h"

namespace nfsrdmad::rdma::verbs {

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
    if (reply_) return post_reply();  // this reply (the oldest), built and partly posted
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
    // Build it only when the queue takes something of it now: a reply waiting for slots
    // holds no staging buffers (until a part of it is posted: then reply_ holds them).
    if (next_chain_part(plan.writes.size(), sq_.free(), sq_.depth()).empty()) {
        wait_for_send_queue(true);
        return false;
    }

    auto p = std::make_unique<ReplyInProgress>();
    p->rec = std::make_unique<ReplyRecord>();
    ReplyRecord* rec = p->rec.get();
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
        return std::any_of(reply->payloads.begin(), reply->payloads.end(), [&](const auto& pl) {
            return b.data() >= pl.data.data() && b.data() < pl.data.data() + pl.data.size();
        });
    };

    // Spans in registered memory go out as they are; the rest (RPC header, attributes,
    // directory entries) is staged into registered buffers.
    uint64_t staged = 0;
    auto gather = [&](const std::vector<Bytes>& pieces, std::vector<ibv_sge>& sges) -> bool {
        for (Bytes b : pieces) {
            if (const Buffer* buf = registered_in(b)) {
                sges.push_back({reinterpret_cast<uintptr_t>(b.data()),
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
                if (is_payload(b)) count(Tc::payload_memcpy_bytes, n);
                sges.push_back({reinterpret_cast<uintptr_t>(nb->data()), static_cast<uint32_t>(n),
                                nb->lkey()});
                staged += n;
                rec->staging.push_back(std::move(nb));
                b = b.subspan(n);
            }
        }
        return true;
    };

    p->wrs.resize(plan.writes.size() + 1);
    p->sges.resize(plan.writes.size() + 1);
    for (size_t i = 0; i < plan.writes.size(); ++i) {
        const auto& push = plan.writes[i];
        if (!gather(push.local, p->sges[i])) return false;  // staging buffers go back
        // The plan gives a Write at most max_sge pieces, and each becomes one entry (a
        // staged piece fits one buffer: replies are at most a payload buffer long).
        if (p->sges[i].size() > max_send_sge_) {
            spdlog::warn("rdma {}: ERR_CHUNK for xid {:#x}: a Write gathers {} pieces, the QP {}",
                         peer_.text, call->header.xid, p->sges[i].size(), max_send_sge_);
            send_error(call->header.xid, HeaderError::ErrChunk);
            return true;
        }
        ibv_send_wr& wr = p->wrs[i];
        wr.opcode = IBV_WR_RDMA_WRITE;
        wr.sg_list = p->sges[i].data();
        wr.num_sge = static_cast<int>(p->sges[i].size());
        wr.wr.rdma.remote_addr = push.remote.offset;
        wr.wr.rdma.rkey = push.remote.handle;
        wr.next = &p->wrs[i + 1];
    }
    // The Send: transport header, then (RDMA_MSG) the inline reply.
    std::vector<Bytes> send_pieces;
    send_pieces.push_back(plan.header);
    for (auto b : plan.send) send_pieces.push_back(b);
    std::vector<ibv_sge>& sg = p->sges.back();
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
            sg.clear();
            size_t off = 0;
            uint64_t copied_payload = 0;
            for (Bytes b : send_pieces) {
                const Buffer* buf = copy_all ? nullptr : registered_in(b);
                if (buf) {
                    sg.push_back({reinterpret_cast<uintptr_t>(b.data()),
                                  static_cast<uint32_t>(b.size()), buf->lkey()});
                    continue;
                }
                if (off + b.size() > sb->size()) {
                    disconnect("a reply does not fit its send buffer");
                    return true;
                }
                std::memcpy(sb->data() + off, b.data(), b.size());
                if (copy_all && registered_in(b)) copied_payload += b.size();
                sg.push_back({reinterpret_cast<uintptr_t>(sb->data() + off),
                              static_cast<uint32_t>(b.size()), sb->lkey()});
                off += b.size();
            }
            merge_adjacent(sg);
            if (sg.size() <= max_send_sge_) {
                staged += off;
                if (copied_payload) {
                    count(Tc::payload_memcpy_bytes, copied_payload);
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
    ibv_send_wr& send = p->wrs.back();
    send.opcode = plan.invalidate ? IBV_WR_SEND_WITH_INV : IBV_WR_SEND;
    if (plan.invalidate) {
        send.invalidate_rkey = *plan.invalidate;
        count(Tc::send_invalidate);
    }
    send.send_flags = IBV_SEND_SIGNALED;
    send.sg_list = sg.data();
    send.num_sge = static_cast<int>(sg.size());
    rec->payloads = std::move(reply->payload_owners);

    count(Tc::staged_bytes, staged);
    if (plan.write_chunks) {
        count(Tc::write_chunks, plan.write_chunks);
        count(Tc::write_bytes, plan.write_chunk_bytes);
    }
    if (plan.reply_chunk_bytes) {
        count(Tc::reply_chunks);
        count(Tc::reply_bytes, plan.reply_chunk_bytes);
    } else {
        count(Tc::inline_replies);
    }
    reply_ = std::move(p);
    return post_reply();
}

//   the reply's chain:   W W W W W W W W W W W W W W W W W W W W S
//   posted in one go:    └──────────── unsignaled ──────────────┘ signaled: frees all
//   or, longer than the queue, in parts:
//                        W W W W W W W*│W W W W W W W*│W W W W W W S
//                        part (last Write signaled: frees the part) ... the rest
bool Connection::post_reply() {
    ReplyInProgress& p = *reply_;
    const size_t writes = p.wrs.size() - 1;
    const ChainPart part = next_chain_part(writes - p.posted, sq_.free(), sq_.depth());
    if (part.empty()) {
        wait_for_send_queue(true);
        return false;
    }
    ibv_send_wr* first = &p.wrs[p.posted];
    const size_t n = part.writes + (part.send ? 1 : 0);
    ibv_send_wr& last = p.wrs[p.posted + n - 1];
    if (part.send) {  // the rest and the Send, whose completion frees them
        p.rec->slots = static_cast<uint32_t>(n);
        last.wr_id = track(std::move(p.rec));
        sends_in_flight_.push_back({last.wr_id, engine::Reactor::coarse_now()});
    } else {  // a part: its last Write signaled, to free its slots
        last.next = nullptr;
        last.send_flags = IBV_SEND_SIGNALED;
        auto rec = std::make_unique<Work>(Work::WritePart);
        rec->slots = static_cast<uint32_t>(n);
        last.wr_id = track(std::move(rec));
        count(Tc::reply_parts);
    }
    sq_.take(n);
    ibv_send_wr* bad = nullptr;
    if (ibv_post_send(id_->qp, first, &bad) != 0) {
        sq_.give(n);
        auto node = work_.extract(last.wr_id);
        // Writes posted before (earlier parts, or this post before `bad`) may still read
        // the reply's buffers: they stay until the QP is gone.
        const bool some_posted = p.posted || bad != first;
        if (part.send) {
            if (some_posted) lingering_.push_back(std::move(node.mapped()));
        } else if (some_posted) {
            lingering_.push_back(std::move(p.rec));
        }
        reply_.reset();
        release_credit();
        disconnect(std::string("ibv_post_send (reply): ") + std::strerror(errno));
        return true;
    }
    if (part.send) {
        reply_.reset();
        return true;
    }
    p.posted += part.writes;
    // The part's completion (or an earlier one) posts more: on_send_queue_room. Not a
    // wait that found the queue full, so not counted as one.
    sq_short_ = replies_want_sq_ = true;
    return false;
}

void Connection::send_error(uint32_t xid, HeaderError::Answer err) {
    if (err == HeaderError::ErrVers) {
        count(Tc::err_vers);
    } else {
        count(Tc::err_chunk);
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
    sends_in_flight_.push_back({wr.wr_id, engine::Reactor::coarse_now()});
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
    count(Tc::stalled_sends);
    disconnect("a reply Send has not completed for " +
               std::to_string(std::chrono::duration_cast<std::chrono::seconds>(age).count()) +
               " s: the peer posts no receives (its credits and our buffers are released)");
}

}  // namespace nfsrdmad::rdma::verbs
