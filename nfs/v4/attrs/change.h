// change.h — the change attribute (RFC 8881 §5.8.1.4) of an object as the back end
// sees it: its ctime in nanoseconds. Every change to data or attributes moves ctime
// (and rename moves the directories'), so GETATTR, change_info4 (CREATE, REMOVE,
// RENAME, LINK, OPEN) and the client's cache validation all agree on one value.
// Two changes within one ctime tick look like one.
#pragma once

#include <sys/stat.h>

#include <cstdint>

#include "nfs/vfs/dir_change.h"
#include "xdr/nfs4_prot.h"

namespace nfsrdmad::nfs::v4 {

inline uint64_t change_of(const struct statx& st) {
    return static_cast<uint64_t>(st.stx_ctime.tv_sec) * 1000000000u + st.stx_ctime.tv_nsec;
}

// change_info4 (RFC 8881 §3.3.8) of a directory the back end changed: `atomic` when
// both readings were taken under the directory's change lock around this change alone
// (vfs/dir_change.h); the Linux client then keeps its caches of the directory. (A
// reading that failed leaves zero and `atomic` false: the client revalidates.)
inline xdr::nfs4::change_info4 change_info_of(const vfs::DirChange& c) {
    return {c.atomic, change_of(c.before), change_of(c.after)};
}

}  // namespace nfsrdmad::nfs::v4
