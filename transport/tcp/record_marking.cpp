#include "transport/tcp/record_marking.h"

#include <algorithm>
#include <cstring>

#include "transport/tcp/buffer_cache.h"

namespace nfsrdmad::tcp {

std::span<uint8_t> RecordAssembler::want() {
    if (!in_body_) return {header_ + header_got_, 4 - header_got_};
    return {buf_.get() + size_, std::min(frag_left_, cap_ - size_)};
}

std::span<uint8_t> RecordAssembler::next_header() {
    // In a body header_got_ is 0: want() after it would be exactly this.
    if (!in_body_ || frag_left_ > cap_ - size_) return {};
    return {header_, 4};
}

namespace {

std::shared_ptr<uint8_t[]> allocate(BufferCache* cache, size_t bytes) {
    return cache ? cache->get(bytes) : std::shared_ptr<uint8_t[]>(new uint8_t[bytes]);
}

}  // namespace

// Makes room for the next bytes of the fragment, when what has arrived fills the buffer.
// Never more than a first chunk before that many bytes of the record have arrived (a
// mark alone must not make us reserve max_record); after that, the whole fragment. And at
// least twice the old buffer, so that a record sent in many small fragments moves each of
// its bytes a bounded number of times (growing to exactly what each fragment claims would
// move the record so far at every mark: quadratic in the number of fragments).
bool RecordAssembler::grow() {
    const size_t total = size_ + frag_left_;
    if (cap_ > size_ || frag_left_ == 0) return true;
    const size_t limit = size_ < first_chunk_ ? first_chunk_ : max_record_;
    return replace_buffer(std::min(std::max(total, 2 * cap_), limit));
}

// A buffer of `cap` bytes (more than size_) takes over; what has arrived moves into it.
bool RecordAssembler::replace_buffer(size_t cap) {
    std::shared_ptr<uint8_t[]> nb = allocate(cache_.get(), cap);
    if (!nb) return false;
    if (size_) {
        std::memcpy(nb.get(), buf_.get(), size_);
        if (moved_) moved_->fetch_add(size_, std::memory_order_relaxed);
    }
    buf_ = std::move(nb);
    cap_ = cap;
    return true;
}

void RecordAssembler::waiting(size_t bytes) {
    const size_t total = size_ + frag_left_;
    // Twofold at least here too, or a record of fragments that each outgrow the room left
    // would alternate exact fits and doublings.
    if (sizing() && size_ + bytes >= std::min(total, first_chunk_))
        replace_buffer(std::max(total, std::min(2 * cap_, max_record_)));
}

RecordAssembler::Status RecordAssembler::commit(size_t n) {
    if (!in_body_) {
        header_got_ += n;
        if (header_got_ < 4) return Status::NeedMore;
        header_got_ = 0;
        uint32_t h = uint32_t(header_[0]) << 24 | uint32_t(header_[1]) << 16 |
                     uint32_t(header_[2]) << 8 | header_[3];
        last_ = h & kLastFragment;
        frag_left_ = h & ~kLastFragment;
        ++fragments_;
        if (size_ + frag_left_ > max_record_ || !grow()) return Status::TooLarge;
        in_body_ = frag_left_ > 0;
    } else {
        size_ += n;
        frag_left_ -= n;
        if (frag_left_ > 0) return grow() ? Status::NeedMore : Status::TooLarge;
        in_body_ = false;
    }
    if (in_body_ || !last_) return Status::NeedMore;
    return Status::RecordReady;
}

Record RecordAssembler::take() {
    Record r{std::move(buf_), size_};
    buf_.reset();
    cap_ = size_ = fragments_ = 0;
    return r;
}

}  // namespace nfsrdmad::tcp
