#include "nfs/vfs/identity.h"

#include <sched.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>

namespace nfsrdmad::vfs {
namespace {

struct ThreadCreds {
    bool prepared = false;  // unshare(CLONE_FS) + umask(0) done
    bool in_scope = false;
    uid_t saved_fsuid = 0;
    gid_t saved_fsgid = 0;
    std::vector<gid_t> saved_groups;
};

thread_local ThreadCreds t_creds;

// The raw syscalls: per-thread, unlike glibc's setgroups() which uses the setxid
// broadcast to change every thread.
long sys_setfsuid(uid_t uid) {
    return ::syscall(SYS_setfsuid, uid);
}
long sys_setfsgid(gid_t gid) {
    return ::syscall(SYS_setfsgid, gid);
}
long sys_setgroups(const std::vector<gid_t>& groups) {
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
    c.saved_groups.resize(static_cast<size_t>(n));
    n = ::getgroups(n, c.saved_groups.data());
    if (n < 0) return fail(errno);
    c.saved_groups.resize(static_cast<size_t>(n));
    c.prepared = true;
    return {};
}

void restore(ThreadCreds& c) {
    sys_setfsuid(c.saved_fsuid);  // first: regains the fs capabilities
    sys_setfsgid(c.saved_fsgid);
    sys_setgroups(c.saved_groups);
    c.in_scope = false;
}

}  // namespace

bool Identity::in_group(uint32_t g) const {
    return gid == g || std::find(groups.begin(), groups.end(), g) != groups.end();
}

Result<IdentityScope> IdentityScope::enter(const Identity& id) {
    ThreadCreds& c = t_creds;
    if (c.in_scope) return fail(EBUSY);
    if (auto r = prepare_thread(c); !r) return r.failure();

    c.saved_fsuid = read_fsuid();
    c.saved_fsgid = read_fsgid();
    c.in_scope = true;

    const std::vector<gid_t> groups(id.groups.begin(), id.groups.end());
    if (sys_setgroups(groups) != 0) {
        int e = errno;
        restore(c);
        return fail(e);
    }
    sys_setfsgid(id.gid);
    sys_setfsuid(id.uid);  // last: drops the fs capabilities when uid != 0
    if (read_fsuid() != id.uid || read_fsgid() != id.gid) {
        restore(c);
        return fail(EPERM);
    }
    return IdentityScope();
}

IdentityScope::~IdentityScope() {
    if (active_) restore(t_creds);
}

uid_t current_fsuid() {
    return read_fsuid();
}
gid_t current_fsgid() {
    return read_fsgid();
}

}  // namespace nfsrdmad::vfs
