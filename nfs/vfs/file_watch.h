// file_watch.h — what a local process on the server does to a file that a file lease
// (lease.h) does not see: a chmod, chown or utimes, a link made or removed, a rename
// (fanotify(7), one group with FAN_REPORT_FID and a mark on each watched inode:
// FAN_ATTRIB, FAN_MOVE_SELF, and FAN_MODIFY where asked).
//
// The kernel nfsd recalls its delegations before such a change (break_deleg() in
// notify_change, vfs_link, vfs_unlink, vfs_rename; RFC 8881 §10.4.1: access by another
// party), but a userspace lease is not a delegation and is not broken by any of them.
// Here the change is reported after the fact: the holder's recall follows it within
// milliseconds, not before it.
//
// Changes made by this daemon's own threads are not reported (the event's pid is the
// process's; an unprivileged group reports 0 for every other process): an NFS client's SETATTR,
// LINK, RENAME or REMOVE checks the delegations in its way itself before it acts, and a holder's
// own change must not recall its delegation.
//
// A file is watched while any Mark of it lives (counted per inode: the kernel keeps one
// mark per inode and group). Marks pin their inode, so a Mark holds the file's
// descriptor it was made from and is let go with the delegation it belongs to.
//
// A queue overflow (FAN_Q_OVERFLOW: events were lost) reports every watched file.
//
// Owner: the daemon (start(), stop() before the workers the callback hands to go);
// Services holds it (Options::watch) and each Delegation its Mark. Thread-safe: one
// reader thread, and one mutex nobody holds across a callback.
#pragma once

#include <functional>
#include <memory>
#include <string>
#include <thread>

#include "nfs/vfs/fd_cache.h"
#include "nfs/vfs/handle.h"
#include "nfs/vfs/result.h"
#include "nfs/vfs/unique_fd.h"

namespace nfsrdmad::vfs {

class FileWatch {
  public:
    // Called on the watch's thread, once per changed file and wire handle it was added
    // under; it must not block (hand the work to a worker).
    using Changed = std::function<void(const FileHandle&)>;
    class Mark;

    // The fanotify group and its reader thread. Without CAP_SYS_ADMIN the group is an
    // unprivileged one (Linux 5.13): inode marks and file handles are all it needs, and
    // the pid it reports is this process's own or 0, which is all the filter asks.
    // EPERM: neither (an older kernel, no CAP_SYS_ADMIN); EINVAL: no FAN_REPORT_FID (< 5.1);
    // EMFILE: fs.fanotify.max_user_groups reached.
    static Result<std::shared_ptr<FileWatch>> start(Changed changed);
    ~FileWatch();
    FileWatch(const FileWatch&) = delete;
    FileWatch& operator=(const FileWatch&) = delete;

    // Watches the file `f` is open on, until the Mark goes. `writes`: a write and a
    // utimes that sets the modification time alone (FAN_MODIFY: fsnotify reports those
    // as a modification, not an attribute change) are reported too; not for a file this
    // daemon writes to itself (a write delegation's), where each of its own writes would
    // wake the thread for nothing. ENODEV/EXDEV: its file system has no fsid or file
    // handles; ENOSPC: fs.fanotify.max_user_marks reached.
    Result<std::shared_ptr<Mark>> watch(std::shared_ptr<const OpenFile> f, bool writes);
    // Stops the thread: no callback runs after it returns. Marks may outlive it.
    void stop();
    size_t watched() const;  // inodes

    struct Core;

  private:
    explicit FileWatch(std::shared_ptr<Core> core);
    void run();
    std::shared_ptr<Core> core_;
    std::thread thread_;
};

class FileWatch::Mark {
  public:
    Mark(std::shared_ptr<Core> core, std::string key, std::shared_ptr<const OpenFile> f)
        : core_(std::move(core)), key_(std::move(key)), file_(std::move(f)) {}
    ~Mark();
    Mark(const Mark&) = delete;
    Mark& operator=(const Mark&) = delete;

  private:
    std::shared_ptr<Core> core_;
    std::string key_;  // fsid and kernel handle, as an event names the inode
    std::shared_ptr<const OpenFile> file_;
};

}  // namespace nfsrdmad::vfs
