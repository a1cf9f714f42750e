// libFuzzer target: RPC record marking on TCP (RFC 5531 §11). The input is a byte
// stream as a client might send it; its first byte sets how recv() slices it (low seven
// bits: the most bytes per read, 0 for all at once) and whether the connection tells the
// assembler how many bytes are waiting (high bit clear), as it does with FIONREAD.
#include <algorithm>
#include <atomic>
#include <cstdint>
#include <cstdlib>
#include <cstring>
#include <vector>

#include "transport/tcp/record_marking.h"

using nfsrdmad::tcp::RecordAssembler;

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
    if (size < 1) return 0;
    const size_t step = (data[0] & 0x7f) == 0 ? size_t(-1) : (data[0] & 0x7f);
    const bool tell = !(data[0] & 0x80);
    ++data;
    --size;
    // A first chunk of 256 bytes and records of up to 4 KiB, so that short inputs take
    // every way to a record's buffer (first chunk, whole fragment, twofold growth).
    constexpr size_t kMaxRecord = 4096, kFirstChunk = 256;
    std::atomic<uint64_t> moved{0};
    RecordAssembler a(kMaxRecord, nullptr, &moved, kFirstChunk);
    size_t i = 0, sent = 0;
    while (i < size) {
        if (tell && a.sizing()) a.waiting(size - i);  // the rest of the input is "waiting"
        auto want = a.want();
        if (want.empty()) abort();  // the assembler must always accept more bytes
        size_t n = std::min({want.size(), step, size - i});
        std::memcpy(want.data(), data + i, n);
        i += n;
        sent += n;
        auto s = a.commit(n);
        if (s == RecordAssembler::Status::TooLarge) break;
        if (s == RecordAssembler::Status::RecordReady) {
            auto r = a.take();
            if (r.size > kMaxRecord) abort();
            if (r.size > 0 && r.data == nullptr) abort();
            // Every byte of the record must be readable (ASan checks the copy).
            std::vector<uint8_t> copy(r.data.get(), r.data.get() + r.size);
        }
        // Buffers grow at least twofold (but for one step up to a first chunk): a record
        // moves less than twice its size and a first chunk, never a quadratic amount.
        if (moved.load() > 3 * sent) abort();
    }
    return 0;
}
