#include "nfs/vfs/result.h"

#include <cerrno>
#include <cstring>

namespace nfsrdmad::vfs {

std::string describe_error(int code) {
    if (code == 0) return "success";
    if (code == kBadHandle) return "bad file handle";
    return std::strerror(code);
}

Result<void> check_syscall(long rc) {
    if (rc < 0) return fail(errno);
    return {};
}

}  // namespace nfsrdmad::vfs
