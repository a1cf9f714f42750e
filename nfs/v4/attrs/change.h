// change.h — the change attribute (RFC 8881 §5.8.1.4) of an object as the back end
// sees it: its ctime in nanoseconds. Every change to data or attributes moves ctime
// (and rename moves the directories'), so GETATTR, change_info4 (CREATE, REMOVE,
// RENAME, LINK, OPEN) and the client's cache validation all agree on one value.
// Two changes within one ctime tick look like one: change_info4's `atomic` is false.
#pragma once

#include <sys/stat.h>

#include <cstdint>

namespace nfsrdmad::nfs::v4 {

inline uint64_t change_of(const struct statx& st) {
    return static_cast<uint64_t>(st.stx_ctime.tv_sec) * 1000000000u + st.stx_ctime.tv_nsec;
}

}  // namespace nfsrdmad::nfs::v4
