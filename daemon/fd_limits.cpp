#include "daemon/fd_limits.h"

#include <dirent.h>
#include <sys/resource.h>

#include <cerrno>
#include <cstring>

namespace nfsrdmad::daemon {

NofileLimit raise_nofile_limit() {
    NofileLimit out;
    struct rlimit rl {};
    if (::getrlimit(RLIMIT_NOFILE, &rl) != 0) {
        out.error = std::strerror(errno);
        return out;
    }
    out.before = out.soft = rl.rlim_cur;
    out.hard = rl.rlim_max;
    if (rl.rlim_cur == rl.rlim_max) return out;
    rl.rlim_cur = rl.rlim_max;
    if (::setrlimit(RLIMIT_NOFILE, &rl) != 0) {
        out.error = std::strerror(errno);
        return out;
    }
    out.soft = rl.rlim_cur;
    return out;
}

vfs::FdReserve fd_reserve(const config::Config& cfg, unsigned reactors) {
    vfs::FdReserve r;
    // TCP: a socket each. RDMA: a completion channel each (rdma.max_connections), only
    // when RDMA listeners are configured.
    r.connections = cfg.tcp_tuning.max_connections +
                    (cfg.rdma.empty() ? 0 : uint64_t(cfg.rdma_tuning.max_connections));
    r.pipes = cfg.tcp_tuning.max_pipes;
    r.workers = cfg.workers;
    r.exports = cfg.exports.size();
    // stdio and the log, the signal fd, rpcbind and resolver sockets, RDMA device files
    // and event channels (about 32); per reactor its epoll, eventfd and timerfd; listeners.
    r.other = 32 + 4ull * reactors + cfg.tcp.size() + cfg.rdma.size() + 1;
    // Descriptions holding byte-range locks mirrored to the files (locks.local): never
    // closed to make room, so the cache gets what is left after them.
    r.lock_descriptions = cfg.locks.local ? cfg.locks.max_files : 0;  // NLM and NFSv4.1
    return r;
}

size_t open_fd_count() {
    DIR* d = ::opendir("/proc/self/fd");
    if (!d) return 0;
    size_t n = 0;
    while (const dirent* e = ::readdir(d))
        if (e->d_name[0] != '.') ++n;
    ::closedir(d);
    return n > 0 ? n - 1 : 0;  // not the directory's own descriptor
}

}  // namespace nfsrdmad::daemon
