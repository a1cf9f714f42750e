// What READDIR and READDIRPLUS share (RFC 1813 §3.3.16, §3.3.17): the directory,
// its cookie verifier check, and XDR sizes for filling a reply up to the client's limit.
#pragma once

#include <cerrno>

#include "nfs/v3/request.h"
#include "nfs/vfs/readdir.h"

namespace nfsrdmad::nfs::v3 {

// Bytes of a reply before any entry: status, post_op_attr, cookieverf3, and after the
// entries the list terminator and eof.
inline constexpr size_t kDirReplyOverhead = 4 + (4 + 84) + 8 + 4 + 4;

// One entry3's bytes: "value follows", fileid, name, cookie.
inline size_t entry_size(std::string_view name) {
    return 4 + 8 + 4 + name.size() + xdr::pad4(name.size()) + 8;
}

struct Listing {
    Target dir;
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

// The reply when the listing could not start (Res: READDIR3res or READDIRPLUS3res).
template <class Res>
rpc::Outcome refuse_listing(Request& rq, Res& res, const Listing& l) {
    if (l.dir.node.exp) res.resfail.dir_attributes = post_op(l.dir.node);
    return rq.reply(res);
}

// The reply once vfs::readdir has filled res.resok.reply.entries as far as they fit.
template <class Res>
rpc::Outcome finish_listing(Request& rq, Res& res, const Listing& l,
                            const vfs::Result<vfs::ReaddirResult>& r) {
    x::post_op_attr dir_attrs = post_op(l.dir.node);
    if (!r)
        res.status = r.error() == EINVAL ? x::NFS3ERR_BAD_COOKIE : to_nfsstat3(r.error());
    else if (res.resok.reply.entries.empty() && !r->eof)
        res.status = x::NFS3ERR_TOOSMALL;  // not even one entry fits the client's limit
    if (res.status != x::NFS3_OK) {
        res.resfail.dir_attributes = dir_attrs;
        return rq.reply(res);
    }
    res.resok.dir_attributes = dir_attrs;
    res.resok.cookieverf = to_cookieverf(l.verifier);
    res.resok.reply.eof = r->eof;
    return rq.reply(res);
}

}  // namespace nfsrdmad::nfs::v3
