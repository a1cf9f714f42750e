// What READDIR and READDIRPLUS share (RFC 1813 §3.3.16, §3.3.17): the directory,
// its cookie verifier check, and XDR sizes for filling a reply up to the client's limit.
#pragma once

#include "nfs/v3/request.h"

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

}  // namespace nfsrdmad::nfs::v3
