// identity.h — the caller's credentials and a per-thread scope that assumes them.
//
// NFS has no session: every request carries its own credentials (RFC 1813 §4.4, AUTH_SYS
// uid/gid/gids), and the server performs each operation as that user so the kernel
// enforces permissions, ownership of new files, sticky bits, quotas and reserved blocks.
//
// Linux credentials are per thread, so a worker thread can switch its fsuid/fsgid
// (setfsuid/setfsgid) and supplementary groups (raw SYS_setgroups — glibc's setgroups()
// broadcasts to every thread of the process, which we must not do) without affecting the
// others. Once fsuid != 0 the thread loses CAP_DAC_OVERRIDE, CAP_DAC_READ_SEARCH,
// CAP_FOWNER, CAP_CHOWN, CAP_MKNOD ... until fsuid returns to 0, so:
//   * open_by_handle_at() (ExportTable::resolve, FdCache) must run as root, BEFORE the
//     scope is entered;
//   * inside the scope, work relative to the resolved O_PATH fds.
// The vfs operations enter and leave the scope themselves; callers never need to.
//
// Umask: the first time a thread enters a scope it calls unshare(CLONE_FS) and sets its
// own umask to 0, because NFS clients have already applied their umask to the mode they
// send. Other threads of the process keep their umask.
#pragma once

#include <sys/types.h>

#include <cstdint>
#include <utility>
#include <vector>

#include "nfs/vfs/result.h"
#include "transport/rpc/groups.h"

namespace nfsrdmad::vfs {

struct Identity {
    uint32_t uid = 0;
    uint32_t gid = 0;
    rpc::Groups groups;  // supplementary groups

    bool is_root() const { return uid == 0; }
    bool in_group(uint32_t g) const;  // primary or supplementary
    bool operator==(const Identity&) const = default;
};

// Assumes an identity for the current thread until destroyed; then restores the thread's
// previous fsuid/fsgid (root). The supplementary groups stay as the scope set them until
// the next scope needs others (harmless with fsuid 0; identity.cpp says why).
// Not reentrant: entering a scope while one is active on this thread fails with EBUSY.
// Do not create threads inside a scope: a new thread inherits its creator's credentials
// (outside one, a thread made by a worker inherits the groups of its last caller, which
// fsuid 0 makes harmless).
class IdentityScope {
  public:
    // EPERM if the switch did not take (the process lacks CAP_SETUID/CAP_SETGID);
    // in that case nothing was changed.
    static Result<IdentityScope> enter(const Identity& id);

    IdentityScope(IdentityScope&& other) noexcept : active_(std::exchange(other.active_, false)) {}
    IdentityScope& operator=(IdentityScope&&) = delete;
    IdentityScope(const IdentityScope&) = delete;
    IdentityScope& operator=(const IdentityScope&) = delete;
    ~IdentityScope();

  private:
    IdentityScope() : active_(true) {}
    bool active_ = false;
};

// Runs f() (returning some Result<T>) with the thread's credentials set to id.
template <class F>
auto with_identity(const Identity& id, F&& f) -> decltype(f()) {
    auto scope = IdentityScope::enter(id);
    if (!scope) return scope.failure();
    return f();
}

// The thread's current filesystem uid/gid (for tests and assertions).
uid_t current_fsuid();
gid_t current_fsgid();
// Scopes this thread entered that changed its fsuid/fsgid (for tests: a caller who is the
// thread's own identity, root where the export does not squash it, changes nothing).
uint64_t identity_switches_on_this_thread();

}  // namespace nfsrdmad::vfs
