// Polls until a condition holds, for tests of what other threads do.
#pragma once

#include <chrono>
#include <thread>

namespace nfsrdmad::test {

// Polls `pred` every millisecond until it holds or 10 s pass; returns its last value.
template <typename Pred>
bool eventually(Pred pred) {
    for (int i = 0; i < 10000 && !pred(); ++i)
        std::this_thread::sleep_for(std::chrono::milliseconds(1));
    return pred();
}

}  // namespace nfsrdmad::test
