// RPC record marking on stream transports (RFC 5531 §11): each record is one or
// more fragments, each preceded by a 4-byte header whose top bit marks the last
// fragment and whose low 31 bits give the fragment length.
//
// The assembler is pure (no sockets): the connection asks where to read next with
// want(), reads straight into that memory, and reports how much arrived with
// commit(). Fragment bodies land directly in the record's buffer, so a WRITE's data
// is read from the socket once, into the memory it is later written to disk from.
//
// How big that buffer is: a mark alone never reserves what it claims (a hostile client
// could claim max_record on every connection and send nothing). A long fragment's body
// begins in a buffer of kFirstChunk; once that is full, the client is sending, and the
// buffer is replaced by one for the whole fragment, into which the first chunk moves (the
// one copy, counted). The transport can spare even that: when the body begins it says how
// many bytes it already holds (waiting(): FIONREAD), and when a first chunk's worth is
// there, the buffer is sized for the whole fragment at once and nothing moves. Either way
// a client pins a whole buffer only after sending kFirstChunk bytes of it (and the
// connection's idle timeout still ends one that stops there).
#pragma once

#include <atomic>
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
    // `moved` (optional) counts the bytes a growing buffer copied into its successor.
    explicit RecordAssembler(size_t max_record, std::shared_ptr<BufferCache> cache = nullptr,
                             std::atomic<uint64_t>* moved = nullptr)
        : max_record_(max_record), cache_(std::move(cache)), moved_(moved) {}

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

    // True when a fragment longer than its buffer begins a record and none of its body has
    // been read: then say how many bytes the transport holds (waiting), before want().
    bool sizing() const { return in_body_ && size_ == 0 && frag_left_ > cap_; }
    // Sizes the buffer for the whole fragment if at least min(fragment, kFirstChunk) bytes
    // of it are waiting; otherwise (or out of memory) the first chunk stays.
    void waiting(size_t bytes);
    size_t fragments_in_record() const { return fragments_; }

    // The first allocation for a long fragment's body (see above).
    static constexpr size_t kFirstChunk = 64 * 1024;

  private:
    bool grow();

    size_t max_record_;
    std::shared_ptr<BufferCache> cache_;
    std::atomic<uint64_t>* moved_;
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
