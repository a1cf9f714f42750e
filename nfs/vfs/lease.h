// lease.h — Linux file leases (fcntl(2) F_SETLEASE) under NFSv4.1 read delegations: the
// kernel tells this daemon when a local process on the server opens the file for writing
// (or truncates it), as the kernel nfsd learns it from its own leases, so the delegation
// is recalled before the process goes on (RFC 8881 §10.4.1: access by another party,
// here not through NFS at all).
//
// A lease is taken on a read-only open file description of its own (a reopen of the
// delegation's file), so that each delegation holds and drops its own. The kernel grants
// a read lease only while nobody has the file open for writing; a lease break is a signal
// (lease_signal(), queued with the lease's descriptor in si_fd) to this process, whose
// signals the main thread takes (daemon/signals.h). The opener waits in open(2) until
// the lease is released or /proc/sys/fs/lease-break-time runs out (45 s by default);
// callers that must not wait open with O_NONBLOCK and get EWOULDBLOCK.
//
// Owner: whoever holds the shared_ptr (a Delegation); the lease goes with its descriptor.
#pragma once

#include <memory>

#include "nfs/vfs/fd_cache.h"
#include "nfs/vfs/result.h"
#include "nfs/vfs/unique_fd.h"

namespace nfsrdmad::vfs {

// The real-time signal lease breaks arrive with (SIGRTMIN + 1). Block it in every thread
// and take it through a signalfd. SIGIO comes instead when the queue overflows.
int lease_signal();

class Lease {
  public:
    // A read lease on the file `f` is open on. EAGAIN: the file is open for writing
    // somewhere; EACCES/EPERM: neither the file's owner nor CAP_LEASE; EINVAL: the file
    // system has no leases.
    static Result<std::shared_ptr<Lease>> take_read(const OpenFile& f);
    ~Lease();
    Lease(const Lease&) = delete;
    Lease& operator=(const Lease&) = delete;

    int fd() const { return fd_.get(); }
    // Whether a break is pending (F_GETLEASE no longer says F_RDLCK): what SIGIO asks.
    bool breaking() const;

  private:
    explicit Lease(UniqueFd fd) : fd_(std::move(fd)) {}
    UniqueFd fd_;
};

}  // namespace nfsrdmad::vfs
