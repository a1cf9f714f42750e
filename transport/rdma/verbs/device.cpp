#include "transport/rdma/verbs/device.h"

#include <cerrno>
#include <cstring>

namespace nfsrdmad::rdma::verbs {

std::shared_ptr<Device> Device::open(ibv_context* ctx, const PoolSizes& s, std::string* why) {
    std::shared_ptr<Device> d(new Device);
    d->ctx_ = ctx;
    d->name_ = ibv_get_device_name(ctx->device);
    if (ibv_query_device(ctx, &d->attr_) != 0) {
        *why = d->name_ + ": ibv_query_device: " + std::strerror(errno);
        return nullptr;
    }
    const auto access = pool_access(ctx->device->transport_type);
    if (!access) {
        *why = d->name_ +
               ": iWARP devices are not supported (an RDMA Read sink there must be remotely "
               "writable, and the registered pools are shared by every connection)";
        return nullptr;
    }
    d->pd_.reset(ibv_alloc_pd(ctx));
    if (!d->pd_) {
        *why = d->name_ + ": ibv_alloc_pd: " + std::strerror(errno);
        return nullptr;
    }
    d->recv_ = std::make_unique<MemoryPool>(d->pd(), d->name_ + " receive buffers", s.inline_size,
                                            PoolSizes::kInlinePerSlab, s.max_inline_buffers, false,
                                            *access);
    d->send_ = std::make_unique<MemoryPool>(d->pd(), d->name_ + " send buffers", s.inline_size,
                                            PoolSizes::kInlinePerSlab, s.max_inline_buffers, false,
                                            *access);
    d->payload_ = std::make_unique<MemoryPool>(d->pd(), d->name_ + " payload buffers",
                                               s.payload_size, PoolSizes::kPayloadsPerSlab,
                                               s.max_payload_buffers, s.huge_pages, *access);
    d->alloc_ = std::make_unique<PayloadPoolAllocator>(*d->payload_);
    return d;
}

}  // namespace nfsrdmad::rdma::verbs
