// stateid4 (RFC 8881 §8.2) in plain types, and the special stateids (§8.2.3).
//
// The "other" field of every stateid this server hands out is
//   bytes 0..3   boot epoch      (another server instance: NFS4ERR_BAD_STATEID, §15.1.16.5)
//   bytes 4..7   table index
//   bytes 8..11  generation      (bumped each time the index is reused: a freed or forged
//                                 stateid no longer matches, NFS4ERR_BAD_STATEID)
// all big-endian.
#pragma once

#include <array>
#include <cstdint>

namespace nfsrdmad::nfs::v4::state {

struct Stateid {
    uint32_t seqid = 0;
    std::array<uint8_t, 12> other{};
    bool operator==(const Stateid&) const = default;
};

enum class StateKind : uint8_t { Open = 1, Lock = 2, Delegation = 4 };
using KindMask = uint8_t;
inline constexpr KindMask kAnyKind = 7;
inline constexpr KindMask mask_of(StateKind k) {
    return static_cast<KindMask>(k);
}

// §8.2.3 special stateids; §16.2.3.1.2 the current stateid.
enum class Special {
    None,        // an ordinary stateid: look it up
    Anonymous,   // seqid 0, other all zeros
    ReadBypass,  // seqid all ones, other all ones
    Current,     // seqid 1, other all zeros: the COMPOUND's current stateid (§16.2.3.1.2)
    Invalid,     // seqid NFS4_UINT32_MAX, other all zeros: always NFS4ERR_BAD_STATEID
    Reserved,    // any other seqid with other all zeros or all ones: NFS4ERR_BAD_STATEID
};

inline Special classify(const Stateid& s) {
    bool zeros = true, ones = true;
    for (uint8_t b : s.other) {
        zeros = zeros && b == 0;
        ones = ones && b == 0xff;
    }
    if (zeros) {
        if (s.seqid == 0) return Special::Anonymous;
        if (s.seqid == 1) return Special::Current;
        if (s.seqid == 0xffffffffu) return Special::Invalid;
        return Special::Reserved;
    }
    if (ones) return s.seqid == 0xffffffffu ? Special::ReadBypass : Special::Reserved;
    return Special::None;
}

}  // namespace nfsrdmad::nfs::v4::state
