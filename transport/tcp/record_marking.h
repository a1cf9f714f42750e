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
// begins in a buffer of at most kFirstChunk; once kFirstChunk bytes of the record have
// arrived, the client is sending, and a buffer for the whole fragment takes over, into
// which what arrived moves (counted). The transport can spare most of that move: while
// fewer than kFirstChunk bytes have been read it says how many more it already holds
// (waiting(): FIONREAD), and once the two make a first chunk, the whole fragment's buffer
// takes over at once, moving only what was read (nothing, when the body was there when
// it began). Buffers grow at least twofold, so a record in many small fragments moves
// each byte a bounded number of times.
//
// The price: a client that sends kFirstChunk bytes of a record and stops holds a buffer
// of the whole record (max_record at most, rounded up to a power of two by BufferCache),
// where a buffer that doubled as bytes came held at most twice what was sent. Its pages
// are resident only as far as they are written, unless BufferCache hands back one that
// was used before; max_connections bounds how many such buffers there are, and the
// connection's idle timeout (unless set to 0) ends a client that stops there.
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
    // `first_chunk`: kFirstChunk but in tests (the fuzz target's inputs are short).
    explicit RecordAssembler(size_t max_record, std::shared_ptr<BufferCache> cache = nullptr,
                             std::atomic<uint64_t>* moved = nullptr,
                             size_t first_chunk = kFirstChunk)
        : max_record_(max_record),
          first_chunk_(first_chunk),
          cache_(std::move(cache)),
          moved_(moved) {}

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

    // True while a fragment longer than the first chunk is arriving into it (fewer than
    // kFirstChunk bytes of the record read): then say how many bytes the transport holds
    // (waiting), before want().
    bool sizing() const { return in_body_ && size_ < first_chunk_ && size_ + frag_left_ > cap_; }
    // Sizes the buffer for the whole fragment if what was read of the record and what is
    // waiting make min(record so far and this fragment, kFirstChunk); otherwise (or out of
    // memory) the buffer stays.
    void waiting(size_t bytes);
    size_t fragments_in_record() const { return fragments_; }

    // The first allocation for a long fragment's body (see above).
    static constexpr size_t kFirstChunk = 64 * 1024;

  private:
    bool grow();
    bool replace_buffer(size_t cap);

    size_t max_record_;
    size_t first_chunk_;
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
