// siphash.h — SipHash-2-4 (Aumasson & Bernstein, 2012), libsodium's: 64-bit keyed PRF used
// as the file-handle MAC and for stable, non-secret hashing (derived fsids, cookie verifiers).
#pragma once

#include <array>
#include <cstddef>
#include <cstdint>
#include <span>

namespace nfsrdmad::vfs {

using SipKey = std::array<uint8_t, 16>;

// SipHash-2-4 of data under key, as the reference implementation returns it (k0/k1 are the
// key bytes 0-7/8-15 read little-endian), so the reference test vectors apply.
uint64_t siphash24(const SipKey& key, std::span<const uint8_t> data);

}  // namespace nfsrdmad::vfs
