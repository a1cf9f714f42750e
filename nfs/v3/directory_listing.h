// What READDIR and READDIRPLUS share (RFC 1813 §3.3.16, §3.3.17): the directory,
// its cookie verifier check, and XDR sizes for filling a reply up to the client's limit.
#pragma once

#include <algorithm>
#include <cerrno>

#include "nfs/v3/request.h"
#include "nfs/vfs/readdir.h"

namespace nfsrdmad::nfs::v3 {

// Bytes of a reply before any entry: status, post_op_attr, cookieverf3, and after the
// entries the list terminator and eof.
inline constexpr size_t kDirReplyOverhead = 4 + (4 + 84) + 8 + 4 + 4;

// The most bytes a reply may take: what the client asked for (READDIR count, READDIRPLUS
// maxcount), but never more than the dtpref FSINFO advertises. RFC 1813 §3.3.16 and
// §3.3.17 let the server return less than asked; the client pages on with the cookie.
inline size_t reply_limit(uint32_t asked) {
    return std::min(asked, kDirTransfer);
}

// One entry3's bytes: "value follows", fileid, name, cookie.
inline size_t entry_size(std::string_view name) {
    return 4 + 8 + 4 + name.size() + xdr::pad4(name.size()) + 8;
}

struct Listing {
    Target dir;
    struct statx attrs {};  // the directory's, as open_listing resolved it
    uint64_t verifier = 0;
    bool is_export_root = false;
    // The fileid to report: ".." of the export root is the root itself, as LOOKUP says.
    uint64_t fileid(std::string_view name, uint64_t ino) const {
        return is_export_root && name == ".." ? dir.node.exp->root_ino() : ino;
    }
};

// NFS3_OK, or why the listing cannot start (also NFS3ERR_BAD_COOKIE for a verifier
// from another incarnation of the directory).
x::nfsstat3 open_listing(Request& rq, const x::nfs_fh3& fh, uint64_t cookie,
                         const x::cookieverf3& verf, Listing& out);

// The directory's attributes for a failed listing: none when the caller was refused
// (ACCES, PERM). They are optional (RFC 1813 §3.3.16 resfail post_op_attr), and a
// caller denied reading the directory is not shown its attributes either.
inline x::post_op_attr failed_listing_attrs(const Listing& l, x::nfsstat3 status) {
    if (!l.dir.node.exp || status == x::NFS3ERR_ACCES || status == x::NFS3ERR_PERM) return {};
    return post_op(l.dir.node);
}

// The reply when the listing could not start (Res: READDIR3res or READDIRPLUS3res).
template <class Res>
rpc::Outcome refuse_listing(Request& rq, Res& res, const Listing& l) {
    res.resfail().dir_attributes = failed_listing_attrs(l, res.status());
    return rq.reply(res);
}

// The reply once vfs::readdir has filled res.resok().reply.entries as far as they fit.
template <class Res>
rpc::Outcome finish_listing(Request& rq, Res& res, const Listing& l,
                            const vfs::Result<vfs::ReaddirResult>& r) {
    if (!r)
        res.set_status(r.error() == EINVAL ? x::NFS3ERR_BAD_COOKIE : to_nfsstat3(r.error()));
    else if (res.resok().reply.entries.empty() && !r->eof)
        res.set_status(x::NFS3ERR_TOOSMALL);  // not even one entry fits the client's limit
    if (res.status() != x::NFS3_OK) return refuse_listing(rq, res, l);
    res.resok().dir_attributes = post_op(l.dir.node);
    res.resok().cookieverf = to_cookieverf(l.verifier);
    res.resok().reply.eof = r->eof;
    return rq.reply(res);
}

}  // namespace nfsrdmad::nfs::v3
