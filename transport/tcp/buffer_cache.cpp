#include "transport/tcp/buffer_cache.h"

#include <algorithm>
#include <bit>
#include <cstdlib>

namespace nfsrdmad::tcp {

std::shared_ptr<BufferCache> BufferCache::create(size_t keep) {
    return std::shared_ptr<BufferCache>(new BufferCache(keep));
}

BufferCache::~BufferCache() {
    for (auto& list : free_)
        for (uint8_t* p : list) std::free(p);
}

std::shared_ptr<uint8_t[]> BufferCache::get(size_t bytes) {
    // Size class: the power of two that holds `bytes`, at least a page. Larger buffers
    // (records past 2 MiB) are not cached.
    const size_t rounded = std::bit_ceil(std::max<size_t>(bytes, size_t(1) << kMinShift));
    const size_t shift = std::countr_zero(rounded);
    const size_t cls = shift <= kMaxShift ? shift - kMinShift : free_.size();
    uint8_t* p = nullptr;
    if (cls < free_.size()) {
        std::lock_guard lock(mu_);
        if (!free_[cls].empty()) {
            p = free_[cls].back();
            free_[cls].pop_back();
        }
    }
    if (!p) p = static_cast<uint8_t*>(std::aligned_alloc(4096, rounded));
    if (!p) return nullptr;
    return std::shared_ptr<uint8_t[]>(
        p, [self = shared_from_this(), cls](uint8_t* q) { self->put(cls, q); });
}

void BufferCache::put(size_t cls, uint8_t* p) {
    if (cls < free_.size()) {
        std::lock_guard lock(mu_);
        if (free_[cls].size() < keep_) {
            free_[cls].push_back(p);
            return;
        }
    }
    std::free(p);
}

size_t BufferCache::idle() const {
    std::lock_guard lock(mu_);
    size_t n = 0;
    for (const auto& list : free_) n += list.size();
    return n;
}

namespace {

constexpr size_t kMinSplice = 64 * 1024;

class CachedBuffer : public rpc::PayloadBuffer {
  public:
    CachedBuffer(std::shared_ptr<uint8_t[]> p, size_t n, std::shared_ptr<PipePool> pipes)
        : p_(std::move(p)), n_(n), pipes_(std::move(pipes)) {}
    uint8_t* data() override { return p_.get(); }
    size_t capacity() const override { return n_; }

    int splice_fd() override {
        // Small READs go out in one writev with their reply: splicing costs more calls.
        if (!pipe_ && pipes_ && n_ >= kMinSplice) pipe_ = pipes_->get();
        return pipe_ ? pipe_->write_end() : -1;
    }
    void set_spliced(size_t n) override { spliced_ = n; }
    size_t spliced() const override { return spliced_; }
    int spliced_source() const override { return pipe_ ? pipe_->read_end() : -1; }

  private:
    std::shared_ptr<uint8_t[]> p_;
    size_t n_;
    std::shared_ptr<PipePool> pipes_;
    std::unique_ptr<PipePool::Lease> pipe_;
    size_t spliced_ = 0;
};

}  // namespace

std::unique_ptr<rpc::PayloadBuffer> HeapPayloadAllocator::allocate(size_t bytes) {
    auto p = cache_->get(bytes);
    if (!p) return nullptr;
    return std::make_unique<CachedBuffer>(std::move(p), bytes, pipes_);
}

}  // namespace nfsrdmad::tcp
