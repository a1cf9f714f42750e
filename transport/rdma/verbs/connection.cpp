// The connection's life: the QP on the device's shared receive queue, its completion
// queue and how the reactor reaps it, backpressure when registered memory runs out, and
// the way down (disconnect, flush, teardown). What a connection owns and its bounds:
//
//   - one QP and the CQ of its send queue. Receives are not its own: they are the
//     device's (SRQ), so a connection costs no registered memory while idle, and a
//     thousand cost the same receive memory as one; they complete on the reactor's
//     receive CQ (receive_completions.h), which hands them to us by QP number. Its send
//     queue is counted (send_queue.h): a work request per credit and room for Reads and
//     reverse calls; work that finds it full waits for completions, and a reply longer
//     than the whole queue is posted in parts. The CQ is as deep as the send queue.
//   - work_: one record per signaled work request it posted (RDMA Reads, reply Sends,
//     the last Write of a part of a reply posted in parts), each owning the buffers the
//     request uses (a part's record owns none: its reply's does); a QP in error flushes
//     them all, so a disconnect gives every buffer back before teardown() releases it.
//   - at most `credits` calls at a time (the largest grant it was ever sent), and
//     `initiator_depth` RDMA Reads in flight (what the peer's connect request allows,
//     at most kMaxReadsInFlight), of at most `read_bytes` (ReadWindow).
//   - calls and replies that found a pool empty, or the send queue full, wait in order
//     (starved_*), holding nothing (but reply_, the oldest reply, once a part of it is
//     posted: its buffers), until the pool hands a buffer back or a completion
//     frees slots: a shortage is never a disconnect.
#include "transport/rdma/verbs/connection.h"

#include <fcntl.h>

#include <spdlog/spdlog.h>
#include <algorithm>
#include <cerrno>
#include <chrono>
#include <cstring>
#include <utility>

#include "transport/rdma/verbs/cq_events.h"
#include "transport/rdma/verbs/work.h"

namespace nfsrdmad::rdma::verbs {

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
      credits_(dev_->credit_share(o.credits)),
      pending_(svc.max_back_calls),
      reads_(o.initiator_depth, o.read_bytes) {}

Connection::~Connection() {
    if (svc_.channels) svc_.channels->remove(peer_.conn);
    svc_.dispatcher.connection_closed(peer_.conn);
    // Work records own buffers; the QP and CQ go before them (reverse declaration order
    // would free the CQ first, so be explicit). A receive the QP took that was not
    // reaped by now goes back through the reactor's receive CQ (a stray there).
    if (rcq_) rcq_->detach(qp_num_);
    if (id_ && id_->qp) rdma_destroy_qp(id_.get());
    if (!early_.empty()) {  // never started: what arrived goes back to the shared queue
        for (const ibv_wc& wc : early_) dev_->receive_queue().take(wc.wr_id);
        dev_->receive_queue().refill();
    }
    reply_.reset();
    lingering_.clear();
    work_.clear();
    if (attached_) dev_->detach();
}

std::shared_ptr<Connection> Connection::create(rdma_cm_id* id, std::shared_ptr<Device> dev,
                                               engine::Reactor& reactor, ConnectionServices svc,
                                               const ConnectionOptions& opts, std::string* why) {
    std::shared_ptr<Connection> c(new Connection(id, std::move(dev), reactor, svc, opts));
    if (!c->setup(why)) {
        // The caller still owns `id`: it rejects the request, then destroys it.
        if (c->rcq_) c->rcq_->detach(c->qp_num_);
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
    // Our CQ takes the send queue's completions only: at most one per work request the
    // queue holds (a flush completes unsignaled ones too), so it is as deep as the queue
    // and cannot overflow. With the Linux client that is 208 entries, which Soft-RoCE
    // rounds up to a ring of 256. Receives complete on the reactor's CQ, sized to the
    // shared receive queue.
    const int send_depth = std::min<int>(
        a.max_qp_wr, rdma::send_queue_depth(opts_.send_queue_depth, opts_.credits,
                                            opts_.initiator_depth, svc_.max_back_calls));
    sq_ = SendQueueSlots(static_cast<uint32_t>(send_depth));
    cq_.reset(ibv_create_cq(ctx, std::min(a.max_cqe, send_depth), this, channel_.get(), 0));
    if (!cq_) {
        *why = std::string("ibv_create_cq: ") + std::strerror(errno);
        return false;
    }
    rcq_ = dev_->receive_completions(reactor_, why);
    if (!rcq_) return false;
    ibv_qp_init_attr qa{};
    qa.send_cq = cq_.get();
    qa.recv_cq = rcq_->cq();
    qa.qp_type = IBV_QPT_RC;
    qa.cap.max_send_wr = send_depth;
    // Gather entries per send work request. A reply needs three at most on the paths a
    // client takes every day: the transport and RPC header staged in one send buffer, the
    // file data where it was read, and what follows the data (XDR padding, a COMPOUND's
    // trailing results) staged again. Longer gathers are split into more Writes or
    // copied into the send buffer (send.cpp). Every slot of the send queue is sized for
    // the largest gather, and providers allocate it per connection: on Soft-RoCE a send
    // slot is 208 bytes of work request plus 16 per entry, rounded up to a power of two,
    // so 8 entries took 512 bytes a slot and 3 take 256 (half the send queue's memory);
    // on a ConnectX, 3 entries fit two 64-byte blocks where 8 take three.
    qa.cap.max_send_sge = std::max(1, std::min(a.max_sge, 3));
    max_send_sge_ = qa.cap.max_send_sge;  // what we asked for; the device may give more
    // Receives come from the device's shared receive queue, already posted: the Linux
    // client may send its first call before ESTABLISHED reaches us, and finds one.
    qa.srq = dev_->receive_queue().get();
    if (rdma_create_qp(id_.get(), dev_->pd(), &qa) != 0) {
        *why = std::string("rdma_create_qp: ") + std::strerror(errno);
        return false;
    }
    // Receives may complete as soon as we accept: the reactor's CQ finds us by QP
    // number from now on (on_receive_completion keeps them until start()).
    qp_num_ = id_->qp->qp_num;
    rcq_->attach(qp_num_, weak_from_this());
    dev_->attach();
    attached_ = true;
    if (ibv_req_notify_cq(cq_.get(), 0) != 0) {
        *why = std::string("ibv_req_notify_cq: ") + std::strerror(errno);
        return false;
    }
    cq_notify_.armed();
    return true;
}

void Connection::start() {
    auto self = shared_from_this();
    watching_ =
        reactor_.add(channel_->fd, EPOLLIN, [self](uint32_t) { self->on_completion_event(); });
    // Poll and adaptive modes: the reactor polls the CQ itself, and arms its notification
    // only before it sleeps (adaptive). Event mode: the channel alone, re-armed per event.
    // Only work we posted completes on this CQ (receives are the shared queue's, and every
    // chain of Writes ends in a tracked, signaled Send), so with none in flight there is
    // nothing to poll: a reactor's idle connections cost its loop a test each.
    if (watching_ && reactor_.mode() != engine::Mode::Event) {
        poller_ = reactor_.add_poller({
            [self] { return !self->work_.empty() && self->reap() > 0; },
            [self] {
                // A standing request: whatever completed since raised the event, which
                // wakes the reactor (cq_events.h). A new one: reap what came before it.
                if (!self->cq_notify_.arm([&] { return ibv_req_notify_cq(self->cq_.get(), 0); }))
                    return false;
                self->count(Tc::cq_arms);
                return self->reap() > 0;
            },
        });
    }
    granted_ = credits_.granted();
    svc_.counters.credits_granted = credits_.granted();
    if (svc_.channels) {  // RFC 8167 calls to the peer
        port_ = std::make_shared<ReverseCallPort>(self, reactor_, svc_.workers);
        svc_.channels->add(peer_.conn, port_);
    }
    started_ = true;
    // Calls may already have arrived (see setup()), in order.
    for (const ibv_wc& wc : std::exchange(early_, {})) handle(wc);
    on_completion_event();
}

void Connection::on_receive_completion(const ibv_wc& wc) {
    if (!started_ && !closed_) {
        early_.push_back(wc);
        return;
    }
    // A reply's Send completion frees the credit the peer's next call may spend; it is on
    // our own CQ, so reap that first (one CQ used to order them).
    reap();
    handle(wc);
}

uint64_t Connection::track(std::unique_ptr<Work> w) {
    uint64_t id = next_id_++;
    work_.emplace(id, std::move(w));
    return id;
}

int Connection::reap() {
    if (torn_down_) return 0;  // the CQ stays quiet
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
    if (torn_down_) return;
    on_cq_event(
        channel_.get(), cq_.get(), poller_ ? &cq_notify_ : nullptr, [this] { return reap(); },
        [this] { return torn_down_; });
}

void Connection::handle(const ibv_wc& wc) {
    count(Tc::completions);
    if (wc.status != IBV_WC_SUCCESS) {
        if (wc.status != IBV_WC_WR_FLUSH_ERR) {
            count(Tc::completion_errors);
            spdlog::warn("rdma {}: completion error: {} (opcode {})", peer_.text,
                         ibv_wc_status_str(wc.status), static_cast<int>(wc.opcode));
        }
        if (SharedReceiveQueue::is_receive(wc.wr_id)) {
            dev_->receive_queue().take(wc.wr_id);  // the buffer goes back to the pool
            dev_->receive_queue().refill();
        } else if (wc.wr_id) {  // a Read, a reply's Send, a part's last Write
            auto it = work_.find(wc.wr_id);
            if (it != work_.end()) {
                if (it->second->kind == Work::Read) {
                    auto* rec = static_cast<ReadRecord*>(it->second.get());
                    read_finished(rec->bytes);
                    rec->call->failed = true;
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
    if (SharedReceiveQueue::is_receive(wc.wr_id)) {
        auto buf = dev_->receive_queue().take(wc.wr_id);
        // Keep the shared queue full before anything else (RFC 8166 §3.3.1: the credits
        // granted promise posted receives).
        dev_->receive_queue().refill();
        if (buf) on_receive(std::move(buf), wc.byte_len);
        return;
    }
    if (!wc.wr_id) return;  // an unsignaled Write: nothing to do
    auto it = work_.find(wc.wr_id);
    if (it == work_.end()) return;
    // The send queue completes in order: this completion frees the Writes before it too.
    sq_.give(it->second->slots);
    switch (it->second->kind) {
        case Work::Read:
            on_read_done(wc.wr_id);
            break;
        case Work::Reply:
            if (static_cast<ReplyRecord*>(it->second.get())->holds_credit) release_credit();
            work_.erase(it);
            forget_completed_sends();
            break;
        case Work::WritePart:  // its slots are back; the reply's record holds the buffers
            work_.erase(it);
            break;
    }
    on_send_queue_room();
}

void Connection::wait_for_send_queue(bool reply) {
    if (!sq_short_) count(Tc::send_queue_waits);
    sq_short_ = true;
    replies_want_sq_ = replies_want_sq_ || reply;
}

void Connection::on_send_queue_room() {
    if (!std::exchange(sq_short_, false) || closed_) return;
    // Replies first: they give credits and buffers back. A reply that still does not fit
    // sets both flags again, and Reads keep waiting behind it.
    replies_want_sq_ = false;
    retry_starved();
    pump_reads();
}

void Connection::release_credit() {
    credits_.on_reply();
}

uint32_t Connection::grant() {
    const uint32_t g = credits_.grant(dev_->credit_share(opts_.credits));
    granted_.store(g, std::memory_order_relaxed);
    // Written only when it changes: a store on every reply would take the line from every
    // other core that counts here.
    if (svc_.counters.credits_granted.load(std::memory_order_relaxed) != g)
        svc_.counters.credits_granted.store(g, std::memory_order_relaxed);
    return g;
}

void Connection::wait_for_buffers() {
    MemoryPool* pool = std::exchange(short_of_, nullptr);
    if (closed_ || !pool || std::ranges::find(awaiting_, pool) != awaiting_.end()) return;
    count(Tc::buffer_waits);
    std::weak_ptr<Connection> weak = weak_from_this();
    // Runs on whichever thread returns a buffer, perhaps a worker: the reference it
    // takes moves into the reactor's closure, so the connection never dies off it.
    auto wake = [weak, pool] {
        if (auto self = weak.lock()) {
            engine::Reactor& r = self->reactor_;
            r.post([self = std::move(self), pool] {
                std::erase(self->awaiting_, pool);
                self->retry_starved();
            });
        }
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
    // A reply in parts needs only send queue slots, and holds buffers: it goes on before
    // anything that could wait for a buffer (an RDMA_ERROR short of a send buffer would
    // otherwise hold it back, and the buffers it holds with it).
    if (reply_ && post_reply()) {
        if (closed_) return;
        starved_replies_.pop_front();
    }
    // Errors and replies first: they give buffers and credits back.
    while (!starved_errors_.empty()) {
        auto [xid, err] = starved_errors_.front();
        if (!try_send_error(xid, err)) return wait_for_buffers();
        if (closed_) return;
        starved_errors_.pop_front();
    }
    while (!starved_replies_.empty()) {
        auto [call, reply] = starved_replies_.front();
        if (!try_send_reply(call, **reply)) return wait_for_buffers();
        if (closed_) return;  // the attempt failed hard: disconnect() emptied the queues
        starved_replies_.pop_front();
    }
    while (!starved_back_calls_.empty()) {
        const auto& [xid, message] = starved_back_calls_.front();
        // Beyond the client's reverse grant: the call waits for a reply (on_reverse_reply).
        if (back_sent_.size() >= back_grant_ && pending_.contains(xid)) break;
        if (!try_send_back_call(xid, message)) return wait_for_buffers();
        if (closed_) return;
        starved_back_calls_.pop_front();
    }
    while (!starved_calls_.empty() && !closed_) {
        auto call = starved_calls_.front();
        if (!reserve_pulls(*call)) return wait_for_buffers();
        starved_calls_.pop_front();
        svc_.counters.calls_waiting--;
        begin_reads(std::move(call));
    }
}

void Connection::disconnect(const std::string& why) {
    if (closed_) return;
    closed_ = true;
    svc_.counters.disconnects++;
    if (std::exchange(attached_, false)) dev_->detach();  // the others' share grows now
    spdlog::info("rdma {}: disconnecting: {}", peer_.text, why);
    read_queue_.clear();
    sends_in_flight_.clear();
    svc_.counters.calls_waiting -= starved_calls_.size();
    starved_calls_.clear();
    for (auto& [key, d] : deferred_) reactor_.cancel(d.timer);
    deferred_.clear();
    starved_errors_.clear();
    starved_replies_.clear();
    if (reply_) {  // Writes of it already posted may still read its buffers
        if (reply_->posted) lingering_.push_back(std::move(reply_->rec));
        reply_.reset();
    }
    starved_back_calls_.clear();
    if (svc_.channels) svc_.channels->remove(peer_.conn);
    finish_back_calls(pending_.fail_all("the connection closed"));
    // Moving the QP to the error state flushes every posted work request; their
    // completions release the buffers (handle()), then teardown() runs.
    rdma_disconnect(id_.get());
    ibv_qp_attr attr{};
    attr.qp_state = IBV_QPS_ERR;
    ibv_modify_qp(id_->qp, &attr, IBV_QP_STATE);
    reap();
}

void Connection::on_cm_disconnected() {
    disconnect("the peer disconnected");
}

// Closed and nothing posted is left to complete: the reactor lets go of us. (Receives
// are the SRQ's, so an idle connection has no work at all when it closes: disconnect()'s
// reap() lands here at once.)
void Connection::teardown() {
    torn_down_ = true;
    // Receives our QP took before it entered the error state that the reactor has not
    // reaped yet: reaped now, from the top of the reactor's loop and while the QP exists
    // (receive_completions.h), then we stop taking them; later ones are strays.
    reactor_.post([self = shared_from_this()] {
        self->rcq_->reap();
        self->rcq_->detach(self->qp_num_);
    });
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
