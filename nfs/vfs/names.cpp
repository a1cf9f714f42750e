#include "nfs/vfs/names.h"

#include <cerrno>

namespace nfsrdmad::vfs {

Result<void> validate_name(std::string_view name) {
    if (name.empty()) return fail(EINVAL);
    if (name.size() > kNameMax) return fail(ENAMETOOLONG);
    if (name.find('/') != std::string_view::npos) return fail(EINVAL);
    if (name.find('\0') != std::string_view::npos) return fail(EINVAL);
    return {};
}

bool is_dot_or_dotdot(std::string_view name) {
    return name == "." || name == "..";
}

Result<void> validate_new_name(std::string_view name) {
    if (auto r = validate_name(name); !r) return r;
    if (is_dot_or_dotdot(name)) return fail(EEXIST);
    return {};
}

Result<void> validate_existing_name(std::string_view name) {
    if (auto r = validate_name(name); !r) return r;
    if (is_dot_or_dotdot(name)) return fail(EINVAL);
    return {};
}

}  // namespace nfsrdmad::vfs
