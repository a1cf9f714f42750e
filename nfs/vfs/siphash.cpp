#include "nfs/vfs/siphash.h"

#include <bit>

namespace nfsrdmad::vfs {
namespace {

uint64_t load_le64(const uint8_t* p) {
    uint64_t v = 0;
    for (int i = 7; i >= 0; --i) v = (v << 8) | p[i];
    return v;
}

struct SipState {
    uint64_t v0, v1, v2, v3;

    void round() {
        v0 += v1;
        v1 = std::rotl(v1, 13);
        v1 ^= v0;
        v0 = std::rotl(v0, 32);
        v2 += v3;
        v3 = std::rotl(v3, 16);
        v3 ^= v2;
        v0 += v3;
        v3 = std::rotl(v3, 21);
        v3 ^= v0;
        v2 += v1;
        v1 = std::rotl(v1, 17);
        v1 ^= v2;
        v2 = std::rotl(v2, 32);
    }

    void compress(uint64_t m) {  // 2 compression rounds
        v3 ^= m;
        round();
        round();
        v0 ^= m;
    }

    uint64_t finish() {  // 4 finalization rounds
        v2 ^= 0xff;
        for (int i = 0; i < 4; ++i) round();
        return v0 ^ v1 ^ v2 ^ v3;
    }
};

}  // namespace

uint64_t siphash24(const SipKey& key, std::span<const uint8_t> data) {
    const uint64_t k0 = load_le64(key.data());
    const uint64_t k1 = load_le64(key.data() + 8);
    SipState s{k0 ^ 0x736f6d6570736575ULL, k1 ^ 0x646f72616e646f6dULL, k0 ^ 0x6c7967656e657261ULL,
               k1 ^ 0x7465646279746573ULL};

    const size_t full = data.size() & ~size_t{7};
    for (size_t i = 0; i < full; i += 8) s.compress(load_le64(data.data() + i));

    // Last block: remaining 0..7 bytes, length (mod 256) in the top byte.
    uint64_t last = uint64_t{data.size() & 0xff} << 56;
    for (size_t i = full; i < data.size(); ++i) last |= uint64_t{data[i]} << (8 * (i - full));
    s.compress(last);
    return s.finish();
}

}  // namespace nfsrdmad::vfs
