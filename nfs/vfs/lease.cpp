#include "nfs/vfs/lease.h"

#include <fcntl.h>
#include <signal.h>

#include <algorithm>
#include <atomic>
#include <cerrno>
#include <mutex>
#include <vector>

#include "nfs/vfs/sys.h"

namespace nfsrdmad::vfs {
namespace {

// The write-leased descriptions, by file. Few (one per write delegation) and looked up
// only where the daemon would otherwise open the file: a vector is enough.
// g_any spares the hot paths the mutex while no write lease is held.
std::mutex g_leased_mu;
std::vector<std::shared_ptr<const OpenFile>> g_leased;
std::atomic<size_t> g_any{0};

Result<void> set_lease(int fd, int type) {
    // The signal first: a break between F_SETLEASE and F_SETSIG would come as SIGIO.
    if (::fcntl(fd, F_SETSIG, lease_signal()) != 0) return fail(errno);
    if (::fcntl(fd, F_SETLEASE, type) != 0) return fail(errno);
    return {};
}

}  // namespace

int lease_signal() {
    return SIGRTMIN + 1;
}

Result<std::shared_ptr<Lease>> Lease::take_read(const OpenFile& f) {
    auto fd = sys::reopen(f.fd.get(), O_RDONLY | O_NONBLOCK);
    if (!fd) return fd.failure();
    if (auto r = set_lease(fd->get(), F_RDLCK); !r) return r.failure();
    return std::shared_ptr<Lease>(new Lease(std::move(*fd), nullptr));
}

Result<std::shared_ptr<Lease>> Lease::take_write(std::shared_ptr<const OpenFile> f) {
    if (!f || !f->writable) return fail(EBADF);
    // A dup shares the description, which is what a lease belongs to (and what the
    // kernel counts as the one open), and gives si_fd a number of the lease's own.
    auto fd = sys::dup_fd(f->fd.get());
    if (!fd) return fd.failure();
    if (auto r = set_lease(fd->get(), F_WRLCK); !r) return r.failure();
    {
        std::lock_guard l(g_leased_mu);
        g_leased.push_back(f);
        g_any.store(g_leased.size(), std::memory_order_release);
    }
    return std::shared_ptr<Lease>(new Lease(std::move(*fd), std::move(f)));
}

Lease::~Lease() {
    release();
}

void Lease::release(bool notify) {
    if (released_.exchange(true)) return;
    if (fd_.get() >= 0) ::fcntl(fd_.get(), F_SETLEASE, F_UNLCK);
    if (file_) {
        std::lock_guard l(g_leased_mu);
        auto it = std::find(g_leased.begin(), g_leased.end(), file_);
        if (it != g_leased.end()) g_leased.erase(it);
        g_any.store(g_leased.size(), std::memory_order_release);
    }
    if (notify && on_release_) on_release_();
}

bool Lease::breaking() const {
    return ::fcntl(fd_.get(), F_GETLEASE) != (file_ ? F_WRLCK : F_RDLCK);
}

std::shared_ptr<const OpenFile> leased_file(const FileHandle& handle) {
    if (g_any.load(std::memory_order_acquire) == 0) return nullptr;
    std::lock_guard l(g_leased_mu);
    for (const auto& f : g_leased)
        if (f->handle == handle) return f;
    return nullptr;
}

}  // namespace nfsrdmad::vfs
