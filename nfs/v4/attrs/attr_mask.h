// attr_mask.h — a set of NFSv4 attribute numbers (RFC 8881 §3.3.7 bitmap4: bit n of
// word n / 32 stands for attribute n).
#pragma once

#include <array>
#include <bit>
#include <cstddef>
#include <cstdint>
#include <initializer_list>

#include "xdr/nfs4_prot.h"

namespace nfsrdmad::nfs::v4 {

namespace x4 = xdr::nfs4;

class AttrMask {
  public:
    static constexpr size_t kWords = 3;  // attributes 0..95: every one RFC 8881 defines

    constexpr AttrMask() = default;
    constexpr AttrMask(std::initializer_list<uint32_t> attrs) {
        for (uint32_t a : attrs) set(a);
    }

    constexpr bool has(uint32_t a) const { return a < kWords * 32 && (w_[a / 32] >> (a % 32)) & 1; }
    constexpr void set(uint32_t a) {
        if (a < kWords * 32) w_[a / 32] |= 1u << (a % 32);
    }
    constexpr void clear(uint32_t a) {
        if (a < kWords * 32) w_[a / 32] &= ~(1u << (a % 32));
    }
    constexpr bool empty() const { return (w_[0] | w_[1] | w_[2]) == 0; }
    constexpr AttrMask operator&(const AttrMask& o) const {
        return AttrMask(w_[0] & o.w_[0], w_[1] & o.w_[1], w_[2] & o.w_[2]);
    }
    constexpr AttrMask operator|(const AttrMask& o) const {
        return AttrMask(w_[0] | o.w_[0], w_[1] | o.w_[1], w_[2] | o.w_[2]);
    }
    constexpr AttrMask without(const AttrMask& o) const {
        return AttrMask(w_[0] & ~o.w_[0], w_[1] & ~o.w_[1], w_[2] & ~o.w_[2]);
    }
    constexpr bool operator==(const AttrMask&) const = default;

    // Bits past the attributes any minor version defines are dropped: no attribute we
    // could return or set stands there. `beyond` tells whether any was set.
    static AttrMask from_wire(const x4::bitmap4& b, bool* beyond = nullptr) {
        AttrMask m;
        bool extra = false;
        for (size_t i = 0; i < b.size(); ++i) {
            if (i < kWords)
                m.w_[i] = b[i];
            else if (b[i])
                extra = true;
        }
        if (beyond) *beyond = extra;
        return m;
    }
    // A bitmap4 (uint32_t<>) read into a mask without the vector xdr_decode makes: it
    // accepts what that accepts, and drops the words from_wire drops.
    static bool decode(xdr::Decoder& d, AttrMask& out) {
        const uint32_t n = d.get_u32();
        if (!d.ok() || n > d.remaining() / 4) {
            d.fail();
            return false;
        }
        out = AttrMask{};
        for (uint32_t i = 0; i < n; ++i) {
            const uint32_t w = d.get_u32();
            if (i < kWords) out.w_[i] = w;
        }
        return d.ok();
    }
    // Trailing zero words are left off (RFC 8881 §3.3.7 allows any length).
    x4::bitmap4 to_wire() const {
        size_t n = kWords;
        while (n > 0 && w_[n - 1] == 0) --n;
        return x4::bitmap4(w_.begin(), w_.begin() + n);
    }
    // Calls f(attr) for each attribute in the set, ascending: the order of attrlist4.
    template <class F>
    void for_each(F&& f) const {
        for (uint32_t i = 0; i < kWords; ++i)
            for (uint32_t bits = w_[i]; bits != 0; bits &= bits - 1)
                f(i * 32 + static_cast<uint32_t>(std::countr_zero(bits)));
    }
    // bitmap4's words 0..kWords-1 (those past the last set bit are zero).
    const std::array<uint32_t, kWords>& words() const { return w_; }

  private:
    constexpr AttrMask(uint32_t a, uint32_t b, uint32_t c) : w_{a, b, c} {}
    std::array<uint32_t, kWords> w_{};
};

}  // namespace nfsrdmad::nfs::v4
