#include "nfs/v3/attrs.h"

#include <sys/sysmacros.h>

#include <cerrno>

namespace nfsrdmad::nfs::v3 {

namespace {

x::ftype3 ftype(uint16_t mode) {
    switch (mode & S_IFMT) {
        case S_IFDIR: return x::NF3DIR;
        case S_IFBLK: return x::NF3BLK;
        case S_IFCHR: return x::NF3CHR;
        case S_IFLNK: return x::NF3LNK;
        case S_IFSOCK: return x::NF3SOCK;
        case S_IFIFO: return x::NF3FIFO;
        default: return x::NF3REG;
    }
}

x::nfstime3 time3(const statx_timestamp& t) { return {uint32_t(t.tv_sec), t.tv_nsec}; }

}  // namespace

x::fattr3 to_fattr3(const struct statx& st, uint32_t fsid) {
    x::fattr3 a;
    a.type = ftype(st.stx_mode);
    a.mode = st.stx_mode & 07777;
    a.nlink = st.stx_nlink;
    a.uid = st.stx_uid;
    a.gid = st.stx_gid;
    a.size = st.stx_size;
    a.used = st.stx_blocks * 512;
    a.rdev = {st.stx_rdev_major, st.stx_rdev_minor};
    a.fsid = fsid;  // the export's, so clients see each export as its own filesystem
    a.fileid = st.stx_ino;
    a.atime = time3(st.stx_atime);
    a.mtime = time3(st.stx_mtime);
    a.ctime = time3(st.stx_ctime);
    return a;
}

int stat_node(const vfs::Node& node, struct statx& st) {
    if (statx(node.fd.get(), "", AT_EMPTY_PATH | AT_SYMLINK_NOFOLLOW, STATX_BASIC_STATS, &st) != 0)
        return errno;
    return 0;
}

x::post_op_attr post_op(const struct statx& st, uint32_t fsid) {
    x::post_op_attr p;
    p.set_attributes_follow(true).attributes() = to_fattr3(st, fsid);
    return p;
}

x::post_op_attr post_op(const vfs::Node& node) {
    struct statx st;
    if (stat_node(node, st) != 0) return {};
    return post_op(st, node.fsid());
}

x::pre_op_attr pre_op(const struct statx& st) {
    x::pre_op_attr p;
    p.set_attributes_follow(true).attributes() = {st.stx_size, time3(st.stx_mtime),
                                                  time3(st.stx_ctime)};
    return p;
}

x::pre_op_attr pre_op(const vfs::Node& node) {
    struct statx st;
    if (stat_node(node, st) != 0) return {};
    return pre_op(st);
}

x::wcc_data wcc(const x::pre_op_attr& before, const vfs::Node& node) {
    return {before, post_op(node)};
}

x::wcc_data wcc(const vfs::DirChange& c, const x::pre_op_attr& before, const vfs::Node& node) {
    if (!c.atomic) return wcc(before, node);
    return {pre_op(c.before), post_op(c.after, node.fsid())};
}

x::post_op_fh3 post_op_fh(const vfs::Node& node) {
    x::post_op_fh3 fh;
    fh.set_handle_follows(true).handle().data = node.handle.data();
    return fh;
}

x::nfsstat3 to_nfsstat3(int err) {
    switch (err) {
        case 0: return x::NFS3_OK;
        case EPERM: return x::NFS3ERR_PERM;
        case ENOENT: return x::NFS3ERR_NOENT;
        case ENXIO: return x::NFS3ERR_NXIO;
        case EACCES: return x::NFS3ERR_ACCES;
        case EEXIST: return x::NFS3ERR_EXIST;
        case EXDEV: return x::NFS3ERR_XDEV;
        case ENODEV: return x::NFS3ERR_NODEV;
        case ENOTDIR: return x::NFS3ERR_NOTDIR;
        case EISDIR: return x::NFS3ERR_ISDIR;
        case EINVAL: return x::NFS3ERR_INVAL;
        case EFBIG: return x::NFS3ERR_FBIG;
        case ENOSPC: return x::NFS3ERR_NOSPC;
        case EROFS: return x::NFS3ERR_ROFS;
        case EMLINK: return x::NFS3ERR_MLINK;
        case ENAMETOOLONG: return x::NFS3ERR_NAMETOOLONG;
        case ENOTEMPTY: return x::NFS3ERR_NOTEMPTY;
        case EDQUOT: return x::NFS3ERR_DQUOT;
        case ESTALE: return x::NFS3ERR_STALE;
        case ELOOP: return x::NFS3ERR_ACCES;  // a symlink where a real object was needed
        case EOPNOTSUPP: return x::NFS3ERR_NOTSUPP;
        case EAGAIN: return x::NFS3ERR_JUKEBOX;
        // Out of descriptors after the caches gave back what they could (fd_pressure.h):
        // a shortage the client should wait out, RFC 1813 §2.6 NFS3ERR_JUKEBOX ("not able
        // to complete it in a timely fashion"), never NFS3ERR_IO.
        case EMFILE: return x::NFS3ERR_JUKEBOX;
        case ENFILE: return x::NFS3ERR_JUKEBOX;
        // The kernel short of memory for the call (open_by_handle_at(2) can say so): the
        // same kind of shortage; the kernel nfsd answers -ENOMEM with JUKEBOX too.
        case ENOMEM:
            return x::NFS3ERR_JUKEBOX;
        case vfs::kBadHandle: return x::NFS3ERR_BADHANDLE;
        default: return x::NFS3ERR_IO;
    }
}

}  // namespace nfsrdmad::nfs::v3
