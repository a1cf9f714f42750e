#include "nfs/vfs/identity.h"

#include <sched.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <cstdlib>
#include <span>

#include "transport/rpc/thread_credentials.h"

namespace nfsrdmad::vfs {
namespace {

// What one thread's credentials are, so that entering and leaving a scope costs as few
// system calls as it can (each is a prepare_creds/commit_creds in the kernel: 3-4 µs in
// the VM bench's guest, issue 13):
//   * the thread's own fsuid/fsgid outside a scope are read once, not on every entry;
//   * setfsuid(2)/setfsgid(2) report no failure, so the ids are read back after a switch,
//     but only the first time this thread assumes a given uid/gid pair: whether a switch
//     takes depends on the process's CAP_SETUID/CAP_SETGID and on the id being mapped in
//     its user namespace, neither of which changes while it serves. Leaving the scope
//     checks again for free (setfsuid returns the id it replaces) and aborts if the
//     operation did not run as the caller;
//   * a caller who is who the thread already is outside a scope (root, where the export
//     does not squash it) costs no setfsuid/setfsgid at all, entering or leaving;
//   * supplementary groups are not put back on leaving: outside a scope the thread's
//     fsuid is 0 and its fs capabilities override every group check, and new files take
//     their group from fsgid, which is restored. The next scope sets groups only when
//     they differ from what the thread has, so a run of calls from one user sets them once.
struct ThreadCreds {
    bool prepared = false;  // unshare(CLONE_FS) + umask(0) done
    bool in_scope = false;
    bool switched = false;  // the scope changed fsuid/fsgid (restored on leaving)
    uint64_t switches = 0;  // scopes that did, on this thread
    uid_t base_fsuid = 0;  // outside a scope
    gid_t base_fsgid = 0;
    std::vector<gid_t> groups;  // what the thread has now
    bool verified = false;      // a switch to (verified_uid, verified_gid) was read back
    uid_t verified_uid = 0;
    gid_t verified_gid = 0;
    uid_t scope_uid = 0;  // the uid the current scope assumed
};

thread_local ThreadCreds t_creds;

// The raw syscalls: per-thread, unlike glibc's setgroups() which uses the setxid
// broadcast to change every thread.
// Each may give the thread a new struct cred (rpc/thread_credentials.h); setfsuid(-1) and
// setfsgid(-1), which read the ids, never do.
long sys_setfsuid(uid_t uid) {
    if (uid != static_cast<uid_t>(-1)) rpc::note_credentials_changing();
    return ::syscall(SYS_setfsuid, uid);
}
long sys_setfsgid(gid_t gid) {
    if (gid != static_cast<gid_t>(-1)) rpc::note_credentials_changing();
    return ::syscall(SYS_setfsgid, gid);
}
long sys_setgroups(std::span<const gid_t> groups) {
    rpc::note_credentials_changing();
    return ::syscall(SYS_setgroups, groups.size(), groups.data());
}

// setfsuid(-1) always fails and returns the current value: the documented way to read it.
uid_t read_fsuid() {
    return static_cast<uid_t>(sys_setfsuid(static_cast<uid_t>(-1)));
}
gid_t read_fsgid() {
    return static_cast<gid_t>(sys_setfsgid(static_cast<gid_t>(-1)));
}

Result<void> prepare_thread(ThreadCreds& c) {
    if (c.prepared) return {};
    if (::unshare(CLONE_FS) != 0) return fail(errno);
    ::umask(0);
    int n = ::getgroups(0, nullptr);
    if (n < 0) return fail(errno);
    c.groups.resize(static_cast<size_t>(n));
    n = ::getgroups(n, c.groups.data());
    if (n < 0) return fail(errno);
    c.groups.resize(static_cast<size_t>(n));
    c.base_fsuid = read_fsuid();
    c.base_fsgid = read_fsgid();
    c.prepared = true;
    return {};
}

// Back to the thread's own fsuid (first: regains the fs capabilities) and fsgid; returns
// the fsuid the scope ran with.
uid_t restore(ThreadCreds& c) {
    const auto was = static_cast<uid_t>(sys_setfsuid(c.base_fsuid));
    sys_setfsgid(c.base_fsgid);
    c.in_scope = false;
    return was;
}

}  // namespace

bool Identity::in_group(uint32_t g) const {
    return gid == g || std::find(groups.begin(), groups.end(), g) != groups.end();
}

Result<IdentityScope> IdentityScope::enter(const Identity& id) {
    ThreadCreds& c = t_creds;
    if (c.in_scope) return fail(EBUSY);
    if (auto r = prepare_thread(c); !r) return r.failure();
    c.in_scope = true;

    if (!std::equal(c.groups.begin(), c.groups.end(), id.groups.begin(), id.groups.end())) {
        static_assert(sizeof(gid_t) == sizeof(uint32_t));
        const std::span<const gid_t> groups(id.groups.data(), id.groups.size());
        if (sys_setgroups(groups) != 0) {
            int e = errno;
            restore(c);
            return fail(e);
        }
        c.groups.assign(groups.begin(), groups.end());
    }
    c.scope_uid = id.uid;
    c.switched = id.uid != c.base_fsuid || id.gid != c.base_fsgid;
    if (!c.switched) return IdentityScope();
    ++c.switches;
    sys_setfsgid(id.gid);
    sys_setfsuid(id.uid);  // last: drops the fs capabilities when uid != 0
    if (!c.verified || c.verified_uid != id.uid || c.verified_gid != id.gid) {
        if (read_fsuid() != id.uid || read_fsgid() != id.gid) {
            restore(c);
            return fail(EPERM);
        }
        c.verified = true;
        c.verified_uid = id.uid;
        c.verified_gid = id.gid;
    }
    return IdentityScope();
}

IdentityScope::~IdentityScope() {
    if (!active_) return;
    ThreadCreds& c = t_creds;
    if (!c.switched) {
        c.in_scope = false;
        return;
    }
    // The switch was not read back on entry (verified before): it must have held. If it
    // did not, an operation ran with the wrong credentials; nothing can make that right.
    if (restore(c) != c.scope_uid) std::abort();
}

uint64_t identity_switches_on_this_thread() {
    return t_creds.switches;
}

uid_t current_fsuid() {
    return read_fsuid();
}
gid_t current_fsgid() {
    return read_fsgid();
}

}  // namespace nfsrdmad::vfs
