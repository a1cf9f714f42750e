#include "transport/tcp/pipe_pool.h"

#include <fcntl.h>
#include <sys/ioctl.h>
#include <unistd.h>

#include <spdlog/spdlog.h>

#include <cerrno>
#include <cstring>

namespace nfsrdmad::tcp {

std::shared_ptr<PipePool> PipePool::create(size_t bytes, size_t keep, size_t max_leased) {
    return std::shared_ptr<PipePool>(new PipePool(bytes, keep, max_leased));
}

std::unique_ptr<PipePool::Lease> PipePool::get() {
    {
        std::lock_guard lock(mu_);
        if (leased_ >= max_leased_) return nullptr;
        if (!idle_.empty()) {
            Pipe p = std::move(idle_.back());
            idle_.pop_back();
            ++leased_;
            return std::make_unique<Lease>(shared_from_this(), std::move(p));
        }
        ++leased_;  // reserved while the pipe is made outside the lock
    }
    int fds[2];
    if (::pipe2(fds, O_CLOEXEC | O_NONBLOCK) != 0) {
        std::lock_guard lock(mu_);
        --leased_;
        return nullptr;
    }
    Pipe p{engine::UniqueFd(fds[0]), engine::UniqueFd(fds[1])};
    // Past /proc/sys/fs/pipe-max-size (1 MiB by default) needs CAP_SYS_RESOURCE, which
    // a container's root may lack: then 1 MiB, and what does not fit is sent from memory.
    if (::fcntl(fds[1], F_SETPIPE_SZ, static_cast<int>(bytes_)) < 0 &&
        ::fcntl(fds[1], F_SETPIPE_SZ, 1 << 20) < 0) {
        std::lock_guard lock(mu_);
        --leased_;
        if (!warned_) {
            warned_ = true;
            spdlog::warn(
                "tcp: cannot size a pipe to {} bytes ({}); READ data is copied "
                "instead of spliced",
                bytes_, std::strerror(errno));
        }
        return nullptr;
    }
    return std::make_unique<Lease>(shared_from_this(), std::move(p));  // reserved above
}

void PipePool::put(Pipe p) {
    int queued = 0;
    bool reusable = ::ioctl(p.read_end.get(), FIONREAD, &queued) == 0 && queued == 0;
    std::lock_guard lock(mu_);
    --leased_;
    if (reusable && idle_.size() < keep_) idle_.push_back(std::move(p));  // else closed
}

size_t PipePool::leased() const {
    std::lock_guard lock(mu_);
    return leased_;
}

size_t PipePool::idle() const {
    std::lock_guard lock(mu_);
    return idle_.size();
}

PipePool::Lease::~Lease() {
    pool_->put(std::move(pipe_));
}

}  // namespace nfsrdmad::tcp
