// ofd_lock.h — tests acting as a local process on the server: a write-lock request on
// [start, start + len) for fcntl(2)'s open file description lock commands (F_OFD_GETLK:
// who is in the way; F_OFD_SETLK: take it), as the daemon's lock mirror sees them.
#pragma once

#include <fcntl.h>

namespace nfsrdmad::test_os {

inline struct flock write_lock_range(off_t start, off_t len) {
    struct flock fl {};
    fl.l_type = F_WRLCK;
    fl.l_whence = SEEK_SET;
    fl.l_start = start;
    fl.l_len = len;
    return fl;
}

}  // namespace nfsrdmad::test_os
