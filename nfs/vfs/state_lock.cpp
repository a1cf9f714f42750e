#include "nfs/vfs/state_lock.h"

#include <fcntl.h>
#include <sys/file.h>
#include <unistd.h>

#include <cerrno>
#include <cstring>

namespace nfsrdmad::vfs {

std::optional<StateDirLock> StateDirLock::acquire(const std::string& dir, std::string* why) {
    const std::string path = dir + "/" + kStateLockFile;
    UniqueFd fd(::open(path.c_str(), O_RDWR | O_CREAT | O_CLOEXEC | O_NOFOLLOW, 0600));
    if (!fd) {
        if (why) *why = path + ": " + std::strerror(errno);
        return std::nullopt;
    }
    if (::flock(fd.get(), LOCK_EX | LOCK_NB) != 0) {
        const int e = errno;
        if (e != EWOULDBLOCK) {
            if (why) *why = path + ": " + std::strerror(e);
            return std::nullopt;
        }
        char pid[32] = {};
        const ssize_t n = ::pread(fd.get(), pid, sizeof pid - 1, 0);
        std::string holder(pid, n > 0 ? size_t(n) : 0);
        while (!holder.empty() && (holder.back() == '\n' || holder.back() == ' '))
            holder.pop_back();
        if (why)
            *why = dir + " is in use by another nfsrdmad" +
                   (holder.empty() ? std::string() : ", pid " + holder) +
                   ": give each daemon a state_dir of its own";
        return std::nullopt;
    }
    const std::string text = std::to_string(::getpid()) + "\n";
    if (::ftruncate(fd.get(), 0) != 0 ||
        ::pwrite(fd.get(), text.data(), text.size(), 0) != ssize_t(text.size())) {
        if (why) *why = path + ": " + std::strerror(errno);
        return std::nullopt;
    }
    return StateDirLock(std::move(fd));
}

}  // namespace nfsrdmad::vfs
