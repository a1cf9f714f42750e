// Page-aligned heap buffers for TCP, kept for reuse: READ payloads and incoming records.
//
// A fresh 1 MiB buffer per READ or WRITE costs 256 page faults, each zeroing a page (the
// VM profile of a sequential read over TCP showed clear_page and the faults as the
// workers' top cost after the copy itself). A freed buffer goes back to a free list per
// size class (powers of two from 4 KiB to 2 MiB) and is handed out again; each class
// keeps at most `keep` idle buffers, so the cache stays bounded.
#pragma once

#include <array>
#include <cstddef>
#include <cstdint>
#include <memory>
#include <mutex>
#include <vector>

#include "transport/rpc/call.h"
#include "transport/tcp/pipe_pool.h"

namespace nfsrdmad::tcp {

class BufferCache : public std::enable_shared_from_this<BufferCache> {
  public:
    static std::shared_ptr<BufferCache> create(size_t keep = 32);
    ~BufferCache();

    // At least `bytes`, page aligned; returns to the cache when its last owner lets go
    // (the cache lives as long as any of its buffers). nullptr if memory is exhausted.
    std::shared_ptr<uint8_t[]> get(size_t bytes);
    size_t idle() const;  // buffers in the free lists now

  private:
    explicit BufferCache(size_t keep) : keep_(keep) {}
    void put(size_t cls, uint8_t* p);

    static constexpr size_t kMinShift = 12, kMaxShift = 21;  // 4 KiB .. 2 MiB
    const size_t keep_;
    mutable std::mutex mu_;
    std::array<std::vector<uint8_t*>, kMaxShift - kMinShift + 1> free_;
};

// READ payloads on TCP: memory from a BufferCache, and (when `pipes` is given) a pipe
// to splice the file data into instead (rpc::PayloadBuffer::splice_fd).
class HeapPayloadAllocator : public rpc::PayloadAllocator {
  public:
    HeapPayloadAllocator(std::shared_ptr<BufferCache> cache, std::shared_ptr<PipePool> pipes)
        : cache_(std::move(cache)), pipes_(std::move(pipes)) {}
    std::unique_ptr<rpc::PayloadBuffer> allocate(size_t bytes) override;

  private:
    std::shared_ptr<BufferCache> cache_;
    std::shared_ptr<PipePool> pipes_;
};

}  // namespace nfsrdmad::tcp
