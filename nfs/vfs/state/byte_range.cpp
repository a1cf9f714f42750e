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

std::vector<ByteRange> merge_ranges(std::vector<ByteRange> ranges) {
    std::sort(ranges.begin(), ranges.end(),
              [](const ByteRange& a, const ByteRange& b) { return a.first < b.first; });
    std::vector<ByteRange> out;
    for (const ByteRange& r : ranges) {
        if (!out.empty() && (out.back().last == kToEof || r.first <= out.back().last + 1)) {
            out.back().last = std::max(out.back().last, r.last);
        } else {
            out.push_back(r);
        }
    }
    return out;
}

std::vector<ByteRange> uncovered(ByteRange range, std::span<const ByteRange> merged) {
    std::vector<ByteRange> gaps;
    // The first merged range that reaches into `range`; those after it start later.
    auto it = std::lower_bound(merged.begin(), merged.end(), range.first,
                               [](const ByteRange& c, uint64_t v) { return c.last < v; });
    uint64_t next = range.first;  // the first byte not yet known to be covered
    for (; it != merged.end() && it->first <= range.last; ++it) {
        if (it->first > next) gaps.push_back({next, it->first - 1});
        if (it->last >= range.last) return gaps;  // covered to the end (never wraps)
        next = it->last + 1;
    }
    gaps.push_back({next, range.last});
    return gaps;
}

}  // namespace nfsrdmad::vfs::state
