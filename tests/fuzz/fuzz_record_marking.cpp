// libFuzzer target: RPC record marking on TCP (RFC 5531 §11). The input is a byte
// stream as a client might send it; its first byte sets how recv() slices it.
#include <algorithm>
#include <cstdint>
#include <cstdlib>
#include <cstring>
#include <vector>

#include "transport/tcp/record_marking.h"

using nfsrdmad::tcp::RecordAssembler;

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
    if (size < 1) return 0;
    const size_t step = data[0] == 0 ? size_t(-1) : data[0];
    ++data;
    --size;
    // Past kFirstChunk, so that long fragments take both ways to their buffer.
    constexpr size_t kMaxRecord = 4 * RecordAssembler::kFirstChunk;
    RecordAssembler a(kMaxRecord);
    size_t i = 0;
    while (i < size) {
        // What the connection does when a long fragment begins: it says how many bytes
        // the socket holds (here, the rest of the input; the second byte of it, when odd,
        // makes it say nothing).
        if (a.sizing() && !(size > 1 && (data[1] & 1))) a.waiting(size - i);
        auto want = a.want();
        if (want.empty()) abort();  // the assembler must always accept more bytes
        size_t n = std::min({want.size(), step, size - i});
        std::memcpy(want.data(), data + i, n);
        i += n;
        auto s = a.commit(n);
        if (s == RecordAssembler::Status::TooLarge) break;
        if (s == RecordAssembler::Status::RecordReady) {
            auto r = a.take();
            if (r.size > kMaxRecord) abort();
            if (r.size > 0 && r.data == nullptr) abort();
            // Every byte of the record must be readable (ASan checks the copy).
            std::vector<uint8_t> copy(r.data.get(), r.data.get() + r.size);
        }
    }
    return 0;
}
