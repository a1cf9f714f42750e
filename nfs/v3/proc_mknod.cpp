// NFSPROC3_MKNOD (RFC 1813 §3.3.11): fifos, sockets, character and block devices.
#include <sys/sysmacros.h>

#include "nfs/v3/creation.h"
#include "nfs/vfs/create.h"

namespace nfsrdmad::nfs::v3 {

rpc::Outcome proc_mknod(Request& rq) {
    x::MKNOD3args a;
    if (!rq.decode(a)) return rpc::Outcome::garbage();
    const auto& what = a.what;
    vfs::SpecialType type;
    const x::sattr3* attrs = nullptr;
    dev_t rdev = 0;
    switch (what.type()) {
        case x::NF3FIFO:
            type = vfs::SpecialType::Fifo;
            attrs = &what.pipe_attributes();
            break;
        case x::NF3SOCK:
            type = vfs::SpecialType::Socket;
            attrs = &what.pipe_attributes();
            break;
        case x::NF3CHR:
        case x::NF3BLK:
            type = what.type() == x::NF3CHR ? vfs::SpecialType::CharDevice
                                            : vfs::SpecialType::BlockDevice;
            attrs = &what.device().dev_attributes;
            rdev = makedev(what.device().spec.specdata1, what.device().spec.specdata2);
            break;
        default: {
            // Regular files, directories and symlinks have their own procedures.
            x::MKNOD3res res;
            res.set_status(x::NFS3ERR_BADTYPE);
            Target dir;
            if (rq.resolve(a.where.dir, dir) == x::NFS3_OK) {
                auto w = wcc(pre_op(dir.node), dir.node);
                res.resfail().dir_wcc = w;
            }
            return rq.reply(res);
        }
    }
    uint32_t mode = attrs->mode.set_it() ? (attrs->mode.mode() & 07777) : 0644;
    return create_object(rq, a.where, attrs, [&](Target& dir, vfs::DirChange* c) {
        return vfs::mknod(dir.node, a.where.name, type, mode, rdev, dir.who.id, c);
    });
}

}  // namespace nfsrdmad::nfs::v3
