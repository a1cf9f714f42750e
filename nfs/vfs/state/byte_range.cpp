#include "nfs/vfs/state/byte_range.h"

#include <algorithm>
#include <cerrno>

namespace nfsrdmad::vfs::state {

Result<ByteRange> ByteRange::from_nfs4(uint64_t offset, uint64_t length) {
    if (length == 0) return fail(EINVAL);
    if (length == kToEof) return ByteRange{offset, kToEof};
    if (length - 1 > kToEof - offset) return fail(EINVAL);
    return ByteRange{offset, offset + (length - 1)};
}

ByteRange ByteRange::from_nlm(uint64_t offset, uint64_t length) {
    if (length == 0 || length - 1 > kToEof - offset) return ByteRange{offset, kToEof};
    return ByteRange{offset, offset + (length - 1)};
}

OwnerLocks apply_lock(std::span<const Lock> held, ByteRange range, std::optional<LockType> type) {
    OwnerLocks out;
    out.reserve(held.size() + 2);
    for (const Lock& l : held) {
        if (!l.range.overlaps(range)) {
            out.push_back(l);
            continue;
        }
        // Keep what sticks out on either side (the split of POSIX unlock/relock).
        if (l.range.first < range.first) out.push_back({{l.range.first, range.first - 1}, l.type});
        if (l.range.last > range.last) out.push_back({{range.last + 1, l.range.last}, l.type});
    }
    if (type) out.push_back({range, *type});
    std::sort(out.begin(), out.end(),
              [](const Lock& a, const Lock& b) { return a.range.first < b.range.first; });
    // Merge neighbours of the same type that touch (they cannot overlap any more).
    OwnerLocks merged;
    merged.reserve(out.size());
    for (const Lock& l : out) {
        if (!merged.empty()) {
            Lock& prev = merged.back();
            if (prev.type == l.type && prev.range.last != kToEof &&
                prev.range.last + 1 == l.range.first) {
                prev.range.last = l.range.last;
                continue;
            }
        }
        merged.push_back(l);
    }
    return merged;
}

const Lock* first_conflict(std::span<const Lock> held, ByteRange range, LockType type) {
    for (const Lock& l : held) {
        if (l.range.first > range.last) break;  // sorted: nothing further can overlap
        if (l.range.overlaps(range) && types_conflict(l.type, type)) return &l;
    }
    return nullptr;
}

std::vector<ByteRange> uncovered(ByteRange range, std::vector<ByteRange> covered) {
    std::sort(covered.begin(), covered.end(),
              [](const ByteRange& a, const ByteRange& b) { return a.first < b.first; });
    std::vector<ByteRange> gaps;
    uint64_t next = range.first;  // the first byte not yet known to be covered
    for (const ByteRange& c : covered) {
        if (!c.overlaps(range) || c.last < next) continue;
        if (c.first > next) gaps.push_back({next, c.first - 1});
        if (c.last >= range.last) return gaps;  // covered to the end (never wraps)
        next = c.last + 1;
    }
    gaps.push_back({next, range.last});
    return gaps;
}

}  // namespace nfsrdmad::vfs::state
