// REMOVE (RFC 8881 §18.25): a file, or an empty directory (NOTEMPTY otherwise), in
// the current directory. A removed file still open (an open stateid holds its
// descriptor) stays readable and writable through that stateid.
#include <sys/stat.h>

#include "nfs/v4/attrs/change.h"
#include "nfs/v4/lookup.h"
#include "nfs/v4/names.h"
#include "nfs/v4/ops.h"
#include "nfs/v4/request.h"
#include "nfs/vfs/dirops.h"
#include "nfs/vfs/lookup.h"

namespace nfsrdmad::nfs::v4 {

OpResult op_remove(Compound& c, xdr::Decoder& args, xdr::Encoder& res) {
    Request& rq = *c.rq;
    x4::REMOVE4args a;
    if (!rq.decode(args, a)) return OpResult::bad_xdr();
    auto fail = [&](x4::nfsstat4 st) {
        encode_status_only(res, st);
        return OpResult{st};
    };
    Target* dir;
    if (auto st = rq.current_for_change(dir); st != x4::NFS4_OK) return fail(st);
    if (auto st = must_be_dir(*dir); st != x4::NFS4_OK) return fail(st);
    std::string_view name;
    if (auto st = check_name(a.target, name); st != x4::NFS4_OK) return fail(st);
    if (dir->pseudo || !dir->who.read_write) return fail(x4::NFS4ERR_ROFS);
    // §8.4.2.1: a returning client may be about to reclaim an open of it.
    if (auto st = rq.svc.recovery.may_change(); st != x4::NFS4_OK) return fail(st);
    // What the name is, looked at as root (vfs::peek): the removal itself runs as the
    // caller, so a name the caller may not see or remove fails there with the caller's
    // error (ACCESS, NOENT), as it would have failed a lookup.
    auto victim = vfs::peek(dir->node, name);
    if (!victim && victim.error() == EXDEV) return fail(to_nfsstat4(EXDEV));
    const bool file = victim && S_ISREG(victim->mode);
    // §10.4.1: another client's delegation of the file is recalled first.
    if (file && rq.delegated(victim->handle, true)) return fail(x4::NFS4ERR_DELAY);
    vfs::DirChange change;
    auto r = victim && S_ISDIR(victim->mode) ? vfs::rmdir(dir->node, name, dir->who.id, &change)
                                             : vfs::remove(dir->node, name, dir->who.id, &change);
    if (!r) return fail(to_nfsstat4(r.error()));
    // Its cached descriptor would keep the blocks allocated (opens hold their own).
    if (file) rq.svc.files.forget(victim->handle);
    x4::REMOVE4res out(x4::NFS4_OK);
    out.resok4().cinfo = change_info_of(change);
    x4::xdr_encode(res, out);
    return {};
}

}  // namespace nfsrdmad::nfs::v4
