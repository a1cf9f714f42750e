// byte_range.h — byte ranges and one owner's set of byte-range locks (pure).
//
// One representation for both protocols: an inclusive [first, last] pair of 64-bit
// offsets, never empty, where last == kToEof means "to the end of the file, however it
// grows". The conversions say how each protocol's (offset, length) maps onto it:
//   NFSv4 (RFC 8881 §18.10.3, §18.10.4): length all ones = to EOF; length 0 and
//     offset + length beyond 2^64-1 are NFS4ERR_INVAL.
//   NLM v4 (XNFS nlm4_lock): l_len 0 = to EOF. An end past 2^64-1 is clamped to EOF,
//     as the Linux lockd does for ranges past its OFFSET_MAX.
// Arithmetic on ranges never wraps.
//
// OwnerLocks is one owner's locks on one file with POSIX semantics (fcntl(2), as Linux
// applies them to one owner): ranges are disjoint and sorted, setting a range replaces
// whatever the owner held there (upgrade read->write, downgrade write->read), clearing
// a sub-range splits a lock, and adjacent or overlapping ranges of the same type merge.
#pragma once

#include <cstdint>
#include <limits>
#include <optional>
#include <span>
#include <vector>

#include "nfs/vfs/result.h"

namespace nfsrdmad::vfs::state {

inline constexpr uint64_t kToEof = std::numeric_limits<uint64_t>::max();

struct ByteRange {
    uint64_t first = 0;
    uint64_t last = kToEof;  // inclusive; kToEof = to end of file

    bool to_eof() const { return last == kToEof; }
    bool overlaps(const ByteRange& o) const { return first <= o.last && o.first <= last; }
    bool contains(const ByteRange& o) const { return first <= o.first && o.last <= last; }
    bool operator==(const ByteRange&) const = default;

    // EINVAL for length 0 or an end past 2^64-1 (RFC 8881 §18.10.3).
    static Result<ByteRange> from_nfs4(uint64_t offset, uint64_t length);
    // length 0 or an end past 2^64-1 = to EOF. Never fails.
    static ByteRange from_nlm(uint64_t offset, uint64_t length);
    // For LOCK4denied / nlm4_holder: all ones (NFSv4) or 0 (NLM) when to EOF.
    uint64_t nfs4_length() const { return to_eof() ? kToEof : last - first + 1; }
    uint64_t nlm_length() const { return to_eof() ? 0 : last - first + 1; }
};

// READ = shared, WRITE = exclusive (RFC 8881 §18.10.1 nfs_lock_type4; NLM exclusive flag).
enum class LockType : uint8_t { Read, Write };

inline bool types_conflict(LockType a, LockType b) {
    return a == LockType::Write || b == LockType::Write;
}

struct Lock {
    ByteRange range;
    LockType type = LockType::Read;
    bool operator==(const Lock&) const = default;
};

// One owner's locks on one file: sorted by first, disjoint.
using OwnerLocks = std::vector<Lock>;

// The owner's locks after setting `range` to `type` (nullopt = unlock it).
OwnerLocks apply_lock(std::span<const Lock> held, ByteRange range, std::optional<LockType> type);

// The first of `held` that a request for `range`/`type` by another owner conflicts with.
const Lock* first_conflict(std::span<const Lock> held, ByteRange range, LockType type);

// `ranges` sorted, with overlapping and touching ones merged.
std::vector<ByteRange> merge_ranges(std::vector<ByteRange> ranges);
// The parts of `range` that none of `merged` (merge_ranges' result) covers, sorted.
std::vector<ByteRange> uncovered(ByteRange range, std::span<const ByteRange> merged);

}  // namespace nfsrdmad::vfs::state
