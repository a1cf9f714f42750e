// lease.h — Linux file leases (fcntl(2) F_SETLEASE) under NFSv4.1 delegations: the kernel
// tells this daemon when a local process on the server opens the file in a way the
// delegation does not allow (for writing under a read delegation; at all under a write
// one) or truncates it, as the kernel nfsd learns it from its own leases, so the
// delegation is recalled before the process goes on (RFC 8881 §10.4.1: access by another
// party, here not through NFS at all).
//
// A read lease is taken on a read-only open file description of its own (a reopen of the
// delegation's file), so that each delegation holds and drops its own. The kernel grants
// a read lease only while nobody has the file open for writing.
//
// A write lease is taken on the delegation's own read-write description (the open's), not
// a reopen: the kernel grants one only while no other description of the file is open
// anywhere, this daemon's included. While it is held, every open(2) of the file breaks it,
// even a read-only one of this daemon's own (a COMMIT's or a SETATTR's fsync), so the
// daemon reaches the file through that description instead (leased_file()).
//
// A lease break is a signal (lease_signal(), queued with the lease's descriptor in si_fd)
// to this process, whose signals the main thread takes (daemon/signals.h). The opener
// waits in open(2) until the lease is released or /proc/sys/fs/lease-break-time runs out
// (45 s by default); callers that must not wait open with O_NONBLOCK and get EWOULDBLOCK.
//
// Owner: whoever holds the shared_ptr (a Delegation); the lease goes with it, or when the
// delegation leaves the table (release()).
#pragma once

#include <atomic>
#include <functional>
#include <memory>

#include "nfs/vfs/fd_cache.h"
#include "nfs/vfs/handle.h"
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
    // A write lease on f's own description, which must be writable (EBADF otherwise).
    // EAGAIN: another description of the file is open; the rest as take_read. Until the
    // lease goes, leased_file(f->handle) is f.
    static Result<std::shared_ptr<Lease>> take_write(std::shared_ptr<const OpenFile> f);
    ~Lease();
    Lease(const Lease&) = delete;
    Lease& operator=(const Lease&) = delete;

    int fd() const { return fd_.get(); }
    bool write() const { return file_ != nullptr; }
    // Whether a break is pending (F_GETLEASE no longer says the type taken): what SIGIO
    // asks.
    bool breaking() const;
    // Lets the lease go now, whoever else still holds this object (a copy of its
    // delegation a worker took a moment ago): once a delegation has left the table, an
    // opener must not wait for the last copy. The destructor does it otherwise.
    // `notify`: run on_release's function (false: the caller lets several go and says so
    // once, after the last).
    void release(bool notify = true);
    // Runs once, when the lease is let go (on the thread that lets it go). Set before the
    // lease is shared.
    void on_release(std::function<void()> fn) { on_release_ = std::move(fn); }

  private:
    Lease(UniqueFd fd, std::shared_ptr<const OpenFile> file)
        : fd_(std::move(fd)), file_(std::move(file)) {}
    UniqueFd fd_;  // read: a reopen of its own; write: a dup of file_'s descriptor
    std::shared_ptr<const OpenFile> file_;  // write only
    std::function<void()> on_release_;
    std::atomic<bool> released_{false};
};

// The description a write lease is held on for `handle`, or null: what the daemon's own
// I/O, fsync and truncation of that file go through while the lease is held.
std::shared_ptr<const OpenFile> leased_file(const FileHandle& handle);

}  // namespace nfsrdmad::vfs
