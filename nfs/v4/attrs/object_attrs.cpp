#include "nfs/v4/attrs/object_attrs.h"

#include <sys/stat.h>

#include <algorithm>
#include <charconv>
#include <chrono>
#include <string>
#include <vector>

#include "nfs/v4/attrs/change.h"
#include "nfs/v4/attrs/fattr.h"
#include "nfs/vfs/attrs.h"
#include "nfs/vfs/export.h"

namespace nfsrdmad::nfs::v4 {

namespace {

// When this daemon started: the times and change attribute of pseudo directories.
const struct statx_timestamp& start_time() {
    static const struct statx_timestamp t = [] {
        auto ns = std::chrono::duration_cast<std::chrono::nanoseconds>(
                      std::chrono::system_clock::now().time_since_epoch())
                      .count();
        struct statx_timestamp s {};
        s.tv_sec = ns / 1000000000;
        s.tv_nsec = static_cast<uint32_t>(ns % 1000000000);
        return s;
    }();
    return t;
}

bool numeric_ids(const Request& rq) {
    uint32_t f = rq.cred().flavor;
    return f == vfs::kAuthSys || f == vfs::kAuthNone;
}

// An owner or owner_group as sent (§5.9): the id in decimal where the client sends
// numbers (AUTH_SYS, AUTH_NONE), else the mapped name. The text stays here: `view`.
struct IdText {
    char digits[16];
    std::string name;
    std::string_view view;
};

void id_text(const Request& rq, uint32_t id, bool group, IdText& out) {
    if (numeric_ids(rq)) {
        const auto r = std::to_chars(out.digits, out.digits + sizeof out.digits, id);
        out.view = {out.digits, static_cast<size_t>(r.ptr - out.digits)};
        return;
    }
    out.name = group ? rq.svc.ids.owner_group(id) : rq.svc.ids.owner(id);
    out.view = out.name;
}

void fill_limits(const Request& rq, FsAttrs& fs) {
    fs.maxfilesize = INT64_MAX;
    fs.maxname = 255;
    fs.maxlink = 65000;
    fs.maxread = 1u << 20;
    fs.maxwrite = 1u << 20;
    fs.lease_time = static_cast<uint32_t>(rq.svc.options.limits.lease.count());
}

}  // namespace

const AttrMask& fs_count_attrs() {
    static const AttrMask kFsCounts{x4::FATTR4_SPACE_AVAIL, x4::FATTR4_SPACE_FREE,
                                    x4::FATTR4_SPACE_TOTAL, x4::FATTR4_FILES_AVAIL,
                                    x4::FATTR4_FILES_FREE,  x4::FATTR4_FILES_TOTAL};
    return kFsCounts;
}

x4::nfsstat4 encode_attrs_of(Request& rq, const Target& t, const AttrMask& want, xdr::Encoder& e,
                             std::optional<uint64_t> size, const struct statx* read_now) {
    ObjectAttrs o;
    FsAttrs fs;
    fill_limits(rq, fs);
    WireHandle fh;  // made only when asked for: a pseudo directory's is a MAC
    if (want.has(x4::FATTR4_FILEHANDLE)) {
        fh = rq.handle_of(t);
        o.fh = fh.data();
    }
    if (t.pseudo) {
        // §7.3: read-only directories owned by root.
        o.st = {};
        o.st.stx_mode = S_IFDIR | 0555;
        o.st.stx_nlink = 2;
        o.st.stx_ino = t.pseudo_node;
        o.st.stx_size = 4096;
        o.st.stx_blocks = 8;
        o.st.stx_atime = o.st.stx_mtime = o.st.stx_ctime = start_time();
        o.change = change_of(o.st);
        o.mounted_on_fileid = t.pseudo_node;
        fs.fsid = kPseudoFsid;
    } else {
        if (read_now) {
            o.st = *read_now;
        } else {
            auto st = vfs::getattr(t.node);
            if (!st) return to_nfsstat4(st.error());
            o.st = *st;
        }
        if (size) o.st.stx_size = *size;
        o.change = change_of(o.st);
        o.mounted_on_fileid = o.st.stx_ino;
        // §5.8.2.23: at an export root, the fileid of what it covers in the pseudo tree.
        if (t.node.exp->is_root(o.st))
            o.mounted_on_fileid = PseudoFs::id_of(vfs::normalize_path(t.node.exp->spec().path));
        fs.fsid = x4::fsid4{t.node.fsid(), 0};
        // Space and files only when asked for: statfs is a second system call.
        if (!(want & fs_count_attrs()).empty()) {
            auto s = vfs::fsstat(t.node);
            if (!s) return to_nfsstat4(s.error());
            fs.space_total = s->total_bytes;
            fs.space_free = s->free_bytes;
            fs.space_avail = s->avail_bytes;
            fs.files_total = s->total_files;
            fs.files_free = s->free_files;
            fs.files_avail = s->avail_files;
        }
    }
    IdText owner, group;  // only those asked for: a name may take a lookup
    if (want.has(x4::FATTR4_OWNER)) {
        id_text(rq, o.st.stx_uid, false, owner);
        o.owner = owner.view;
    }
    if (want.has(x4::FATTR4_OWNER_GROUP)) {
        id_text(rq, o.st.stx_gid, true, group);
        o.owner_group = group.view;
    }
    o.fs = &fs;
    return encode_fattr(want, o, e);
}

x4::nfsstat4 compare_attrs(Request& rq, const Target& t, const x4::fattr4& given, bool& same) {
    same = false;
    bool beyond = false;
    const AttrMask want = AttrMask::from_wire(given.attrmask, &beyond);
    if (beyond || !want.without(supported_attrs()).empty()) return x4::NFS4ERR_ATTRNOTSUPP;
    if (want.has(x4::FATTR4_RDATTR_ERROR) || !(want & write_only_attrs()).empty())
        return x4::NFS4ERR_INVAL;
    if (!attrlist_well_formed(want, given.attr_vals)) return x4::NFS4ERR_BADXDR;
    std::vector<uint8_t> mine;
    xdr::Encoder e(mine);
    if (auto st = encode_attrs_of(rq, t, want, e); st != x4::NFS4_OK) return st;
    x4::fattr4 ours;
    xdr::Decoder d(mine);
    if (!x4::xdr_decode(d, ours)) return x4::NFS4ERR_SERVERFAULT;
    same = std::equal(ours.attr_vals.begin(), ours.attr_vals.end(), given.attr_vals.begin(),
                      given.attr_vals.end());
    return x4::NFS4_OK;
}

}  // namespace nfsrdmad::nfs::v4
