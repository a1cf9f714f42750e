// dir_change.h — a directory's attributes on either side of one change of its entries.
//
// Every change of a directory's entries made through vfs (create, mkdir, symlink, mknod,
// remove, rmdir, rename, link), and every setattr of a directory, runs under that
// directory's change lock: one of a fixed table of 256 mutexes, striped by handle (two for
// a rename between directories, taken in table order). The lock covers the system call
// that changes the directory and, for a caller that asks with a DirChange, a statx of the
// directory just before and just after it; not the commit to stable storage that follows
// (durability.h), so creates in one directory still share their journal commits.
//
// What that buys: the two readings bracket this change and no other change made through
// this server, NFSv3 or NFSv4.1, from any client. That is what NFSv4.1's
// change_info4.atomic asserts (RFC 8881 §3.3.8; CREATE, LINK, OPEN, REMOVE and RENAME
// answer with it), and what the Linux client needs to keep its caches of the directory:
// on a change_info4 that is not atomic it drops the directory's access and lookup caches
// and asks again (an ACCESS and LOOKUPs more per create or remove). NFSv3's wcc_data
// (RFC 1813 §2.6) takes its pre- and post-op attributes from the same readings.
//
// Not covered: a local process on the server changing the same directory between the
// two readings (a window of one system call). Like two changes within one ctime tick
// (attrs/change.h in nfs/v4), such a change reaches clients only with the directory's
// next change.
#pragma once

#include <sys/stat.h>

#include <cerrno>

#include "nfs/vfs/node.h"

namespace nfsrdmad::vfs {

struct DirChange {
    struct statx before {};
    struct statx after {};
    bool atomic = false;  // both read, under the lock, around the change
};

namespace detail {

class DirLock {
  public:
    explicit DirLock(const Node& dir);
    DirLock(const Node& a, const Node& b);  // a rename: both, in table order
    ~DirLock();
    DirLock(const DirLock&) = delete;
    DirLock& operator=(const DirLock&) = delete;

  private:
    unsigned first_, second_;  // second_ == first_: one stripe
};

// statx of dir into *out (false when it fails).
bool read_dir_attrs(const Node& dir, struct statx* out);

}  // namespace detail

// Runs `change` (which changes dir's entries and returns a Result) under dir's lock;
// with `c`, reads dir's attributes just before and after it. A directory that reads as
// removed (no links) is not changed: ESTALE (RFC 1813 §2.6, RFC 8881 §15.1.2.7), which
// the caller need not have checked before (Request::resolve_for_change in nfs/v3,
// Request::current_for_change in nfs/v4).
template <class F>
auto change_directory(const Node& dir, DirChange* c, F&& change) {
    detail::DirLock lock(dir);
    const bool before = c && detail::read_dir_attrs(dir, &c->before);
    if (before && c->before.stx_nlink == 0) return decltype(change())(fail(ESTALE));
    auto r = change();
    if (c) c->atomic = before && detail::read_dir_attrs(dir, &c->after);
    return r;
}

// The same for a rename from `a` to `b` (the same directory or two).
template <class F>
auto change_directories(const Node& a, DirChange* ca, const Node& b, DirChange* cb, F&& change) {
    detail::DirLock lock(a, b);
    const bool before_a = ca && detail::read_dir_attrs(a, &ca->before);
    const bool before_b = cb && detail::read_dir_attrs(b, &cb->before);
    if ((before_a && ca->before.stx_nlink == 0) || (before_b && cb->before.stx_nlink == 0))
        return decltype(change())(fail(ESTALE));
    auto r = change();
    if (ca) ca->atomic = before_a && detail::read_dir_attrs(a, &ca->after);
    if (cb) cb->atomic = before_b && detail::read_dir_attrs(b, &cb->after);
    return r;
}

}  // namespace nfsrdmad::vfs
