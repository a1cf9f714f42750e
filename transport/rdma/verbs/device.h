// One RDMA device as the transport uses it: a protection domain, the registered pools
// and the shared receive queue every connection on that device shares, and the count of
// those connections that sets each one's credit grant.
#pragma once

#include <infiniband/verbs.h>

#include <algorithm>
#include <atomic>
#include <memory>
#include <mutex>
#include <optional>
#include <string>
#include <utility>
#include <vector>

#include "transport/engine/reactor.h"
#include "transport/rdma/protocol/credits.h"
#include "transport/rdma/protocol/read_budget.h"
#include "transport/rdma/verbs/memory_pool.h"
#include "transport/rdma/verbs/receive_completions.h"
#include "transport/rdma/verbs/receive_queue.h"
#include "transport/rdma/verbs/resources.h"

namespace nfsrdmad::rdma::verbs {

struct PoolSizes {
    size_t inline_size = 4096;         // receive and send buffers
    size_t max_inline_buffers = 4096;  // each of receive and send: 16 MiB
    size_t payload_size = (1u << 20) + 4096;
    size_t max_payload_buffers = 256;  // 256 MiB of READ/WRITE payload in flight at most
    bool huge_pages = false;
    size_t max_read_bytes = 0;  // RDMA Read bytes in flight on the device; 0: read_budget()
    // Register every RDMA Read sink per Read, as iWARP must (read_sink_access()), on any
    // device: lets the VM tests run that path on Soft-RoCE (no iWARP device there).
    bool per_read_sinks = false;

    static constexpr size_t kInlinePerSlab = 256;  // buffers per registration

    // RDMA Read bytes the device lets be in flight (its ReadBudget): as configured, or by
    // default as many as the payload buffers hold. Every Read lands in a payload buffer,
    // so the pool bounds them anyway; a lower budget only serves fewer connections at
    // once (issue 16's 200 mounts wrote 1.15-1.25x faster with the pool's bound than with
    // 8 MiB: bench/vm/README.md). One connection's Reads go in the order its calls came,
    // within the initiator depth its peer allowed and ConnectionOptions::read_bytes.
    size_t read_budget() const {
        return max_read_bytes ? max_read_bytes : max_payload_buffers << 20;
    }

    // Of the receive buffers, a quarter stay posted on the shared receive queue; the rest
    // are what calls in flight may hold, shared out as credits (Device::credit_share()).
    size_t receive_queue_depth() const { return std::max<size_t>(max_inline_buffers / 4, 1); }
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
    // Registers every pool in full and posts the shared receive queue: what a device
    // costs is known at start and never grows. `home` runs the receive queue's refills.
    static std::shared_ptr<Device> open(ibv_context* ctx, const PoolSizes& sizes,
                                        engine::Reactor* home, std::string* why);
    ibv_context* context() const { return ctx_; }
    ibv_pd* pd() const { return pd_.get(); }
    const ibv_device_attr& attr() const { return attr_; }
    const std::string& name() const { return name_; }
    MemoryPool& receives() { return *recv_; }
    MemoryPool& sends() { return *send_; }
    MemoryPool& payloads() { return *payload_; }
    PayloadPoolAllocator& allocator() { return *alloc_; }
    SharedReceiveQueue& receive_queue() { return *srq_; }
    // The receive CQ of `reactor`'s connections on this device, created with the first of
    // them (any thread; see receive_completions.h). nullptr and `why` when it cannot be.
    std::shared_ptr<ReceiveCompletions> receive_completions(engine::Reactor& reactor,
                                                            std::string* why);
    uint64_t receive_strays();  // summed over the receive CQs
    // On `reactor` (the CM reactor): logs the device's asynchronous events (a port going
    // down or up, a fatal device error, a QP or CQ in error) as they come, and
    // acknowledges them. Call it on that reactor's thread.
    static void watch_async_events(const std::shared_ptr<Device>& dev, engine::Reactor& reactor);
    uint64_t async_events() const { return async_events_.load(std::memory_order_relaxed); }
    ReadBudget& read_budget() { return *reads_; }
    // iWARP: each RDMA Read registers its sink with this access (read_sink_access()).
    std::optional<int> read_sink_access() const { return read_sink_access_; }
    size_t registered_bytes() const;

    // Connections on this device, and the grant each one's replies carry.
    void attach() { connections_.fetch_add(1, std::memory_order_relaxed); }
    void detach() { connections_.fetch_sub(1, std::memory_order_relaxed); }
    size_t connections() const { return connections_.load(std::memory_order_relaxed); }
    uint32_t credit_share(uint32_t max) const {
        return rdma::credit_share(credit_budget_, connections(), max);
    }

  private:
    Device() = default;
    ibv_context* ctx_ = nullptr;  // owned by rdma_cm
    PdPtr pd_;
    ibv_device_attr attr_{};
    std::string name_;
    std::unique_ptr<MemoryPool> recv_, send_, payload_;
    std::unique_ptr<PayloadPoolAllocator> alloc_;
    std::shared_ptr<SharedReceiveQueue> srq_;  // after the pools: destroyed before them
    std::mutex rcq_mu_;
    std::vector<std::pair<engine::Reactor*, std::shared_ptr<ReceiveCompletions>>> rcqs_;
    size_t credit_budget_ = 0;
    std::unique_ptr<ReadBudget> reads_;
    std::optional<int> read_sink_access_;
    std::atomic<size_t> connections_{0};
    std::atomic<uint64_t> async_events_{0};
    void on_async_events();
};

}  // namespace nfsrdmad::rdma::verbs
