// Registered memory: fixed-size buffers carved from slabs, each slab registered once
// with the device (ibv_reg_mr), so the data path never registers memory per call.
// Receive buffers (inline size), send buffers (inline size) and payload buffers (the
// largest transfer, 1 MiB) are three pools of this kind.
#pragma once

#include <infiniband/verbs.h>

#include <atomic>
#include <chrono>
#include <condition_variable>
#include <cstddef>
#include <cstdint>
#include <functional>
#include <memory>
#include <mutex>
#include <optional>
#include <string>
#include <vector>

#include "transport/rdma/verbs/resources.h"
#include "transport/rpc/call.h"

namespace nfsrdmad::rdma::verbs {

class MemoryPool;

// What the pools' memory is registered for. Every pool is local to this host: the
// server initiates every RDMA Read and Write (RFC 8166 §3.4: the requester exposes its
// memory, the responder never does), so no peer ever needs an rkey of ours, and one
// that guessed one must find nothing it may read or write. Receive buffers and RDMA
// Read sinks need local write; send and RDMA Write sources need nothing beyond local.
inline int pool_access(ibv_transport_type) {
    return IBV_ACCESS_LOCAL_WRITE;
}

// iWARP is the exception: an RDMA Read Response is placed into the sink like a tagged
// write by the peer (RFC 5040 §4.4: the Read Request names the Data Sink STag), so the
// sink must allow remote write. Exposing a pool every connection shares is out of the
// question: on iWARP each Read registers its own sink, just the bytes it pulls, with
// this access, and deregisters it (invalidating the STag) when the Read completes, as
// the kernel's rdma_rw does. nullopt: the pool's own registration serves.
inline std::optional<int> read_sink_access(ibv_transport_type transport) {
    if (transport == IBV_TRANSPORT_IWARP) return IBV_ACCESS_LOCAL_WRITE | IBV_ACCESS_REMOTE_WRITE;
    return std::nullopt;
}

// One buffer of a pool. Returned to its pool when the last owner lets go.
class Buffer {
  public:
    uint8_t* data() const { return data_; }
    size_t size() const { return size_; }
    uint32_t lkey() const { return lkey_; }
    bool contains(const void* p, size_t n) const {
        auto* b = static_cast<const uint8_t*>(p);
        return b >= data_ && b + n <= data_ + size_;
    }

  private:
    friend class MemoryPool;

    uint8_t* data_ = nullptr;
    size_t size_ = 0;
    uint32_t lkey_ = 0;
};

struct BufferRelease {
    MemoryPool* pool = nullptr;
    void operator()(Buffer* b) const;
};
using BufferPtr = std::unique_ptr<Buffer, BufferRelease>;

class MemoryPool {
  public:
    // `buffer_size` bytes per buffer, `per_slab` buffers per registration, at most
    // `max_buffers` in all, each slab registered with `access` (pool_access()).
    MemoryPool(ibv_pd* pd, std::string name, size_t buffer_size, size_t per_slab,
               size_t max_buffers, bool huge_pages, int access);
    ~MemoryPool();

    // Registers every buffer now (the device does so at start: registered memory is
    // set by configuration, and no data path thread ever calls ibv_reg_mr). False, and
    // last_error(), when memory or the registration ran out.
    bool reserve_all();
    // nullptr when the pool is exhausted (or registration failed: see last_error()).
    BufferPtr get();
    // Like get(); when it comes back empty, `wake` is called once (on the thread that
    // returns a buffer: keep it short, e.g. a reactor post) as soon as one is free.
    BufferPtr get_or_notify(std::function<void()> wake);
    // Like get(), but waits up to `patience` for a buffer (worker threads only).
    BufferPtr get_waiting(std::chrono::milliseconds patience);
    size_t wait_timeouts() const { return wait_timeouts_; }  // get_waiting() gave up
    size_t buffer_size() const { return buffer_size_; }
    size_t in_use() const { return in_use_; }
    size_t capacity() const { return max_buffers_; }
    size_t registered_bytes() const;
    size_t registrations() const;
    size_t huge_page_bytes() const;  // registered bytes backed by 2 MiB pages
    const std::string& last_error() const { return error_; }

  private:
    friend struct BufferRelease;
    void put(Buffer* b);
    bool grow();       // with mu_ held
    BufferPtr take();  // with mu_ held

    struct Slab {
        void* mem = nullptr;
        size_t bytes = 0;
        bool huge = false;
        MrPtr mr;
        std::vector<Buffer> buffers;
    };

    ibv_pd* pd_;
    std::string name_;
    size_t buffer_size_, per_slab_, max_buffers_;
    bool huge_pages_;
    const int access_;
    mutable std::mutex mu_;
    std::vector<std::unique_ptr<Slab>> slabs_;
    std::vector<Buffer*> free_;
    std::vector<std::function<void()>> wakers_;
    std::condition_variable freed_;
    bool warned_no_huge_ = false;
    std::atomic<size_t> in_use_{0};
    std::atomic<size_t> wait_timeouts_{0};
    std::string error_;
};

// READ payloads in registered memory: the RPC layer's PayloadAllocator for RDMA. The
// file is read straight into what RDMA Write then pushes to the client.
class RegisteredPayload : public rpc::PayloadBuffer {
  public:
    explicit RegisteredPayload(BufferPtr b) : buf_(std::move(b)), view_(buf_.get()) {}
    // A buffer that stays `owner`'s, lent: a call tried on the reactor that would block
    // goes on to a worker with the buffer still reserved for it (receive.cpp).
    RegisteredPayload(const Buffer& lent, std::shared_ptr<const void> owner)
        : view_(&lent), owner_(std::move(owner)) {}
    uint8_t* data() override { return view_->data(); }
    size_t capacity() const override { return view_->size(); }
    const Buffer& buffer() const { return *view_; }

  private:
    BufferPtr buf_;
    const Buffer* view_;
    std::shared_ptr<const void> owner_;  // keeps a lent buffer's owner alive
};

class PayloadPoolAllocator : public rpc::PayloadAllocator {
  public:
    explicit PayloadPoolAllocator(MemoryPool& pool) : pool_(pool) {}
    std::unique_ptr<rpc::PayloadBuffer> allocate(size_t bytes) override;

  private:
    MemoryPool& pool_;
};

}  // namespace nfsrdmad::rdma::verbs
