// READDIR (RFC 8881 §18.23): names, cookies and the attributes asked for, up to
// maxcount bytes of READDIR4resok. "." and ".." are never returned; cookies 1 and 2
// are reserved and 0 starts, so cookie 1 or 2 — or 0 with a verifier that is not
// zero — is NFS4ERR_BAD_COOKIE, as the Linux server answers. An entry whose attributes
// cannot be read carries only rdattr_error when the client asked for it (§5.8.1.12);
// otherwise the whole READDIR fails with that error. Not one entry fitting in
// maxcount, or a maxcount below READDIR4resok's 16 bytes, is NFS4ERR_TOOSMALL.
#include <sys/stat.h>

#include <cerrno>
#include <optional>

#include "nfs/v4/attrs/fattr.h"
#include "nfs/v4/attrs/object_attrs.h"
#include "nfs/v4/lookup.h"
#include "nfs/v4/ops.h"
#include "nfs/v4/request.h"
#include "nfs/vfs/attrs.h"
#include "nfs/vfs/lookup.h"
#include "nfs/vfs/readdir.h"

namespace nfsrdmad::nfs::v4 {

namespace {

// READDIR4resok before the entries and after them: cookieverf, then the list's end
// (value_follows false) and eof.
constexpr size_t kFixedBytes = 8 + 4 + 4;

struct Listing {
    Request& rq;
    AttrMask want;
    size_t limit;
    xdr::Encoder& res;
    size_t used = kFixedBytes;
    size_t count = 0;
    x4::nfsstat4 error = x4::NFS4_OK;
    bool full = false;

    // Appends one entry4 (value_follows, cookie, name, attrs); false when it did not
    // fit (or failed: `error`).
    // `read_now`: t's attributes, read by its lookup (nullptr: read here).
    bool add(uint64_t cookie, std::string_view name, const Target* t, x4::nfsstat4 lookup_st,
             const struct statx* read_now = nullptr) {
        const size_t at = res.size();
        res.put_u32(1);
        res.put_u64(cookie);
        res.put_string(name);
        x4::nfsstat4 st = lookup_st;
        if (st == x4::NFS4_OK) st = encode_attrs_of(rq, *t, want, res, std::nullopt, read_now);
        if (st != x4::NFS4_OK) {
            if (!want.has(x4::FATTR4_RDATTR_ERROR)) {
                error = st;
                res.truncate(at);
                return false;
            }
            // fattr4 with rdattr_error alone.
            res.truncate(at + 4 + 8 + ((name.size() + 3) & ~size_t{3}) + 4);
            AttrMask only{x4::FATTR4_RDATTR_ERROR};
            auto words = only.to_wire();
            res.put_u32(static_cast<uint32_t>(words.size()));
            for (uint32_t w : words) res.put_u32(w);
            res.put_u32(4);
            res.put_u32(static_cast<uint32_t>(st));
        }
        const size_t n = res.size() - at;
        if (used + n > limit) {
            res.truncate(at);
            full = true;
            return false;
        }
        used += n;
        ++count;
        return true;
    }
};

// Whether a directory found in `dir` is another export's root (lookup_entry then gives
// that export's own handle).
bool other_export_root(Request& rq, const Target& dir, const struct statx& st) {
    if (!S_ISDIR(st.stx_mode)) return false;
    for (const auto& exp : rq.table->exports())
        if (exp.get() != dir.node.exp.get() && exp->is_root(st)) return true;
    return false;
}

}  // namespace

OpResult op_readdir(Compound& c, xdr::Decoder& args, xdr::Encoder& res) {
    Request& rq = *c.rq;
    x4::READDIR4args a;
    if (!rq.decode(args, a)) return OpResult::bad_xdr();
    auto fail = [&](x4::nfsstat4 st) {
        encode_status_only(res, st);
        return OpResult{st};
    };
    Target* dir;
    if (auto st = rq.current(dir); st != x4::NFS4_OK) return fail(st);
    if (auto st = must_be_dir(*dir); st != x4::NFS4_OK) return fail(st);
    AttrMask want = AttrMask::from_wire(a.attr_request);
    if (!(want & write_only_attrs()).empty()) return fail(x4::NFS4ERR_INVAL);
    const x4::verifier4 zero{};
    if (a.cookie == 1 || a.cookie == 2 || (a.cookie == 0 && a.cookieverf != zero))
        return fail(x4::NFS4ERR_BAD_COOKIE);
    // maxcount is the size of READDIR4resok, whose smallest (no entry) is 16 bytes: the
    // verifier, the end of the list and eof. Less is TOOSMALL even for an empty directory
    // (pynfs RDDR8; the Linux server's nfsd4_encode_readdir).
    if (a.maxcount < 16) return fail(x4::NFS4ERR_TOOSMALL);

    uint64_t verf = 0;
    if (!dir->pseudo) {
        auto v = vfs::cookie_verifier(dir->node);
        if (!v) return fail(to_nfsstat4(v.error()));
        verf = *v;
    }
    const size_t start = res.size();
    res.put_u32(x4::NFS4_OK);
    uint8_t vb[8];
    for (int i = 7; i >= 0; --i, verf >>= 8) vb[i] = static_cast<uint8_t>(verf);
    res.put_fixed(vb, 8);

    // maxcount bounds READDIR4resok; a reply is also bounded by the session's.
    size_t limit = a.maxcount;
    Listing l{rq, want, limit, res};
    bool eof = false;
    if (dir->pseudo) {
        auto entries = rq.pseudo().list(dir->pseudo_node);
        // Cookies: an entry's index + 3 (0, 1 and 2 are reserved).
        size_t first = a.cookie == 0 ? 0 : a.cookie - 2;
        eof = true;
        for (size_t i = first; i < entries.size(); ++i) {
            Target t;
            x4::nfsstat4 st = lookup_entry(rq, *dir, entries[i].first, t);
            if (!l.add(i + 3, entries[i].first, &t, st)) {
                eof = false;
                break;
            }
        }
    } else {
        // An entry's attributes need its lookup, as the caller; the only permission that
        // takes is search on this directory, the same for every name: asked once here, so
        // the lookups need no identity switch each (vfs::lookup_permitted).
        // The directory's attributes as its resolve for this operation read them, else
        // read now.
        bool may_search = false;
        const struct statx* known = rq.attrs_read_now();
        vfs::Result<struct statx> st =
            known ? vfs::Result<struct statx>(*known) : vfs::getattr(dir->node);
        if (st) {
            auto search = vfs::may_search(dir->node, *st, dir->who.id);
            may_search = search && *search;
        }
        // An entry's handle and attributes are read by name where that is exact
        // (vfs::lookup_listed: two system calls, nothing opened), unless the attributes
        // asked for need the object itself (statfs of its file system) or the entry is
        // another export's root (lookup_entry answers it).
        const bool by_name = (want & fs_count_attrs()).empty();
        auto r = vfs::readdir(
            dir->node, a.cookie,
            [&](const vfs::DirEntry& e) {
                if (e.name == "." || e.name == "..") return true;
                Target t;
                if (!may_search) return l.add(e.cookie, e.name, &t, x4::NFS4ERR_ACCESS);
                if (by_name) {
                    auto listed = vfs::lookup_listed(dir->node, e.name);
                    if (listed && listed->by_name && !other_export_root(rq, *dir, listed->attr)) {
                        t.node = vfs::Node{dir->node.exp, vfs::NodeFd(), listed->handle};
                        t.who = dir->who;
                        t.type = listed->attr.stx_mode & S_IFMT;
                        return l.add(e.cookie, e.name, &t, x4::NFS4_OK, &listed->attr);
                    }
                }
                std::optional<struct statx> attrs;
                x4::nfsstat4 st = lookup_entry(rq, *dir, e.name, t, &attrs, true);
                return l.add(e.cookie, e.name, &t, st, attrs ? &*attrs : nullptr);
            },
            dir->who.id);
        if (!r) {
            res.truncate(start);
            return fail(r.error() == EINVAL ? x4::NFS4ERR_BAD_COOKIE : to_nfsstat4(r.error()));
        }
        eof = r->eof;
    }
    if (l.error != x4::NFS4_OK) {
        res.truncate(start);
        return fail(l.error);
    }
    if (l.count == 0 && !eof) {
        res.truncate(start);
        return fail(x4::NFS4ERR_TOOSMALL);
    }
    res.put_u32(0);  // no more entries
    res.put_bool(eof);
    return {};
}

}  // namespace nfsrdmad::nfs::v4
