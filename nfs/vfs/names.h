// names.h — validation of single path components received from clients.
//
// RFC 1813 §2.6 (filename3) / §3.3.3 (LOOKUP): a name is one component; the server must
// never interpret '/' in it, so "a/b" can never walk more than one level.
#pragma once

#include <cstddef>
#include <string_view>

#include "nfs/vfs/result.h"

namespace nfsrdmad::vfs {

inline constexpr size_t kNameMax = 255;  // NAME_MAX on Linux filesystems we export

// EINVAL: empty, contains '/' or NUL. ENAMETOOLONG: longer than 255 bytes.
// "." and ".." pass (LOOKUP handles them); see validate_new_name for creations.
Result<void> validate_name(std::string_view name);

bool is_dot_or_dotdot(std::string_view name);

// For names that are to be created (CREATE, MKDIR, SYMLINK, MKNOD, LINK, rename target):
// validate_name plus "." / ".." -> EEXIST (they always exist).
Result<void> validate_new_name(std::string_view name);

// For names that are to be removed or renamed away: validate_name plus "." / ".." -> EINVAL.
Result<void> validate_existing_name(std::string_view name);

}  // namespace nfsrdmad::vfs
