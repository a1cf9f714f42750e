// RPC record marking on stream transports (RFC 5531 §11): each record is one or
// more fragments, each preceded by a 4-byte header whose top bit marks the last
// fragment and whose low 31 bits give the fragment length.
//
// The assembler is pure (no sockets): the connection asks where to read next with
// want(), reads straight into that memory, and reports how much arrived with
// commit(). Fragment bodies land directly in the record's buffer, so a WRITE's data
// is read from the socket once, into the memory it is later written to disk from.
#pragma once

#include <cstdint>
#include <memory>
#include <span>

namespace nfsrdmad::tcp {

class BufferCache;

inline constexpr uint32_t kLastFragment = 0x80000000u;

struct Record {
    std::shared_ptr<uint8_t[]> data;
    size_t size = 0;
    std::span<const uint8_t> bytes() const { return {data.get(), size}; }
};

class RecordAssembler {
  public:
    // Record buffers come from `cache` when given (reused, no page faults), else new[].
    explicit RecordAssembler(size_t max_record, std::shared_ptr<BufferCache> cache = nullptr)
        : max_record_(max_record), cache_(std::move(cache)) {}

    enum class Status { NeedMore, RecordReady, TooLarge };

    std::span<uint8_t> want();
    // Where the next fragment's 4-byte header goes when want() reaches the end of the
    // fragment being read (empty otherwise), so that one readv(2) takes the body's last
    // bytes and the header behind them: a call costs one read of its header and one of
    // its body, and a stream of calls one read each. Bytes that land here are committed
    // after want()'s: commit(want().size()), then commit(the rest).
    std::span<uint8_t> next_header();
    Status commit(size_t n);
    Record take();  // after RecordReady
    size_t fragments_in_record() const { return fragments_; }

    // The first allocation for a fragment's body; the buffer then doubles as bytes arrive.
    static constexpr size_t kFirstChunk = 64 * 1024;

  private:
    bool grow();

    size_t max_record_;
    std::shared_ptr<BufferCache> cache_;
    uint8_t header_[4]{};
    size_t header_got_ = 0;
    bool in_body_ = false;
    bool last_ = false;
    size_t frag_left_ = 0;
    size_t fragments_ = 0;
    std::shared_ptr<uint8_t[]> buf_;
    size_t cap_ = 0;
    size_t size_ = 0;
};

}  // namespace nfsrdmad::tcp
