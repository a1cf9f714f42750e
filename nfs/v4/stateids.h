// stateids.h — a stateid argument, as the operations that take one see it (RFC 8881
// §8.2): the special ones told apart (§8.2.3), the current stateid substituted
// (§16.2.3.1.2), and an open stateid turned into its Open (open_state.h).
#pragma once

#include "nfs/v4/open_state.h"
#include "nfs/v4/request.h"

namespace nfsrdmad::nfs::v4 {

inline state::Stateid from_wire(const x4::stateid4& s) {
    return {s.seqid, s.other};
}
inline x4::stateid4 to_wire(const state::Stateid& s) {
    return {s.seqid, s.other};
}

// The stateid the operation acts on: the COMPOUND's current one for the special
// "current" stateid (BAD_STATEID when there is none), BAD_STATEID for the invalid and
// reserved special values. Anonymous and READ-bypass come back as they are.
x4::nfsstat4 effective_stateid(const Compound& c, const x4::stateid4& in, state::Stateid& out);

// An ordinary stateid that must be an open stateid of this session's client for the
// current filehandle's file: the client table's checks (BAD_STATEID, OLD_STATEID,
// EXPIRED ...), then the open itself (BAD_STATEID for another file, §8.2.4).
x4::nfsstat4 find_open(Request& rq, const state::Stateid& sid, const Target& cur, Open& out);
// The same against the current filehandle's bytes, without resolving it (a file
// unlinked since OPEN cannot be opened by handle any more).
x4::nfsstat4 find_open_of(Request& rq, const state::Stateid& sid, const WireHandle& fh, Open& out);
// For READ, WRITE and SETATTR(size) (§8.2.1, §9.1.4): an open stateid as find_open_of,
// or a lock stateid of this client for the file, which stands for the open its lock
// owner came through, or a delegation stateid of this client for the file (its access:
// READ, or BOTH for a write delegation).
x4::nfsstat4 find_io_open_of(Request& rq, const state::Stateid& sid, const WireHandle& fh,
                             Open& out);

}  // namespace nfsrdmad::nfs::v4
