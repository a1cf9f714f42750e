// io_file.h — the open file a READ, WRITE or SETATTR(size) acts through, from its
// stateid (RFC 8881 §8.2, §9.1.4): an open stateid's own descriptor, or a lock
// stateid's through the open its owner came from (either must allow
// writing for WRITE: NFS4ERR_OPENMODE), or for the anonymous and READ-bypass special
// stateids a descriptor from the cache, checked against share reservations (a DENY
// held by an open is NFS4ERR_LOCKED, §9.1.4; the READ-bypass one skips that check for a
// READ only, §8.2.3) and the export's rules.
#pragma once

#include <memory>

#include "nfs/v4/request.h"
#include "nfs/vfs/fd_cache.h"
#include "nfs/vfs/io.h"

namespace nfsrdmad::nfs::v4 {

// `unlinked`: Allowed when the file came through an open stateid.
x4::nfsstat4 io_file(Compound& c, const x4::stateid4& stateid, bool write,
                     std::shared_ptr<const vfs::OpenFile>& file, Caller& who,
                     vfs::Unlinked* unlinked = nullptr);

}  // namespace nfsrdmad::nfs::v4
