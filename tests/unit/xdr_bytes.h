// Helpers of the XDR codec tests: big-endian words written out by hand (RFC 4506 §4.1),
// and a generated type's encoding.
#pragma once

#include <cstdint>
#include <initializer_list>
#include <vector>

#include "xdr/runtime/xdr.h"

namespace nfsrdmad::xdr::testing {

inline std::vector<uint8_t> be(std::initializer_list<uint32_t> words) {
    std::vector<uint8_t> v;
    for (uint32_t w : words)
        for (int s = 24; s >= 0; s -= 8) v.push_back(uint8_t(w >> s));
    return v;
}

template <class T>
std::vector<uint8_t> encode(const T& v) {
    std::vector<uint8_t> out;
    Encoder e(out);
    xdr_encode(e, v);
    return out;
}

}  // namespace nfsrdmad::xdr::testing
