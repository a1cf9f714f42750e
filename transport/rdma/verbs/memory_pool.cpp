#include "transport/rdma/verbs/memory_pool.h"

#include <sys/mman.h>

#include <spdlog/spdlog.h>

#include <algorithm>
#include <cerrno>
#include <cstring>

namespace nfsrdmad::rdma::verbs {

void BufferRelease::operator()(Buffer* b) const {
    if (b && pool) pool->put(b);
}

MemoryPool::MemoryPool(ibv_pd* pd, std::string name, size_t buffer_size, size_t per_slab,
                       size_t max_buffers, bool huge_pages, int access)
    : pd_(pd),
      name_(std::move(name)),
      buffer_size_((buffer_size + 63) & ~size_t(63)),
      per_slab_(per_slab ? per_slab : 1),
      max_buffers_(max_buffers),
      huge_pages_(huge_pages),
      access_(access) {}

MemoryPool::~MemoryPool() {
    for (auto& s : slabs_) {
        s->mr.reset();
        munmap(s->mem, s->bytes);
    }
}

bool MemoryPool::grow() {
    size_t have = 0;
    for (const auto& s : slabs_) have += s->buffers.size();
    if (have >= max_buffers_) {
        error_ = name_ + ": all " + std::to_string(max_buffers_) + " buffers in use";
        return false;
    }
    const size_t count = std::min(per_slab_, max_buffers_ - have);  // never past the limit
    auto slab = std::make_unique<Slab>();
    slab->bytes = buffer_size_ * count;
    if (huge_pages_) {
        size_t huge = (slab->bytes + (2u << 20) - 1) & ~size_t((2u << 20) - 1);
        slab->mem = mmap(nullptr, huge, PROT_READ | PROT_WRITE,
                         MAP_PRIVATE | MAP_ANONYMOUS | MAP_HUGETLB, -1, 0);
        if (slab->mem != MAP_FAILED) {
            slab->bytes = huge;
            slab->huge = true;
        } else if (!warned_no_huge_) {
            warned_no_huge_ = true;
            spdlog::warn(
                "rdma: {}: no huge pages for {} bytes ({}); using 4 KiB pages. "
                "Reserve some: sysctl vm.nr_hugepages=N",
                name_, huge, std::strerror(errno));
        }
    }
    if (!slab->huge) {
        slab->mem =
            mmap(nullptr, slab->bytes, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
        if (slab->mem == MAP_FAILED) {
            error_ = name_ + ": mmap: " + std::strerror(errno);
            return false;
        }
    }
    slab->mr.reset(ibv_reg_mr(pd_, slab->mem, slab->bytes, access_));
    if (!slab->mr) {
        error_ = name_ + ": ibv_reg_mr of " + std::to_string(slab->bytes) +
                 " bytes: " + std::strerror(errno) + " (check RLIMIT_MEMLOCK)";
        munmap(slab->mem, slab->bytes);
        return false;
    }
    slab->buffers.resize(count);
    for (size_t i = 0; i < count; ++i) {
        Buffer& b = slab->buffers[i];
        b.data_ = static_cast<uint8_t*>(slab->mem) + i * buffer_size_;
        b.size_ = buffer_size_;
        b.lkey_ = slab->mr->lkey;
        free_.push_back(&b);
    }
    slabs_.push_back(std::move(slab));
    return true;
}

bool MemoryPool::reserve_all() {
    std::lock_guard lock(mu_);
    for (;;) {
        size_t have = 0;
        for (const auto& s : slabs_) have += s->buffers.size();
        if (have >= max_buffers_) return true;
        if (!grow()) return false;
    }
}

BufferPtr MemoryPool::take() {
    if (free_.empty() && !grow()) return BufferPtr(nullptr, BufferRelease{this});
    Buffer* b = free_.back();
    free_.pop_back();
    ++in_use_;
    return BufferPtr(b, BufferRelease{this});
}

BufferPtr MemoryPool::get() {
    std::lock_guard lock(mu_);
    return take();
}

BufferPtr MemoryPool::get_or_notify(std::function<void()> wake) {
    std::lock_guard lock(mu_);
    auto b = take();
    if (!b) wakers_.push_back(std::move(wake));  // under mu_: no put() can slip between
    return b;
}

BufferPtr MemoryPool::get_waiting(std::chrono::milliseconds patience) {
    std::unique_lock lock(mu_);
    auto deadline = std::chrono::steady_clock::now() + patience;
    for (;;) {
        if (auto b = take()) return b;
        if (freed_.wait_until(lock, deadline) == std::cv_status::timeout) {
            auto b = take();
            if (!b) ++wait_timeouts_;
            return b;
        }
    }
}

size_t MemoryPool::huge_page_bytes() const {
    std::lock_guard lock(mu_);
    size_t n = 0;
    for (const auto& s : slabs_)
        if (s->huge) n += s->bytes;
    return n;
}

size_t MemoryPool::registered_bytes() const {
    std::lock_guard lock(mu_);
    size_t n = 0;
    for (const auto& s : slabs_) n += s->bytes;
    return n;
}

size_t MemoryPool::registrations() const {
    std::lock_guard lock(mu_);
    return slabs_.size();
}

void MemoryPool::put(Buffer* b) {
    std::vector<std::function<void()>> wake;
    {
        std::lock_guard lock(mu_);
        free_.push_back(b);
        --in_use_;
        wake.swap(wakers_);
    }
    freed_.notify_one();
    for (auto& fn : wake) fn();
}

std::unique_ptr<rpc::PayloadBuffer> PayloadPoolAllocator::allocate(size_t bytes) {
    if (bytes > pool_.buffer_size()) return nullptr;
    // On a worker: a READ may wait a little for a buffer that a reply in flight is about
    // to return, rather than answer NFS3ERR_JUKEBOX (which costs the client seconds).
    auto b = pool_.get_waiting(std::chrono::milliseconds(500));
    if (!b) return nullptr;
    return std::make_unique<RegisteredPayload>(std::move(b));
}

}  // namespace nfsrdmad::rdma::verbs
