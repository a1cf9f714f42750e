// CREATE (RFC 8881 §18.4): directories, symlinks, devices, sockets and FIFOs (regular
// files are OPEN's: NF4REG is NFS4ERR_BADTYPE). createattrs go with the new object
// (attrset says which); the current filehandle becomes it. Pseudo directories and
// read-only exports: ROFS.
#include <sys/stat.h>
#include <sys/sysmacros.h>

#include "nfs/v4/attrs/change.h"
#include "nfs/v4/attrs/set_attrs.h"
#include "nfs/v4/lookup.h"
#include "nfs/v4/names.h"
#include "nfs/v4/ops.h"
#include "nfs/v4/request.h"
#include "nfs/vfs/attrs.h"
#include "nfs/vfs/create.h"

namespace nfsrdmad::nfs::v4 {

OpResult op_create(Compound& c, xdr::Decoder& args, xdr::Encoder& res) {
    Request& rq = *c.rq;
    x4::CREATE4args a;
    if (!rq.decode(args, a)) return OpResult::bad_xdr();
    auto fail = [&](x4::nfsstat4 st) {
        encode_status_only(res, st);
        return OpResult{st};
    };
    Target* dir;
    if (auto st = rq.current_for_change(dir); st != x4::NFS4_OK) return fail(st);
    if (auto st = must_be_dir(*dir); st != x4::NFS4_OK) return fail(st);
    std::string_view name;
    if (auto st = check_name(a.objname, name); st != x4::NFS4_OK) return fail(st);
    const x4::nfs_ftype4 type = a.objtype.type();
    if (type == x4::NF4REG || type == x4::NF4ATTRDIR || type == x4::NF4NAMEDATTR)
        return fail(x4::NFS4ERR_BADTYPE);
    if (dir->pseudo || !dir->who.read_write) return fail(x4::NFS4ERR_ROFS);
    vfs::SetAttrs attrs;
    AttrMask set;
    if (auto st = decode_set_attrs(a.createattrs, rq.svc.ids, attrs, set); st != x4::NFS4_OK)
        return fail(st);
    vfs::DirChange change;
    const vfs::Identity& id = dir->who.id;
    vfs::Result<vfs::Entry> e = vfs::fail(EINVAL);
    switch (type) {
        case x4::NF4DIR:
            e = vfs::mkdir(dir->node, name, attrs.mode.value_or(0755), id, &change);
            break;
        case x4::NF4LNK: {
            auto l = a.objtype.linkdata();
            if (l.empty()) return fail(x4::NFS4ERR_INVAL);
            e = vfs::symlink(dir->node, name, {reinterpret_cast<const char*>(l.data()), l.size()},
                             attrs.mode.value_or(0777), id, &change);
            break;
        }
        case x4::NF4BLK:
        case x4::NF4CHR: {
            const auto& d = a.objtype.devdata();
            e = vfs::mknod(
                dir->node, name,
                type == x4::NF4BLK ? vfs::SpecialType::BlockDevice : vfs::SpecialType::CharDevice,
                attrs.mode.value_or(0644), makedev(d.specdata1, d.specdata2), id, &change);
            break;
        }
        case x4::NF4SOCK:
        case x4::NF4FIFO:
            e = vfs::mknod(dir->node, name,
                           type == x4::NF4SOCK ? vfs::SpecialType::Socket : vfs::SpecialType::Fifo,
                           attrs.mode.value_or(0644), 0, id, &change);
            break;
        default:
            return fail(x4::NFS4ERR_BADTYPE);
    }
    if (!e) return fail(to_nfsstat4(e.error()));
    // The mode went with the create; the rest now (a symlink's mode cannot change).
    vfs::SetAttrs rest = attrs;
    rest.mode.reset();
    if (rest.size || rest.uid || rest.gid || rest.atime.how != vfs::TimeChange::Keep ||
        rest.mtime.how != vfs::TimeChange::Keep)
        if (auto r = vfs::setattr(e->node, rest, id); !r) return fail(to_nfsstat4(r.error()));
    x4::CREATE4res r(x4::NFS4_OK);
    r.resok4().cinfo = change_info_of(change);
    r.resok4().attrset = set.to_wire();
    x4::xdr_encode(res, r);
    Target t;
    t.node = std::move(e->node);
    t.who = dir->who;
    rq.set_current(std::move(t));
    return {};
}

}  // namespace nfsrdmad::nfs::v4
