#include "transport/rdma/verbs/device.h"

#include <spdlog/spdlog.h>

#include <fcntl.h>
#include <sys/epoll.h>

#include <cerrno>
#include <cstring>

namespace nfsrdmad::rdma::verbs {

std::shared_ptr<Device> Device::open(ibv_context* ctx, const PoolSizes& s, engine::Reactor* home,
                                     std::string* why) {
    std::shared_ptr<Device> d(new Device);
    d->ctx_ = ctx;
    d->name_ = ibv_get_device_name(ctx->device);
    if (ibv_query_device(ctx, &d->attr_) != 0) {
        *why = d->name_ + ": ibv_query_device: " + std::strerror(errno);
        return nullptr;
    }
    const int access = pool_access(ctx->device->transport_type);
    d->read_sink_access_ = verbs::read_sink_access(s.per_read_sinks ? IBV_TRANSPORT_IWARP
                                                                    : ctx->device->transport_type);
    d->pd_.reset(ibv_alloc_pd(ctx));
    if (!d->pd_) {
        *why = d->name_ + ": ibv_alloc_pd: " + std::strerror(errno);
        return nullptr;
    }
    d->recv_ = std::make_unique<MemoryPool>(d->pd(), d->name_ + " receive buffers", s.inline_size,
                                            PoolSizes::kInlinePerSlab, s.max_inline_buffers, false,
                                            access);
    d->send_ = std::make_unique<MemoryPool>(d->pd(), d->name_ + " send buffers", s.inline_size,
                                            PoolSizes::kInlinePerSlab, s.max_inline_buffers, false,
                                            access);
    d->payload_ = std::make_unique<MemoryPool>(d->pd(), d->name_ + " payload buffers",
                                               s.payload_size, PoolSizes::kPayloadsPerSlab,
                                               s.max_payload_buffers, s.huge_pages, access);
    d->alloc_ = std::make_unique<PayloadPoolAllocator>(*d->payload_);
    d->reads_ = std::make_unique<ReadBudget>(s.read_budget());
    for (auto* p : {d->recv_.get(), d->send_.get(), d->payload_.get()}) {
        if (!p->reserve_all()) {
            *why = p->last_error();
            return nullptr;
        }
    }
    d->srq_ = SharedReceiveQueue::create(d->pd(), d->attr_, *d->recv_,
                                         uint32_t(s.receive_queue_depth()), home, why);
    if (!d->srq_) {
        *why = d->name_ + ": " + *why;
        return nullptr;
    }
    // What calls in flight may hold: the receive buffers the SRQ does not keep posted.
    d->credit_budget_ = s.max_inline_buffers - d->srq_->depth();
    return d;
}

}  // namespace nfsrdmad::rdma::verbs

namespace nfsrdmad::rdma::verbs {

std::shared_ptr<ReceiveCompletions> Device::receive_completions(engine::Reactor& reactor,
                                                                std::string* why) {
    std::lock_guard lock(rcq_mu_);
    for (auto& [r, rc] : rcqs_)
        if (r == &reactor) return rc;
    auto rc = ReceiveCompletions::create(ctx_, attr_, srq_, reactor, why);
    if (!rc) return nullptr;
    rcqs_.emplace_back(&reactor, rc);
    spdlog::info(
        "rdma: {}: receive completion queue {} of {} entries (the shared receive queue's "
        "depth), for a reactor's connections",
        name_, rcqs_.size(), rc->depth());
    return rc;
}

void Device::watch_async_events(const std::shared_ptr<Device>& dev, engine::Reactor& reactor) {
    const int fd = dev->ctx_->async_fd;
    fcntl(fd, F_SETFL, fcntl(fd, F_GETFL) | O_NONBLOCK);  // never block the reactor
    std::weak_ptr<Device> weak = dev;
    if (!reactor.add(fd, EPOLLIN, [weak](uint32_t) {
            if (auto d = weak.lock()) d->on_async_events();
        }))
        spdlog::warn("rdma: {}: cannot watch the device's asynchronous events", dev->name_);
}

void Device::on_async_events() {
    ibv_async_event ev;
    while (ibv_get_async_event(ctx_, &ev) == 0) {
        async_events_.fetch_add(1, std::memory_order_relaxed);
        const char* what = ibv_event_type_str(ev.event_type);
        switch (ev.event_type) {
            case IBV_EVENT_PORT_ACTIVE:
                spdlog::info("rdma: {} port {}: {}", name_, ev.element.port_num, what);
                break;
            case IBV_EVENT_PORT_ERR:
                spdlog::warn("rdma: {} port {}: {}: connections through it fail until it is up",
                             name_, ev.element.port_num, what);
                break;
            case IBV_EVENT_GID_CHANGE:  // every address added or removed: not worth a line
            case IBV_EVENT_LID_CHANGE:
            case IBV_EVENT_PKEY_CHANGE:
            case IBV_EVENT_SM_CHANGE:
            case IBV_EVENT_CLIENT_REREGISTER:
                spdlog::debug("rdma: {} port {}: {}", name_, ev.element.port_num, what);
                break;
            case IBV_EVENT_DEVICE_FATAL:
                spdlog::error(
                    "rdma: {}: {}: every connection on it fails; restart the daemon "
                    "once the device is back",
                    name_, what);
                break;
            case IBV_EVENT_CQ_ERR:
                spdlog::error("rdma: {}: {} (a completion queue overran or failed)", name_, what);
                break;
            case IBV_EVENT_QP_FATAL:
            case IBV_EVENT_QP_REQ_ERR:
            case IBV_EVENT_QP_ACCESS_ERR:
            case IBV_EVENT_PATH_MIG_ERR:
                spdlog::warn("rdma: {}: qp {}: {}", name_, ev.element.qp->qp_num, what);
                break;
            case IBV_EVENT_SRQ_ERR:
                spdlog::error("rdma: {}: {} (the shared receive queue failed)", name_, what);
                break;
            case IBV_EVENT_COMM_EST:  // the QP saw traffic before rdma_cm's ESTABLISHED
            case IBV_EVENT_SQ_DRAINED:
            case IBV_EVENT_QP_LAST_WQE_REACHED:  // an SRQ's QP in error takes no more receives
            case IBV_EVENT_PATH_MIG:
            case IBV_EVENT_SRQ_LIMIT_REACHED:
            default:
                spdlog::debug("rdma: {}: {}", name_, what);
                break;
        }
        // At once: destroying a QP or CQ waits until its events read so far are acked.
        ibv_ack_async_event(&ev);
    }
}

uint64_t Device::receive_strays() {
    std::lock_guard lock(rcq_mu_);
    uint64_t n = 0;
    for (auto& [r, rc] : rcqs_) n += rc->strays();
    return n;
}

size_t Device::registered_bytes() const {
    return recv_->registered_bytes() + send_->registered_bytes() + payload_->registered_bytes();
}

}  // namespace nfsrdmad::rdma::verbs
