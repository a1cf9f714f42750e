#include "transport/engine/liveness.h"

#include "transport/engine/reactor.h"

namespace nfsrdmad::engine {

Liveness::Liveness(size_t reactors)
    : answered_(new std::atomic<uint64_t>[reactors]()), size_(reactors) {}

std::vector<size_t> Liveness::next_round(ReactorGroup& reactors) {
    std::vector<size_t> late;
    if (round_ > 0)
        for (size_t i = 0; i < size_; ++i)
            if (answered_[i].load(std::memory_order_acquire) < round_) late.push_back(i);
    const uint64_t r = ++round_;
    for (size_t i = 0; i < size_ && i < reactors.size(); ++i)
        reactors.at(i).post([answered = answered_, i, r] {
            answered[i].store(r, std::memory_order_release);  // rounds run in order
        });
    return late;
}

}  // namespace nfsrdmad::engine
