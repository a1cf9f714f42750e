// LOOKUP (RFC 8881 §18.15) and LOOKUPP (§18.14). In the pseudo file system a name is
// a pseudo directory or an export's root (admitted with that export's rules, so
// WRONGSEC and ACCESS come from here, §2.6.3.1.1); in an export, the caller's lookup
// (vfs::lookup_as: its search permission on the directory; never leaves the export,
// never follows a symlink). A directory
// that is another export's root (same device and inode) becomes that export's root:
// the fsid changes there, as it would at a mount point (§7.5). In a nowait COMPOUND (a
// reactor's), LOOKUP answers from the dentry cache or gives the COMPOUND up.
#include <sys/stat.h>

#include <cerrno>

#include "nfs/v4/lookup.h"
#include "nfs/v4/names.h"
#include "nfs/v4/ops.h"
#include "nfs/v4/request.h"
#include "nfs/vfs/attrs.h"
#include "nfs/vfs/lookup.h"

namespace nfsrdmad::nfs::v4 {

namespace {

x4::nfsstat4 export_root(Request& rq, const vfs::Export& exp, Target& out) {
    return rq.resolve(exp.root_handle().data(), out);
}

x4::nfsstat4 pseudo_entry(Request& rq, const PseudoFs::Entry& e, Target& out) {
    if (e.kind == PseudoFs::Entry::Directory) {
        out = Target{};
        out.pseudo = true;
        out.pseudo_node = e.node;
        return x4::NFS4_OK;
    }
    auto exp = rq.table->find_by_fsid(e.fsid);
    if (!exp) return x4::NFS4ERR_NOENT;
    return export_root(rq, *exp, out);
}

x4::nfsstat4 done(xdr::Encoder& res, x4::nfsstat4 st) {
    encode_status_only(res, st);
    return st;
}

}  // namespace

namespace {

// The type of a target's object: known since it was resolved, else read now.
vfs::Result<uint32_t> type_of(const Target& t) {
    if (t.type) return t.type;
    auto st = vfs::getattr(t.node);
    if (!st) return st.failure();
    return st->stx_mode & S_IFMT;
}

// The current directory's lookup of `name` for its caller: nowait (a reactor's),
// vfs::lookup_cached; otherwise vfs::lookup_as. Both check the caller's search permission
// from the directory's attributes: as the operation's resolve of it read them, else now.
vfs::Result<vfs::Entry> lookup_for_caller(Request& rq, const Target& dir, std::string_view name) {
    // The current filehandle's attributes, when `dir` is the current filehandle (LOOKUP,
    // OPEN and SECINFO look up in it; current() only finds what it resolved before).
    Target* cur = nullptr;
    const struct statx* now =
        rq.current(cur) == x4::NFS4_OK && cur == &dir ? rq.attrs_read_now() : nullptr;
    struct statx st {};
    if (!now) {
        auto read = vfs::getattr(dir.node);
        if (!read) return read.failure();
        st = *read;
        now = &st;
    }
    if (rq.ctx.nowait) return vfs::lookup_cached(dir.node, *now, name, dir.who.id);
    return vfs::lookup_as(dir.node, *now, name, dir.who.id);
}

}  // namespace

x4::nfsstat4 must_be_dir(const Target& t) {
    if (t.pseudo) return x4::NFS4_OK;
    auto type = type_of(t);
    if (!type) return to_nfsstat4(type.error());
    if (S_ISLNK(*type)) return x4::NFS4ERR_SYMLINK;
    if (!S_ISDIR(*type)) return x4::NFS4ERR_NOTDIR;
    return x4::NFS4_OK;
}

x4::nfsstat4 must_be_file(const Target& t) {
    if (t.pseudo) return x4::NFS4ERR_ISDIR;
    auto type = type_of(t);
    if (!type) return to_nfsstat4(type.error());
    if (S_ISREG(*type)) return x4::NFS4_OK;
    if (S_ISDIR(*type)) return x4::NFS4ERR_ISDIR;
    if (S_ISLNK(*type)) return x4::NFS4ERR_SYMLINK;
    return x4::NFS4ERR_WRONG_TYPE;
}

x4::nfsstat4 lookup_name(Request& rq, const Target& dir, std::string_view name, Target& out,
                         std::optional<struct statx>* attrs) {
    if (auto st = must_be_dir(dir); st != x4::NFS4_OK) return st;
    return lookup_entry(rq, dir, name, out, attrs);
}

x4::nfsstat4 lookup_entry(Request& rq, const Target& dir, std::string_view name, Target& out,
                          std::optional<struct statx>* attrs, bool searched) {
    if (dir.pseudo) {
        auto e = rq.pseudo().lookup(dir.pseudo_node, name);
        if (!e) return x4::NFS4ERR_NOENT;
        return pseudo_entry(rq, *e, out);
    }
    auto e = searched ? vfs::lookup_permitted(dir.node, name) : lookup_for_caller(rq, dir, name);
    if (!e && rq.ctx.nowait && e.error() == EWOULDBLOCK) return rq.block();
    if (!e) {
        // A file system mounted inside the export is not crossed (no `crossmnt`).
        return e.error() == EXDEV ? x4::NFS4ERR_ACCESS : to_nfsstat4(e.error());
    }
    if (S_ISDIR(e->attr.stx_mode)) {
        for (const auto& exp : rq.table->exports())
            if (exp.get() != dir.node.exp.get() && exp->is_root(e->attr))
                return export_root(rq, *exp, out);
    }
    out = Target{};
    out.node = std::move(e->node);
    out.who = dir.who;
    if (attrs) *attrs = e->attr;
    return x4::NFS4_OK;
}

OpResult op_lookup(Compound& c, xdr::Decoder& args, xdr::Encoder& res) {
    Request& rq = *c.rq;
    x4::LOOKUP4args a;
    if (!rq.decode(args, a)) return OpResult::bad_xdr();
    Target* dir;
    if (auto st = rq.current(dir); st != x4::NFS4_OK) return {done(res, st)};
    std::string_view name;
    if (auto st = check_name(a.objname, name); st != x4::NFS4_OK) return {done(res, st)};
    Target found;
    std::optional<struct statx> attrs;
    if (auto st = lookup_name(rq, *dir, name, found, &attrs); st != x4::NFS4_OK)
        return {done(res, st)};
    // Found by a worker: a regular file is held for a second or two (fd_cache.h), so that
    // the COMPOUNDs an open sends next find it where they arrive.
    if (!rq.ctx.nowait && !found.pseudo && attrs) rq.svc.files.hold(found.node, *attrs);
    // The attributes the lookup read: a GETATTR or ACCESS right after (GETFH between, as
    // the Linux client sends them) answers with them, not with a second statx.
    rq.set_current(std::move(found), attrs ? &*attrs : nullptr);
    return {done(res, x4::NFS4_OK)};
}

x4::nfsstat4 parent_of(Request& rq, const Target& dir, Target& up) {
    if (auto st = must_be_dir(dir); st != x4::NFS4_OK) return st;
    up = Target{};
    if (dir.pseudo) {
        // §18.14.3: the root has no parent.
        auto p = rq.pseudo().parent(dir.pseudo_node);
        if (!p) return x4::NFS4ERR_NOENT;
        up.pseudo = true;
        up.pseudo_node = *p;
        return x4::NFS4_OK;
    }
    auto st = vfs::getattr(dir.node);
    if (!st) return to_nfsstat4(st.error());
    if (dir.node.exp->is_root(*st)) {
        auto p = rq.pseudo().parent_of_export(dir.node.exp->fsid());
        if (!p) return x4::NFS4ERR_NOENT;
        up.pseudo = true;
        up.pseudo_node = *p;
        return x4::NFS4_OK;
    }
    auto e = vfs::lookup(dir.node, "..", dir.who.id);
    if (!e) return to_nfsstat4(e.error());
    up.node = std::move(e->node);
    up.who = dir.who;
    return x4::NFS4_OK;
}

OpResult op_lookupp(Compound& c, xdr::Decoder&, xdr::Encoder& res) {
    Request& rq = *c.rq;
    Target* dir;
    if (auto st = rq.current(dir); st != x4::NFS4_OK) return {done(res, st)};
    Target up;
    if (auto st = parent_of(rq, *dir, up); st != x4::NFS4_OK) return {done(res, st)};
    rq.set_current(std::move(up));
    return {done(res, x4::NFS4_OK)};
}

}  // namespace nfsrdmad::nfs::v4
