#include "transport/rdma/verbs/receive_completions.h"

#include <fcntl.h>

#include <algorithm>
#include <cerrno>
#include <cstring>

#include "transport/rdma/verbs/connection.h"
#include "transport/rdma/verbs/cq_events.h"

namespace nfsrdmad::rdma::verbs {

std::shared_ptr<ReceiveCompletions> ReceiveCompletions::create(
    ibv_context* ctx, const ibv_device_attr& attr, std::shared_ptr<SharedReceiveQueue> srq,
    engine::Reactor& reactor, std::string* why) {
    std::shared_ptr<ReceiveCompletions> rc(new ReceiveCompletions(std::move(srq), reactor));
    rc->channel_.reset(ibv_create_comp_channel(ctx));
    if (!rc->channel_) {
        *why = std::string("ibv_create_comp_channel: ") + std::strerror(errno);
        return nullptr;
    }
    // Never block in ibv_get_cq_event (see Connection::setup).
    fcntl(rc->channel_->fd, F_SETFL, fcntl(rc->channel_->fd, F_GETFL) | O_NONBLOCK);
    // Every receive the shared queue has posted, at most (see the header). A device
    // whose CQs are shallower than its SRQ gets the deepest it has: the SRQ's depth was
    // clamped to max_srq_wr, and no real device has max_cqe below that.
    rc->depth_ = std::min<uint32_t>(rc->srq_->depth(), uint32_t(std::max(attr.max_cqe, 1)));
    rc->cq_.reset(ibv_create_cq(ctx, int(rc->depth_), nullptr, rc->channel_.get(), 0));
    if (!rc->cq_) {
        *why = std::string("ibv_create_cq (receives): ") + std::strerror(errno);
        return nullptr;
    }
    if (ibv_req_notify_cq(rc->cq_.get(), 0) != 0) {
        *why = std::string("ibv_req_notify_cq (receives): ") + std::strerror(errno);
        return nullptr;
    }
    rc->notify_.armed();
    // Watched from the reactor's own thread. Completions that arrive before start() runs
    // stay in the CQ (its event stays pending on the channel) and are reaped then.
    reactor.post([rc] { rc->start(); });
    return rc;
}

void ReceiveCompletions::start() {
    auto self = shared_from_this();
    // The reactor holds us for as long as it runs: connections come and go, the queue
    // stays (one per reactor and device, a fixed cost).
    if (!reactor_.add(channel_->fd, EPOLLIN, [self](uint32_t) { self->on_event(); })) return;
    if (reactor_.mode() != engine::Mode::Event) {
        poller_ = reactor_.add_poller({
            [self] { return self->reap() > 0; },
            [self] {
                // As a connection's CQ (Connection::start): a standing request needs no reap.
                return self->notify_.arm([&] { return ibv_req_notify_cq(self->cq_.get(), 0); }) &&
                       self->reap() > 0;
            },
        });
    }
    on_event();
}

void ReceiveCompletions::on_event() {
    on_cq_event(
        channel_.get(), cq_.get(), poller_ ? &notify_ : nullptr, [this] { return reap(); },
        [] { return false; });
}

int ReceiveCompletions::reap() {
    int total = 0;
    ibv_wc wcs[32];
    for (;;) {
        const int n = ibv_poll_cq(cq_.get(), 32, wcs);
        if (n <= 0) break;
        for (int i = 0; i < n; ++i) deliver(wcs[i]);
        total += n;
    }
    return total;
}

void ReceiveCompletions::deliver(const ibv_wc& wc) {
    std::shared_ptr<Connection> c;
    {
        std::lock_guard lock(mu_);
        if (auto it = conns_.find(wc.qp_num); it != conns_.end()) c = it->second.lock();
        if (!c) ++strays_;
    }
    if (c) return c->on_receive_completion(wc);
    // Its connection is gone: the receive's buffer goes back, and the queue is refilled.
    srq_->take(wc.wr_id);
    srq_->refill();
}

void ReceiveCompletions::attach(uint32_t qp_num, std::weak_ptr<Connection> c) {
    std::lock_guard lock(mu_);
    conns_[qp_num] = std::move(c);
}

void ReceiveCompletions::detach(uint32_t qp_num) {
    std::lock_guard lock(mu_);
    conns_.erase(qp_num);
}

uint64_t ReceiveCompletions::strays() const {
    std::lock_guard lock(mu_);
    return strays_;
}

}  // namespace nfsrdmad::rdma::verbs
