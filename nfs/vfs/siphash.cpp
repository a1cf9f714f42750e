// SipHash-2-4 is libsodium's (crypto_shorthash_siphash24): a MAC is not ours to write.
// Its 8 output bytes are the 64-bit result stored little-endian, which is the value the
// reference implementation returns read back little-endian; the handles a daemon made
// with the hand-written one this replaced are the same bytes (vfs_test's vectors).
#include "nfs/vfs/siphash.h"

#include <sodium.h>

namespace nfsrdmad::vfs {

uint64_t siphash24(const SipKey& key, std::span<const uint8_t> data) {
    static_assert(crypto_shorthash_siphash24_KEYBYTES == sizeof(SipKey) &&
                  crypto_shorthash_siphash24_BYTES == sizeof(uint64_t));
    // The library asks for sodium_init() before any other call (once; it may be called
    // again). SipHash itself needs nothing it sets up, so its failure changes nothing here.
    [[maybe_unused]] static const int ready = sodium_init();
    uint8_t out[crypto_shorthash_siphash24_BYTES];
    crypto_shorthash_siphash24(out, data.data(), data.size(), key.data());
    uint64_t v = 0;
    for (int i = 7; i >= 0; --i) v = (v << 8) | out[i];
    return v;
}

}  // namespace nfsrdmad::vfs
