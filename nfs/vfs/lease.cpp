#include "nfs/vfs/lease.h"

#include <fcntl.h>
#include <signal.h>

#include <cerrno>

#include "nfs/vfs/sys.h"

namespace nfsrdmad::vfs {

int lease_signal() {
    return SIGRTMIN + 1;
}

Result<std::shared_ptr<Lease>> Lease::take_read(const OpenFile& f) {
    auto fd = sys::reopen(f.fd.get(), O_RDONLY | O_NONBLOCK);
    if (!fd) return fd.failure();
    // The signal first: a break between F_SETLEASE and F_SETSIG would come as SIGIO.
    if (::fcntl(fd->get(), F_SETSIG, lease_signal()) != 0) return fail(errno);
    if (::fcntl(fd->get(), F_SETLEASE, F_RDLCK) != 0) return fail(errno);
    return std::shared_ptr<Lease>(new Lease(std::move(*fd)));
}

Lease::~Lease() {
    if (fd_.get() >= 0) ::fcntl(fd_.get(), F_SETLEASE, F_UNLCK);
}

bool Lease::breaking() const {
    return ::fcntl(fd_.get(), F_GETLEASE) != F_RDLCK;
}

}  // namespace nfsrdmad::vfs
