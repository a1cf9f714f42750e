#include "transport/rpc/auth/gss/seq_window.h"

#include <algorithm>

namespace nfsrdmad::rpc::gss {

SeqWindow::SeqWindow(uint32_t size) : size_(size == 0 ? 1 : size), bits_((size_ + 63) / 64, 0) {}

bool SeqWindow::seen(uint32_t seq) const {
    const uint32_t i = seq % size_;
    return (bits_[i / 64] >> (i % 64)) & 1u;
}

void SeqWindow::mark(uint32_t seq, bool on) {
    const uint32_t i = seq % size_;
    const uint64_t bit = uint64_t{1} << (i % 64);
    if (on)
        bits_[i / 64] |= bit;
    else
        bits_[i / 64] &= ~bit;
}

SeqWindow::Verdict SeqWindow::accept(uint32_t seq) {
    if (!any_ || seq > highest_) {
        // The window moves up: the numbers it passes over are unseen.
        if (!any_ || seq - highest_ >= size_) {
            std::fill(bits_.begin(), bits_.end(), 0);
        } else {
            for (uint32_t s = highest_ + 1; s != seq; ++s) mark(s, false);
        }
        any_ = true;
        highest_ = seq;
        mark(seq, true);
        return Verdict::New;
    }
    if (highest_ - seq >= size_) return Verdict::TooOld;
    if (seen(seq)) return Verdict::Replay;
    mark(seq, true);
    return Verdict::New;
}

}  // namespace nfsrdmad::rpc::gss
