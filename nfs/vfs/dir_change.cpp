#include "nfs/vfs/dir_change.h"

#include <fcntl.h>

#include <array>
#include <functional>
#include <mutex>
#include <string_view>
#include <utility>

#include "nfs/vfs/attrs.h"

namespace nfsrdmad::vfs::detail {
namespace {

// Enough stripes that two busy directories rarely share one; a shared stripe only
// serialises two changes that would otherwise run side by side.
constexpr unsigned kStripes = 256;

std::array<std::mutex, kStripes>& stripes() {
    static std::array<std::mutex, kStripes> table;
    return table;
}

unsigned stripe_of(const Node& dir) {
    const auto d = dir.handle.data();
    const std::string_view bytes(reinterpret_cast<const char*>(d.data()), d.size());
    return static_cast<unsigned>(std::hash<std::string_view>{}(bytes) % kStripes);
}

}  // namespace

DirLock::DirLock(const Node& dir) : first_(stripe_of(dir)), second_(first_) {
    stripes()[first_].lock();
}

DirLock::DirLock(const Node& a, const Node& b) : first_(stripe_of(a)), second_(stripe_of(b)) {
    if (second_ < first_) std::swap(first_, second_);
    stripes()[first_].lock();
    if (second_ != first_) stripes()[second_].lock();
}

DirLock::~DirLock() {
    if (second_ != first_) stripes()[second_].unlock();
    stripes()[first_].unlock();
}

bool read_dir_attrs(const Node& dir, struct statx* out) {
    auto a = getattr(dir);
    if (!a) return false;
    *out = *a;
    return true;
}

}  // namespace nfsrdmad::vfs::detail
