// RDMA Reads: pulling a call's read chunks (RFC 8166 §3.4.5: the requester exposes
// them, the responder reads them) into registered payload buffers before the call runs.
//
//   on_receive ─► start_reads ─► reserve_pulls (a payload buffer per pull set: the long
//                     │          call, and all DDP items together; and one
//                     │          for the reply of a call with a write chunk) ─► queue
//                     │ pool dry: wait in order (starved_calls_), holding nothing
//                     ▼
//                read_queue_ ─► pump_reads (≤ initiator_depth in flight) ─► on_read_done
//                                                                 last Read ─► dispatch
//
// What it bounds: RDMA Reads in flight per connection never exceed the initiator depth
// the peer's connect request allowed (IBA: more would be refused by its responder
// resources), nor their bytes ConnectionOptions::read_bytes (8 MiB: a deep queue's
// oldest calls are pulled first, and its Reads do not crowd out other connections');
// the whole device's, its ReadBudget. A call's pulls fit one payload buffer (on_receive
// refused larger ones); a call that finds no free buffer waits behind the ones before
// it, in arrival order, so the oldest call is the first to get memory and run.
#include <cerrno>
#include <cstring>
#include <string>
#include <utility>

#include "transport/rdma/verbs/connection.h"
#include "transport/rdma/verbs/work.h"

namespace nfsrdmad::rdma::verbs {

bool Connection::reserve_pulls(CallWork& call) {
    // on_receive() refused any pull set larger than one buffer.
    auto get = [&](BufferPtr& into) {
        if (into) return true;  // reserved on an earlier try
        into = dev_->payloads().get();
        return into != nullptr;
    };
    if ((call.plan.message_pulls && !get(call.message)) ||
        (call.plan.payload_pulls && !get(call.payload)) ||
        (call.wants_reply_payload && !get(call.reply_payload))) {
        call.message.reset();  // hold nothing while waiting
        call.payload.reset();
        call.reply_payload.reset();
        short_of_ = &dev_->payloads();
        return false;
    }
    return true;
}

void Connection::start_reads(std::shared_ptr<CallWork> call) {
    // Calls that wait for registered memory go first: arrival order is kept.
    if (!starved_calls_.empty() || !reserve_pulls(*call)) {
        starved_calls_.push_back(std::move(call));
        svc_.counters.calls_waiting++;
        wait_for_buffers();
        return;
    }
    begin_reads(std::move(call));
}

void Connection::begin_reads(std::shared_ptr<CallWork> call) {
    auto queue = [&](const PullSet& set, Buffer* into, size_t chunks) {
        for (const auto& p : set.pulls) {
            if (p.remote.length == 0) continue;
            read_queue_.push_back({call, p, into});
            ++call->reads_left;
        }
        count(Tc::read_chunks, chunks);
        count(Tc::read_bytes, set.bytes());
    };
    const CallPlan& plan = call->plan;
    if (plan.message_pulls) queue(*plan.message_pulls, call->message.get(), 1);
    // Every DDP item of the call, each at its offset in the one payload buffer.
    if (plan.payload_pulls) queue(*plan.payload_pulls, call->payload.get(), plan.items.size());
    if (call->reads_left == 0) {
        dispatch(std::move(call));
        return;
    }
    pump_reads();
}

void Connection::pump_reads(bool turn) {
    if (awaiting_read_budget_ && !turn) return;  // in line on the budget: it wakes us
    if (turn) awaiting_read_budget_ = false;
    // RDMA Reads in flight never exceed what the peer granted us (its initiator depth)
    // nor opts_.read_bytes (ReadWindow), and on the device the ReadBudget's bytes.
    auto& budget = dev_->read_budget();
    while (!read_queue_.empty() && !closed_) {
        PendingRead& next = read_queue_.front();
        const uint32_t bytes = next.pull.remote.length;
        // This connection's own bounds first (its peer's initiator depth, opts_.read_bytes):
        // its next Read waits for one of its own to finish (on_read_done pumps again),
        // not for send queue slots; a budget turn it holds passes on (below).
        if (!reads_.admits(bytes)) break;
        // Each Read takes a send queue slot; replies waiting for slots go first. A turn
        // from the budget passes on (below): when slots free, this connection takes its
        // place in the budget's line again, behind those that came meanwhile.
        if (replies_want_sq_ || !sq_.free()) {
            wait_for_send_queue(false);
            break;
        }
        const bool had_turn = std::exchange(turn, false);
        if (!budget.take(bytes, had_turn)) {
            // Others first (round robin), or no room: queue on the budget. A connection that
            // had the turn and could not use it stays at the front: it is still the oldest.
            wait_for_read_budget(/*front=*/had_turn);
            return;
        }
        PendingRead r = std::move(next);
        read_queue_.pop_front();
        auto rec = std::make_unique<ReadRecord>();
        rec->call = r.call;
        rec->bytes = bytes;
        uint8_t* sink = r.into->data() + r.pull.offset;
        uint32_t lkey = r.into->lkey();
        if (auto access = dev_->read_sink_access()) {
            // iWARP (memory_pool.h): this Read's sink alone, remotely writable until the
            // Read completes and the record's deregistration invalidates it.
            rec->sink.reset(ibv_reg_mr(dev_->pd(), sink, bytes, *access));
            if (!rec->sink) {
                budget.give(bytes);
                disconnect(std::string("ibv_reg_mr (RDMA Read sink): ") + std::strerror(errno));
                return;
            }
            lkey = rec->sink->lkey;
            count(Tc::sink_registrations);
        }
        uint64_t id = track(std::move(rec));
        ibv_sge sge{reinterpret_cast<uintptr_t>(sink), r.pull.remote.length, lkey};
        ibv_send_wr wr{};
        wr.wr_id = id;
        wr.opcode = IBV_WR_RDMA_READ;
        wr.send_flags = IBV_SEND_SIGNALED;
        wr.sg_list = &sge;
        wr.num_sge = 1;
        wr.wr.rdma.remote_addr = r.pull.remote.offset;
        wr.wr.rdma.rkey = r.pull.remote.handle;
        ibv_send_wr* bad = nullptr;
        sq_.take(1);  // its record's slots (1): given back by the completion
        if (ibv_post_send(id_->qp, &wr, &bad) != 0) {
            sq_.give(1);
            work_.erase(id);
            budget.give(bytes);
            disconnect(std::string("ibv_post_send (RDMA Read): ") + std::strerror(errno));
            return;
        }
        reads_.posted(bytes);
        read_bytes_peak_.store(reads_.peak(), std::memory_order_relaxed);
        // Others wait: one Read per turn, then behind them (round robin).
        if (budget.waiting() && !read_queue_.empty()) {
            wait_for_read_budget(false);
            return;
        }
    }
    if (turn) budget.pass();  // woken but nothing to post now (depth reached): next one
}

void Connection::wait_for_read_budget(bool front) {
    awaiting_read_budget_ = true;
    std::weak_ptr<Connection> weak = weak_from_this();
    ReadBudget* budget = &dev_->read_budget();
    // Runs on the thread that gave bytes back (another connection's reactor): the
    // reference moves into our reactor's closure (see connection.h).
    dev_->read_budget().wait(
        [weak, budget] {
            auto self = weak.lock();
            if (!self) return budget->pass();
            engine::Reactor& r = self->reactor_;
            r.post([self = std::move(self), budget] {
                if (self->closed_) return budget->pass();
                self->pump_reads(/*turn=*/true);
            });
        },
        front);
}

void Connection::read_finished(uint32_t bytes) {
    reads_.done(bytes);
    dev_->read_budget().give(bytes);
}

void Connection::on_read_done(uint64_t id) {
    auto node = work_.extract(id);
    auto* rec = static_cast<ReadRecord*>(node.mapped().get());
    auto call = rec->call;
    read_finished(rec->bytes);
    pump_reads();
    if (--call->reads_left == 0 && !call->failed) dispatch(std::move(call));
}

}  // namespace nfsrdmad::rdma::verbs
