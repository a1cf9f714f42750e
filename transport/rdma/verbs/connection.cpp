#include "transport/rdma/verbs/connection.h"

#include <fcntl.h>

#include <spdlog/spdlog.h>
#include <algorithm>
#include <cerrno>
#include <chrono>
#include <cstring>
#include <utility>

namespace nfsrdmad::rdma::verbs {

// A posted work request and what it keeps alive until it completes.
struct Connection::Work {
    enum Kind { Receive, Read, Reply } kind;
    explicit Work(Kind k) : kind(k) {}
    virtual ~Work() = default;
    BufferPtr buffer;  // Receive: the receive buffer. Reply: the send buffer.
};

// One call, from its receive until its reply is sent.
struct Connection::CallWork {
    TransportHeader header;
    CallPlan plan;
    BufferPtr received;  // holds the inline RPC message
    BufferPtr message;   // RDMA_NOMSG: the pulled call
    BufferPtr payload;   // the pulled DDP item
    uint32_t reads_left = 0;
    bool failed = false;
};

// A work record for RDMA Reads of one call.
struct ReadRecord : Connection::Work {
    ReadRecord() : Work(Read) {}
    std::shared_ptr<Connection::CallWork> call;
};

// A work record for a reply's Send (and the Writes chained before it).
struct ReplyRecord : Connection::Work {
    ReplyRecord() : Work(Reply) {}
    std::vector<BufferPtr> staging;
    std::unique_ptr<rpc::PayloadBuffer> payload;
    std::shared_ptr<Connection::CallWork> call;  // keeps the received message alive
    bool holds_credit = true;
};

Connection::Connection(rdma_cm_id* id, std::shared_ptr<Device> dev, engine::Reactor& r,
                       ConnectionServices svc, const ConnectionOptions& o)
    : svc_(svc),
      id_(id),
      dev_(std::move(dev)),
      reactor_(r),
      opts_(o),
      peer_([id] {
          auto p = rpc::make_peer(rdma_get_peer_addr(id));
          p.rdma = true;
          return p;
      }()),
      credits_(o.credits) {}

Connection::~Connection() {
    // Work records own buffers; the QP and CQ go before them (reverse declaration order
    // would free the CQ first, so be explicit).
    if (id_ && id_->qp) rdma_destroy_qp(id_.get());
    work_.clear();
}

std::shared_ptr<Connection> Connection::create(rdma_cm_id* id, std::shared_ptr<Device> dev,
                                               engine::Reactor& reactor, ConnectionServices svc,
                                               const ConnectionOptions& opts, std::string* why) {
    std::shared_ptr<Connection> c(new Connection(id, std::move(dev), reactor, svc, opts));
    if (!c->setup(why)) {
        // The caller still owns `id`: it rejects the request, then destroys it.
        if (id->qp) rdma_destroy_qp(id);
        c->work_.clear();
        c->id_.release();
        return nullptr;
    }
    return c;
}

bool Connection::setup(std::string* why) {
    ibv_context* ctx = id_->verbs;
    channel_.reset(ibv_create_comp_channel(ctx));
    if (!channel_) {
        *why = std::string("ibv_create_comp_channel: ") + std::strerror(errno);
        return false;
    }
    // The reactor asks for events only when the fd is readable, and start() polls once
    // before any event exists: never block in ibv_get_cq_event.
    fcntl(channel_->fd, F_SETFL, fcntl(channel_->fd, F_GETFL) | O_NONBLOCK);
    const auto& a = dev_->attr();
    const int recv_depth = static_cast<int>(opts_.credits) * 2;
    const int send_depth = std::min<int>(a.max_qp_wr, static_cast<int>(opts_.credits) * 8 + 64);
    cq_.reset(
        ibv_create_cq(ctx, std::min(a.max_cqe, recv_depth + send_depth), this, channel_.get(), 0));
    if (!cq_) {
        *why = std::string("ibv_create_cq: ") + std::strerror(errno);
        return false;
    }
    ibv_qp_init_attr qa{};
    qa.send_cq = cq_.get();
    qa.recv_cq = cq_.get();
    qa.qp_type = IBV_QPT_RC;
    qa.cap.max_send_wr = send_depth;
    qa.cap.max_recv_wr = std::min(a.max_qp_wr, recv_depth);
    qa.cap.max_send_sge = std::min(a.max_sge, 8);
    qa.cap.max_recv_sge = 1;
    if (rdma_create_qp(id_.get(), dev_->pd(), &qa) != 0) {
        *why = std::string("rdma_create_qp: ") + std::strerror(errno);
        return false;
    }
    // Receives go up before accepting: the Linux client sends its first call as soon as
    // it is connected, possibly before ESTABLISHED reaches us.
    for (int i = 0; i < recv_depth; ++i) {
        if (!post_receive()) {
            *why = "cannot post receives: " + dev_->receives().last_error();
            return false;
        }
    }
    if (ibv_req_notify_cq(cq_.get(), 0) != 0) {
        *why = std::string("ibv_req_notify_cq: ") + std::strerror(errno);
        return false;
    }
    return true;
}

void Connection::start() {
    auto self = shared_from_this();
    watching_ =
        reactor_.add(channel_->fd, EPOLLIN, [self](uint32_t) { self->on_completion_event(); });
    // Poll and adaptive modes: the reactor polls the CQ itself, and arms its notification
    // only before it sleeps (adaptive). Event mode: the channel alone, re-armed per event.
    if (watching_ && reactor_.mode() != engine::Mode::Event) {
        poller_ = reactor_.add_poller({
            [self] { return self->reap() > 0; },
            [self] {
                ibv_req_notify_cq(self->cq_.get(), 0);
                return self->reap() > 0;
            },
        });
    }
    svc_.counters.credits_granted = opts_.credits;
    // Completions may already be waiting (see setup()).
    on_completion_event();
}

uint64_t Connection::track(std::unique_ptr<Work> w) {
    uint64_t id = next_id_++;
    work_.emplace(id, std::move(w));
    return id;
}

bool Connection::post_receive() {
    auto buf = dev_->receives().get();
    if (!buf) return false;
    ibv_sge sge{reinterpret_cast<uintptr_t>(buf->data()), static_cast<uint32_t>(buf->size()),
                buf->lkey()};
    auto w = std::make_unique<Work>(Work::Receive);
    w->buffer = std::move(buf);
    uint64_t id = track(std::move(w));
    ibv_recv_wr wr{};
    wr.wr_id = id;
    wr.sg_list = &sge;
    wr.num_sge = 1;
    ibv_recv_wr* bad = nullptr;
    if (ibv_post_recv(id_->qp, &wr, &bad) != 0) {
        work_.erase(id);
        return false;
    }
    ++receives_posted_;
    return true;
}

int Connection::reap() {
    if (closed_ && work_.empty()) return 0;  // torn down: the CQ stays quiet
    int total = 0;
    ibv_wc wcs[32];
    for (;;) {
        int n = ibv_poll_cq(cq_.get(), 32, wcs);
        if (n <= 0) break;
        for (int i = 0; i < n; ++i) handle(wcs[i]);
        total += n;
    }
    if (closed_ && work_.empty()) teardown();
    return total;
}

void Connection::on_completion_event() {
    if (closed_ && work_.empty()) return;
    ibv_cq* cq = nullptr;
    void* ctx = nullptr;
    if (ibv_get_cq_event(channel_.get(), &cq, &ctx) == 0) ibv_ack_cq_events(cq, 1);
    if (poller_) {  // the reactor polls and arms
        reap();
        return;
    }
    // Event mode: reap, re-arm, and reap what slipped in before the re-arm.
    do {
        reap();
        if (closed_ && work_.empty()) return;
        ibv_req_notify_cq(cq_.get(), 0);
    } while (reap() > 0);
}

void Connection::handle(const ibv_wc& wc) {
    count(&TransportCounters::completions);
    if (wc.status != IBV_WC_SUCCESS) {
        if (wc.status != IBV_WC_WR_FLUSH_ERR) {
            count(&TransportCounters::completion_errors);
            spdlog::warn("rdma {}: completion error: {} (opcode {})", peer_.text,
                         ibv_wc_status_str(wc.status), static_cast<int>(wc.opcode));
        }
        if (wc.wr_id) {
            auto it = work_.find(wc.wr_id);
            if (it != work_.end()) {
                if (it->second->kind == Work::Receive) --receives_posted_;
                if (it->second->kind == Work::Read) {
                    --reads_in_flight_;
                    static_cast<ReadRecord*>(it->second.get())->call->failed = true;
                }
                if (it->second->kind == Work::Reply &&
                    static_cast<ReplyRecord*>(it->second.get())->holds_credit)
                    release_credit();
                work_.erase(it);
            }
        }
        if (!closed_) disconnect("a work request failed");
        return;
    }
    if (!wc.wr_id) return;  // an unsignaled Write: nothing to do
    auto it = work_.find(wc.wr_id);
    if (it == work_.end()) return;
    switch (it->second->kind) {
        case Work::Receive:
            --receives_posted_;
            on_receive(wc.wr_id, wc.byte_len);
            break;
        case Work::Read:
            on_read_done(wc.wr_id);
            break;
        case Work::Reply:
            if (static_cast<ReplyRecord*>(it->second.get())->holds_credit) release_credit();
            work_.erase(it);
            forget_completed_sends();
            break;
    }
}

void Connection::release_credit() {
    credits_.on_reply();
}

void Connection::on_receive(uint64_t id, uint32_t len) {
    auto node = work_.extract(id);
    BufferPtr buf = std::move(node.mapped()->buffer);
    if (closed_) return;
    // Keep the receive queue full: the credits we grant promise it (RFC 8166 §3.3.1).
    if (!post_receive()) {
        disconnect("out of receive buffers: " + dev_->receives().last_error());
        return;
    }
    if (!credits_.on_call()) {
        count(&TransportCounters::credit_overruns);
        disconnect("the peer sent more calls than its " + std::to_string(credits_.granted()) +
                   " credits");
        return;
    }
    std::span<const uint8_t> msg(buf->data(), len);
    auto parsed = parse_header(msg, opts_.limits);
    if (auto* err = std::get_if<HeaderError>(&parsed)) {
        if (err->answer == HeaderError::Ignore) {
            if (err->why == "RDMA_DONE") count(&TransportCounters::done_ignored);
            spdlog::debug("rdma {}: ignoring message: {}", peer_.text, err->why);
            release_credit();
            return;
        }
        spdlog::info("rdma {}: {} for xid {:#x}: {}", peer_.text,
                     err->answer == HeaderError::ErrVers ? "ERR_VERS" : "ERR_CHUNK", err->xid,
                     err->why);
        send_error(err->xid, err->answer);
        return;
    }
    auto call = std::make_shared<CallWork>();
    call->header = std::move(std::get<TransportHeader>(parsed));
    call->plan = plan_call(call->header, len);
    call->received = std::move(buf);
    // The limits were fitted to our payload buffers (fit_to_buffer); never RDMA-Read
    // past the end of one, whatever the limits say.
    const size_t room = dev_->payloads().buffer_size();
    if ((call->plan.message_pulls && call->plan.message_pulls->length > room) ||
        (call->plan.payload_pulls && call->plan.payload_pulls->length > room)) {
        send_error(call->header.xid, HeaderError::ErrChunk);
        return;
    }
    switch (call->header.type) {
        case MsgType::NoMsg:
            count(&TransportCounters::calls_nomsg);
            break;
        default:
            count(&TransportCounters::calls_msg);
            break;
    }
    if (call->plan.read_bytes() == 0) {
        dispatch(std::move(call));
        return;
    }
    start_reads(std::move(call));
}

bool Connection::reserve_pulls(CallWork& call) {
    // on_receive() refused any pull set larger than one buffer.
    auto get = [&](BufferPtr& into) {
        if (into) return true;  // reserved on an earlier try
        into = dev_->payloads().get();
        return into != nullptr;
    };
    if ((call.plan.message_pulls && !get(call.message)) ||
        (call.plan.payload_pulls && !get(call.payload))) {
        call.message.reset();  // hold nothing while waiting
        call.payload.reset();
        short_of_ = &dev_->payloads();
        return false;
    }
    return true;
}

void Connection::start_reads(std::shared_ptr<CallWork> call) {
    // Calls that wait for registered memory go first: arrival order is kept.
    if (!starved_calls_.empty() || !reserve_pulls(*call)) {
        starved_calls_.push_back(std::move(call));
        wait_for_buffers();
        return;
    }
    begin_reads(std::move(call));
}

void Connection::begin_reads(std::shared_ptr<CallWork> call) {
    auto queue = [&](const PullSet& set, Buffer* into) {
        for (const auto& p : set.pulls) {
            if (p.remote.length == 0) continue;
            read_queue_.push_back({call, p, into});
            ++call->reads_left;
        }
        count(&TransportCounters::read_chunks);
        count(&TransportCounters::read_bytes, set.length);
    };
    if (call->plan.message_pulls) queue(*call->plan.message_pulls, call->message.get());
    if (call->plan.payload_pulls) queue(*call->plan.payload_pulls, call->payload.get());
    if (call->reads_left == 0) {
        dispatch(std::move(call));
        return;
    }
    pump_reads();
}

void Connection::wait_for_buffers() {
    MemoryPool* pool = std::exchange(short_of_, nullptr);
    if (closed_ || !pool || std::ranges::find(awaiting_, pool) != awaiting_.end()) return;
    count(&TransportCounters::buffer_waits);
    std::weak_ptr<Connection> weak = weak_from_this();
    auto wake = [weak, pool] {
        if (auto self = weak.lock())
            self->reactor_.post([self, pool] {
                std::erase(self->awaiting_, pool);
                self->retry_starved();
            });
    };
    // A buffer came back between the failed attempt and now: retry at once (and hand
    // this one back, retry_starved() takes its own).
    if (pool->get_or_notify(wake))
        return reactor_.post([weak] {
            if (auto self = weak.lock()) self->retry_starved();
        });
    awaiting_.push_back(pool);
}

void Connection::retry_starved() {
    if (closed_) return;
    // Replies first: they give buffers and credits back.
    while (!starved_replies_.empty()) {
        auto [call, reply] = starved_replies_.front();
        if (!try_send_reply(call, **reply)) return wait_for_buffers();
        if (closed_) return;  // the attempt failed hard: disconnect() emptied the queues
        starved_replies_.pop_front();
    }
    while (!starved_calls_.empty() && !closed_) {
        auto call = starved_calls_.front();
        if (!reserve_pulls(*call)) return wait_for_buffers();
        starved_calls_.pop_front();
        begin_reads(std::move(call));
    }
}

void Connection::pump_reads() {
    // RDMA Reads in flight never exceed what the peer granted us (its initiator depth).
    while (!read_queue_.empty() && reads_in_flight_ < opts_.initiator_depth && !closed_) {
        PendingRead r = std::move(read_queue_.front());
        read_queue_.pop_front();
        auto rec = std::make_unique<ReadRecord>();
        rec->call = r.call;
        uint64_t id = track(std::move(rec));
        ibv_sge sge{reinterpret_cast<uintptr_t>(r.into->data() + r.pull.offset),
                    r.pull.remote.length, r.into->lkey()};
        ibv_send_wr wr{};
        wr.wr_id = id;
        wr.opcode = IBV_WR_RDMA_READ;
        wr.send_flags = IBV_SEND_SIGNALED;
        wr.sg_list = &sge;
        wr.num_sge = 1;
        wr.wr.rdma.remote_addr = r.pull.remote.offset;
        wr.wr.rdma.rkey = r.pull.remote.handle;
        ibv_send_wr* bad = nullptr;
        if (ibv_post_send(id_->qp, &wr, &bad) != 0) {
            work_.erase(id);
            disconnect(std::string("ibv_post_send (RDMA Read): ") + std::strerror(errno));
            return;
        }
        ++reads_in_flight_;
    }
}

void Connection::on_read_done(uint64_t id) {
    auto node = work_.extract(id);
    auto call = static_cast<ReadRecord*>(node.mapped().get())->call;
    --reads_in_flight_;
    pump_reads();
    if (--call->reads_left == 0 && !call->failed) dispatch(std::move(call));
}

void Connection::dispatch(std::shared_ptr<CallWork> call) {
    auto self = shared_from_this();
    svc_.workers.submit([self, call] {
        rpc::Message msg;
        const auto& p = call->plan;
        if (call->message) {
            msg.bytes = {call->message->data(), p.message_length};
        } else {
            msg.bytes = {call->received->data() + p.message_offset, p.message_length};
        }
        if (call->payload)
            msg.read_chunk = xdr::ReadChunk{*p.payload_position,
                                            {call->payload->data(), p.payload_pulls->length}};
        auto reply = std::make_shared<std::optional<rpc::Reply>>(
            self->svc_.dispatcher.dispatch(msg, self->peer_, self->dev_->allocator()));
        self->reactor_.post([self, call, reply] { self->send_reply(call, reply); });
    });
}

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
    in.credits = credits_.granted();
    in.rpc_reply = reply->bytes;
    in.payload = reply->payload;
    in.inline_threshold = std::min(opts_.peer_receive, opts_.inline_size);
    in.remote_invalidate = opts_.peer_remote_invalidate;
    ReplyPlan plan = plan_reply(in);
    if (plan.type == MsgType::Error) {
        spdlog::info("rdma {}: ERR_CHUNK for xid {:#x}: {}", peer_.text, call->header.xid,
                     plan.error);
        send_error(call->header.xid, HeaderError::ErrChunk);
        return true;
    }

    auto rec = std::make_unique<ReplyRecord>();
    rec->call = call;
    const Buffer* payload_buf = nullptr;
    if (auto* rp = dynamic_cast<RegisteredPayload*>(reply->payload_owner.get()))
        payload_buf = &rp->buffer();

    // Spans in registered memory go out as they are; the rest (RPC header, attributes,
    // directory entries) is staged into registered buffers.
    auto gather = [&](const std::vector<Bytes>& pieces, Gather& g) -> bool {
        for (Bytes b : pieces) {
            if (payload_buf && payload_buf->contains(b.data(), b.size())) {
                g.sges.push_back({reinterpret_cast<uintptr_t>(b.data()),
                                  static_cast<uint32_t>(b.size()), payload_buf->lkey()});
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
                if (reply->payload && b.data() >= reply->payload->data.data() &&
                    b.data() < reply->payload->data.data() + reply->payload->data.size())
                    count(&TransportCounters::payload_memcpy_bytes, n);
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
    // Header and staged pieces share one send buffer when they fit (the usual case).
    {
        auto sb = dev_->sends().get();
        if (!sb) {
            short_of_ = &dev_->sends();
            return false;
        }
        size_t off = 0;
        for (Bytes b : send_pieces) {
            if (payload_buf && payload_buf->contains(b.data(), b.size())) {
                sg.sges.push_back({reinterpret_cast<uintptr_t>(b.data()),
                                   static_cast<uint32_t>(b.size()), payload_buf->lkey()});
                continue;
            }
            if (off + b.size() > sb->size()) {
                disconnect("a reply does not fit its send buffer");
                return true;
            }
            std::memcpy(sb->data() + off, b.data(), b.size());
            sg.sges.push_back({reinterpret_cast<uintptr_t>(sb->data() + off),
                               static_cast<uint32_t>(b.size()), sb->lkey()});
            off += b.size();
            staged += b.size();
        }
        std::erase_if(sg.sges, [](const ibv_sge& s) { return s.length == 0; });
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
    rec->payload = std::move(reply->payload_owner);
    send.wr_id = track(std::move(rec));

    count(&TransportCounters::staged_bytes, staged);
    if (plan.write_chunk_bytes) {
        count(&TransportCounters::write_chunks);
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
    if (ibv_post_send(id_->qp, wrs.data(), &bad) != 0) {
        auto node = work_.extract(send.wr_id);
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
    auto sb = dev_->sends().get();
    if (!sb) {
        release_credit();
        disconnect("out of send buffers");
        return;
    }
    auto hdr = encode_error(xid, credits_.granted(), err);
    std::memcpy(sb->data(), hdr.data(), hdr.size());
    ibv_sge sge{reinterpret_cast<uintptr_t>(sb->data()), static_cast<uint32_t>(hdr.size()),
                sb->lkey()};
    auto rec = std::make_unique<ReplyRecord>();
    rec->buffer = std::move(sb);
    ibv_send_wr wr{};
    wr.opcode = IBV_WR_SEND;
    wr.send_flags = IBV_SEND_SIGNALED;
    wr.sg_list = &sge;
    wr.num_sge = 1;
    wr.wr_id = track(std::move(rec));
    ibv_send_wr* bad = nullptr;
    sends_in_flight_.push_back({wr.wr_id, std::chrono::steady_clock::now()});
    if (ibv_post_send(id_->qp, &wr, &bad) != 0) {
        work_.erase(wr.wr_id);
        release_credit();
        disconnect(std::string("ibv_post_send (RDMA_ERROR): ") + std::strerror(errno));
    }
}

void Connection::disconnect(const std::string& why) {
    if (closed_) return;
    closed_ = true;
    svc_.counters.disconnects++;
    spdlog::info("rdma {}: disconnecting: {}", peer_.text, why);
    read_queue_.clear();
    sends_in_flight_.clear();
    starved_calls_.clear();
    starved_replies_.clear();
    // Moving the QP to the error state flushes every posted work request; their
    // completions release the buffers (handle()), then teardown() runs.
    rdma_disconnect(id_.get());
    ibv_qp_attr attr{};
    attr.qp_state = IBV_QPS_ERR;
    ibv_modify_qp(id_->qp, &attr, IBV_QP_STATE);
    reap();
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

void Connection::on_cm_disconnected() {
    disconnect("the peer disconnected");
}

void Connection::teardown() {
    if (poller_) {
        reactor_.remove_poller(poller_);  // drops the poller's reference to us
        poller_ = 0;
    }
    if (watching_) {
        reactor_.remove(channel_->fd);  // drops the reactor's reference to us
        watching_ = false;
    }
}

}  // namespace nfsrdmad::rdma::verbs
