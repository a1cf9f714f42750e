#include "nfs/v4/io_file.h"

#include <cerrno>

#include "nfs/v4/lookup.h"
#include "nfs/v4/stateids.h"

namespace nfsrdmad::nfs::v4 {

x4::nfsstat4 io_file(Compound& c, const x4::stateid4& stateid, bool write,
                     std::shared_ptr<const vfs::OpenFile>& file, Caller& who,
                     vfs::Unlinked* unlinked) {
    Request& rq = *c.rq;
    if (unlinked) *unlinked = vfs::Unlinked::Stale;
    if (!c.current_fh) return x4::NFS4ERR_NOFILEHANDLE;
    state::Stateid sid;
    if (auto st = effective_stateid(c, stateid, sid); st != x4::NFS4_OK) return st;
    const auto special = state::classify(sid);
    if (special == state::Special::None) {
        // An open stateid carries its descriptor: the file is not opened by handle
        // again, so one unlinked since OPEN still works (§9: until the last CLOSE).
        // A lock stateid acts through the open its lock owner came from (§8.2.1).
        Open o;
        if (auto st = find_io_open_of(rq, sid, *c.current_fh, o); st != x4::NFS4_OK) return st;
        if (write && (!(o.access & x4::OPEN4_SHARE_ACCESS_WRITE) || !o.fd->writable))
            return x4::NFS4ERR_OPENMODE;
        who = o.who;
        file = std::move(o.fd);
        if (unlinked) *unlinked = vfs::Unlinked::Allowed;
        return x4::NFS4_OK;
    }
    // A special stateid: delegations to check and the file to open by handle are a worker's.
    if (rq.ctx.nowait) return rq.block();
    Target* cur;
    if (auto st = rq.current(cur); st != x4::NFS4_OK) return st;
    if (cur->pseudo) return x4::NFS4ERR_ISDIR;
    who = cur->who;
    if (write && !who.read_write) return x4::NFS4ERR_ROFS;
    const uint32_t access = write ? x4::OPEN4_SHARE_ACCESS_WRITE : x4::OPEN4_SHARE_ACCESS_READ;
    // §10.4.1: I/O without an open of this client conflicts as another client's would.
    if (rq.delegated(cur->node.handle, write)) return x4::NFS4ERR_DELAY;
    // §8.2.3: the READ bypass stateid passes share reservations for a READ only; "When this
    // value is used in WRITE or SETATTR, it is treated like the anonymous value."
    if ((special == state::Special::Anonymous || write) &&
        rq.svc.opens.check_share(cur->node.handle, access, 0, std::nullopt) != x4::NFS4_OK)
        return x4::NFS4ERR_LOCKED;
    auto f = rq.svc.open_file(cur->node, write ? vfs::OpenFor::Write : vfs::OpenFor::Read);
    // Not a regular file (the cache opens no other): §18.22.3 / §18.32.4 name the error by
    // type. Only this failure pays for the type check.
    if (!f) return f.error() == EINVAL ? must_be_file(*cur) : to_nfsstat4(f.error());
    file = std::move(*f);
    return x4::NFS4_OK;
}

}  // namespace nfsrdmad::nfs::v4
