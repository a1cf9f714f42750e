#include "transport/rdma/verbs/device.h"

#include <spdlog/spdlog.h>

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
    d->reads_ = std::make_unique<ReadBudget>(s.max_read_bytes);
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
