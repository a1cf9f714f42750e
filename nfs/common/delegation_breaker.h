// delegation_breaker.h — what NFSv3 asks before it touches a file an NFSv4.1 client may
// hold a delegation of (RFC 8881 §10.4.1: access by another protocol conflicts as another
// client's does). Implemented by NFSv4.1 (nfs/v4/nfs4_program.h); the daemon wires it.
#pragma once

#include <cstdint>
#include <optional>

#include "nfs/vfs/handle.h"

namespace nfsrdmad::nfs {

class DelegationBreaker {
  public:
    virtual ~DelegationBreaker() = default;
    // Whether any delegation is held at all (cheap: callers skip extra lookups otherwise).
    virtual bool any() const = 0;
    // An access that reads (write false) or changes `file`: true when a delegation stands in
    // the way; its recall is then under way, and the caller answers "try later"
    // (NFS3ERR_JUKEBOX).
    virtual bool conflict(const vfs::FileHandle& file, bool write) = 0;
    // Whether an NFSv4.1 client holds a write delegation of `file`: its size and times
    // here may be behind the holder's, so attributes sent in passing (LOOKUP, ACCESS,
    // READDIRPLUS) are left out. Recalls nothing.
    virtual bool write_delegated(const vfs::FileHandle& file) const = 0;
    // GETATTR of `file` (RFC 8881 §10.4.3): a write delegation's holder is asked for its
    // size (CB_GETATTR) rather than recalled. `delay`: the answer is not in yet
    // (NFS3ERR_JUKEBOX). `size`: the holder's size, to report instead of the file's (whose
    // times were set to now). Neither: the file's attributes are right.
    struct HeldAttrs {
        bool delay = false;
        std::optional<uint64_t> size;
    };
    virtual HeldAttrs held_attrs(const vfs::FileHandle& file) = 0;
};

}  // namespace nfsrdmad::nfs
