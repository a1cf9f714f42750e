// delegation_breaker.h — what NFSv3 asks before it touches a file an NFSv4.1 client may
// hold a delegation of (RFC 8881 §10.4.1: access by another protocol conflicts as another
// client's does). Implemented by NFSv4.1 (nfs/v4/nfs4_program.h); the daemon wires it.
#pragma once

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
};

}  // namespace nfsrdmad::nfs
