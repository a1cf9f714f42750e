// One RDMA device as the transport uses it: a protection domain and the registered
// pools every connection on that device shares.
#pragma once

#include <infiniband/verbs.h>

#include <memory>
#include <string>

#include "transport/rdma/verbs/memory_pool.h"
#include "transport/rdma/verbs/resources.h"

namespace nfsrdmad::rdma::verbs {

struct PoolSizes {
    size_t inline_size = 4096;         // receive and send buffers
    size_t max_inline_buffers = 4096;  // each of receive and send: 16 MiB
    size_t payload_size = (1u << 20) + 4096;
    size_t max_payload_buffers = 256;  // 256 MiB of READ/WRITE payload in flight at most
    bool huge_pages = false;

    static constexpr size_t kInlinePerSlab = 256;  // buffers per registration
    static constexpr size_t kPayloadsPerSlab = 8;

    // The most the pools can ever register (what RLIMIT_MEMLOCK must allow): payload
    // slabs round up to whole 2 MiB pages when huge pages are used.
    size_t max_registered_bytes() const {
        const size_t payload = (payload_size + 63) & ~size_t(63);
        const size_t slab = payload * kPayloadsPerSlab;
        const size_t huge = (slab + (2u << 20) - 1) & ~size_t((2u << 20) - 1);
        const size_t slabs = (max_payload_buffers + kPayloadsPerSlab - 1) / kPayloadsPerSlab;
        return slabs * (huge_pages ? huge : slab) + 2 * max_inline_buffers * inline_size;
    }
};

class Device {
  public:
    static std::shared_ptr<Device> open(ibv_context* ctx, const PoolSizes& sizes, std::string* why);
    ibv_context* context() const { return ctx_; }
    ibv_pd* pd() const { return pd_.get(); }
    const ibv_device_attr& attr() const { return attr_; }
    const std::string& name() const { return name_; }
    MemoryPool& receives() { return *recv_; }
    MemoryPool& sends() { return *send_; }
    MemoryPool& payloads() { return *payload_; }
    PayloadPoolAllocator& allocator() { return *alloc_; }

  private:
    Device() = default;
    ibv_context* ctx_ = nullptr;  // owned by rdma_cm
    PdPtr pd_;
    ibv_device_attr attr_{};
    std::string name_;
    std::unique_ptr<MemoryPool> recv_, send_, payload_;
    std::unique_ptr<PayloadPoolAllocator> alloc_;
};

}  // namespace nfsrdmad::rdma::verbs
