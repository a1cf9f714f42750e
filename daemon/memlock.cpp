#include "daemon/memlock.h"

#include <linux/capability.h>
#include <sys/resource.h>
#include <sys/syscall.h>
#include <unistd.h>

#include <spdlog/fmt/fmt.h>

namespace nfsrdmad::daemon {

bool has_capability(int cap) {
    __user_cap_header_struct hdr{_LINUX_CAPABILITY_VERSION_3, 0};
    __user_cap_data_struct data[2]{};
    if (syscall(SYS_capget, &hdr, data) != 0) return false;
    return data[cap / 32].effective & (1u << (cap % 32));
}

rdma::verbs::PoolSizes pool_sizes(const config::Config& cfg) {
    rdma::verbs::PoolSizes p;
    p.inline_size = cfg.rdma_tuning.inline_size;
    p.max_inline_buffers = cfg.rdma_tuning.receive_buffers;
    p.max_read_bytes = cfg.rdma_tuning.max_read_bytes;
    p.max_payload_buffers = cfg.rdma_tuning.max_payload_buffers;
    p.huge_pages = cfg.rdma_tuning.huge_pages;
    return p;
}

std::string check_memlock(const rdma::verbs::PoolSizes& p) {
    if (has_capability(CAP_IPC_LOCK)) return {};
    const unsigned long long need = p.max_registered_bytes();
    rlimit rl{};
    getrlimit(RLIMIT_MEMLOCK, &rl);
    if (rl.rlim_cur == RLIM_INFINITY || rl.rlim_cur >= need) return {};
    const unsigned long long kib = (need + 1023) / 1024;
    return fmt::format(
        "RLIMIT_MEMLOCK is {} KiB but RDMA may register up to {} KiB. Raise it: "
        "`ulimit -l {}` (or unlimited) in the shell that starts nfsrdmad, LimitMEMLOCK=infinity "
        "in its systemd unit, or lower rdma.max_payload_buffers",
        rl.rlim_cur / 1024, kib, kib);
}

}  // namespace nfsrdmad::daemon
