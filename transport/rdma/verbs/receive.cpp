// A call's arrival, RFC 8166 §4-5 from the responder's side: the receive the device's
// shared queue filled is charged a credit, its transport header parsed and checked
// against our limits (errors answer RDMA_ERROR, §5.3.2), its call planned (what to pull
// by RDMA Read, where the RPC message and the DDP items lie), then handed to a worker.
//
// What it bounds: a call holds its receive buffer until the reply is sent (the RPC
// message is decoded in place, never copied), so the calls in flight on a device are
// bounded by the receive buffers the shared queue does not keep posted; per connection,
// by the largest grant it was sent (CreditWindow). A pull larger than one payload buffer
// is refused before any RDMA Read (the limits were fitted to the buffer at connect).
#include <spdlog/spdlog.h>

#include <atomic>
#include <cstdio>
#include <string>
#include <utility>

#include "transport/rdma/verbs/connection.h"
#include "transport/rdma/verbs/work.h"
#include "transport/rpc/thread_credentials.h"

namespace nfsrdmad::rdma::verbs {

void Connection::capture(std::span<const uint8_t> msg) {
    // A test hook, off unless the daemon was started with NFSRDMAD_RDMA_CAPTURE_DIR:
    // bounded (kMaxCaptures files of at most one receive buffer), so its blocking writes
    // on the reactor stay a fixed, small cost.
    constexpr uint32_t kMaxCaptures = 512;
    static std::atomic<uint32_t> taken{0};
    const uint32_t n = taken.fetch_add(1, std::memory_order_relaxed);
    if (n >= kMaxCaptures) return;
    const std::string path = opts_.capture_dir + "/rdma-" + std::to_string(n) + ".bin";
    if (FILE* f = std::fopen(path.c_str(), "wbx")) {
        std::fwrite(msg.data(), 1, msg.size(), f);
        std::fclose(f);
    }
}

void Connection::on_receive(BufferPtr buf, uint32_t len) {
    if (closed_) return;  // the buffer goes back to the pool
    if (!opts_.capture_dir.empty()) capture({buf->data(), len});
    // RFC 8167 §4.1: the client's reply to a call of ours spends no forward credit and is
    // no call (the buffer goes back to the shared queue as this returns).
    if (on_reverse_reply({buf->data(), len})) return;
    if (!credits_.on_call()) {
        count(Tc::credit_overruns);
        disconnect("the peer sent more calls than its " + std::to_string(credits_.ceiling()) +
                   " credits");
        return;
    }
    if (credits_.outstanding() > calls_peak_.load(std::memory_order_relaxed))
        calls_peak_.store(credits_.outstanding(), std::memory_order_relaxed);
    std::span<const uint8_t> msg(buf->data(), len);
    auto parsed = parse_header(msg, opts_.limits);
    if (auto* err = std::get_if<HeaderError>(&parsed)) {
        if (err->answer == HeaderError::Ignore) {
            if (err->why == "RDMA_DONE") count(Tc::done_ignored);
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
            count(Tc::calls_nomsg);
            break;
        default:
            count(Tc::calls_msg);
            break;
    }
    // RFC 8267 §4.1-4.2: READ and READLINK results go into the write chunk the client
    // offers; the registered buffer they are read into is reserved here, in order with
    // the calls before it (start_reads), rather than by a worker waiting for one.
    call->wants_reply_payload = !call->header.writes.empty();
    if (call->plan.read_bytes() == 0 && !call->wants_reply_payload) {
        dispatch(std::move(call));
        return;
    }
    start_reads(std::move(call));
}

namespace {

// Hands the call's reserved reply payload buffer to the RPC layer; a call without one
// (its reply is small enough to go inline) falls back to the device's allocator.
class ReservedPayloadAllocator : public rpc::PayloadAllocator {
  public:
    ReservedPayloadAllocator(BufferPtr reserved, rpc::PayloadAllocator& fallback)
        : reserved_(std::move(reserved)), fallback_(fallback) {}
    std::unique_ptr<rpc::PayloadBuffer> allocate(size_t bytes) override {
        if (reserved_ && bytes <= reserved_->size())
            return std::make_unique<RegisteredPayload>(std::move(reserved_));
        return fallback_.allocate(bytes);
    }
    BufferPtr unused() { return std::move(reserved_); }  // the reserved one, if not taken

  private:
    BufferPtr reserved_;
    rpc::PayloadAllocator& fallback_;
};

// The same for a call tried on the reactor: the reserved buffer is lent, not given, so
// that it is still the call's if the try would block and a worker runs the call after.
// Without one, a buffer free this instant, or none (never the device allocator's wait, a
// worker's: the procedure then leaves the call to a worker).
class LentPayloadAllocator : public rpc::PayloadAllocator {
  public:
    LentPayloadAllocator(const std::shared_ptr<Connection::CallWork>& call, MemoryPool& pool)
        : call_(call), pool_(pool) {}
    std::unique_ptr<rpc::PayloadBuffer> allocate(size_t bytes) override {
        if (call_->reply_payload && !lent_ && bytes <= call_->reply_payload->size()) {
            lent_ = true;
            return std::make_unique<RegisteredPayload>(*call_->reply_payload, call_);
        }
        if (bytes > pool_.buffer_size()) return nullptr;
        auto b = pool_.get();
        if (!b) return nullptr;
        return std::make_unique<RegisteredPayload>(std::move(b));
    }

  private:
    const std::shared_ptr<Connection::CallWork>& call_;
    MemoryPool& pool_;
    bool lent_ = false;
};

// The RPC message of a call as received (or pulled), with its DDP items.
rpc::Message message_of(const Connection::CallWork& call) {
    rpc::Message msg;
    const auto& p = call.plan;
    if (call.message) {
        msg.bytes = {call.message->data(), p.message_length};
    } else {
        msg.bytes = {call.received->data() + p.message_offset, p.message_length};
    }
    if (call.payload)
        for (const DdpItem& item : p.items)
            msg.read_chunks.push_back(
                {item.position, {call.payload->data() + item.offset, item.length}});
    return msg;
}

}  // namespace

void Connection::dispatch(std::shared_ptr<CallWork> call) {
    // RFC 8166 §4.1.1: an RDMA_NOMSG call's RPC message, now pulled, must carry the
    // transport header's XID (an RDMA_MSG's was checked with the header); else ERR_CHUNK,
    // as for any header that does not match its message (§4.5.2).
    if (call->header.type == MsgType::NoMsg && call->message &&
        !xid_matches({call->message->data(), call->plan.message_length}, call->header.xid)) {
        spdlog::info("rdma {}: ERR_CHUNK for xid {:#x}: the pulled RPC message's XID differs",
                     peer_.text, call->header.xid);
        send_error(call->header.xid, HeaderError::ErrChunk);
        return;
    }
    // A call that needs no disk (a GETATTR, or a READ of cached pages: Dispatcher::
    // dispatch_nowait) is answered here, on the reactor: no hop to a worker and back, and
    // no identity switch, so the rule on this thread's credentials (connection.h) holds.
    // One that would block goes on to a worker, its reserved payload buffer still its own.
    // A call answered here holds its credit only until its Send completes (CreditWindow):
    // an overrun (RFC 8166 §3.3.1) is seen when the calls past the grant are outstanding,
    // as calls a worker runs (NULL among them: a burst of them is the overrun test's).
    if (opts_.reactor_calls && !call->payload) {
        rpc::Message msg = message_of(*call);
        LentPayloadAllocator lent(call, dev_->payloads());
        std::optional<rpc::Reply> reply;
        if (svc_.dispatcher.dispatch_nowait(msg, peer_, lent, reply, &call->decoded)) {
            count(Tc::reactor_calls);
            send_reply(std::move(call),
                       std::make_shared<std::optional<rpc::Reply>>(std::move(reply)));
            return;
        }
    }
    run_on_worker(std::move(call));
}

void Connection::defer(std::shared_ptr<CallWork> call) {
    if (closed_) return;  // disconnected meanwhile: the call goes with the connection
    const uint64_t key = ++next_deferred_;
    const auto after = call->deferral.after;
    Deferred& d = deferred_[key];
    d.call = std::move(call);
    d.timer = reactor_.after(after, [weak = weak_from_this(), key] {
        if (auto self = weak.lock()) self->run_deferred(key, false);
    });
    // The waker runs on whichever thread saw the event: it only posts to this reactor,
    // where the weak reference is taken (never the last one dropped elsewhere). None for a
    // woken run put off again: its timer runs it (Deferral::wakeable).
    if (!d.call->deferral.wakeable) return;
    const auto& wakes = svc_.dispatcher.deferred_wakes();
    d.wake = wakes->add([r = &reactor_, weak = weak_from_this(), key] {
        r->post([weak, key] {
            if (auto self = weak.lock()) self->run_deferred(key, true);
        });
    });
    // A wake-up while the call ran, before it was registered: it runs again now.
    if (wakes->generation() != d.call->deferral.wakes_seen) run_deferred(key, true);
}

void Connection::run_deferred(uint64_t key, bool woken) {
    auto it = deferred_.find(key);
    if (it == deferred_.end()) return;  // run already (by the other of timer and wake-up)
    if (woken) {
        reactor_.cancel(it->second.timer);
        svc_.dispatcher.deferred_wakes()->note_woken();
    }
    auto again = std::move(it->second.call);
    deferred_.erase(it);  // its Registration ends: no wake-up runs it twice
    again->deferral.woken = woken;
    run_on_worker(std::move(again));
}

void Connection::run_on_worker(std::shared_ptr<CallWork> call) {
    auto self = shared_from_this();
    svc_.workers.submit([self, call]() mutable {
        rpc::Message msg = message_of(*call);
        ReservedPayloadAllocator alloc(std::move(call->reply_payload), self->dev_->allocator());
        auto reply = std::make_shared<std::optional<rpc::Reply>>(self->svc_.dispatcher.dispatch(
            msg, self->peer_, alloc, call->decoded ? &*call->decoded : nullptr, &call->deferral));
        engine::Reactor& r = self->reactor_;
        if (!*reply && call->deferral.after.count() > 0) {
            // Put off (rpc::Outcome::Later): the call keeps its receive buffer, its credit
            // and its reserved payload buffer until the reactor's timer runs it again on a
            // worker. The references go to the reactor, as below.
            call->reply_payload = alloc.unused();
            r.post([self = std::move(self), call = std::move(call)]() mutable {
                self->defer(std::move(call));
            });
            return;
        }
        // A worker that never switched credentials may act as its sleeping reactor: it
        // posts the reply itself, and neither the eventfd write nor the reactor's wake-up
        // is paid (issue 13). Its references go there too, as the reactor's would: the
        // last one may end the connection, which only a thread with the daemon's own
        // credentials may do (connection.h).
        if (rpc::credentials_unchanged() && r.run_if_asleep([&] {
                self->count(Tc::worker_replies);
                self->send_reply(std::move(call), std::move(reply));
                self.reset();
            }))
            return;
        // Otherwise the worker's references move to the reactor: the last one must never
        // be dropped here (the worker may have switched credentials: see connection.h).
        r.post([self = std::move(self), call = std::move(call), reply = std::move(reply)] {
            self->send_reply(call, reply);
        });
    });
}

}  // namespace nfsrdmad::rdma::verbs
