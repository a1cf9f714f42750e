// statx -> NFSv3 attributes (RFC 1813 §2.6 fattr3, §2.6 wcc_attr / pre_op_attr).
#pragma once

#include <fcntl.h>
#include <sys/stat.h>

#include "nfs/vfs/dir_change.h"
#include "nfs/vfs/node.h"
#include "nfs/vfs/result.h"
#include "xdr/nfs3_prot.h"

namespace nfsrdmad::nfs::v3 {

namespace x = xdr::nfs3;

x::fattr3 to_fattr3(const struct statx& st, uint32_t fsid);
x::post_op_attr post_op(const struct statx& st, uint32_t fsid);
x::post_op_attr post_op(const vfs::Node& node);  // stats now; empty on failure
x::pre_op_attr pre_op(const struct statx& st);
x::pre_op_attr pre_op(const vfs::Node& node);
x::wcc_data wcc(const x::pre_op_attr& before, const vfs::Node& node);
// wcc_data of a directory change (vfs/dir_change.h): the two readings taken around the
// change itself when it got that far, else `before` and the attributes now.
x::wcc_data wcc(const vfs::DirChange& c, const x::pre_op_attr& before, const vfs::Node& node);
x::post_op_fh3 post_op_fh(const vfs::Node& node);

// errno / vfs error -> nfsstat3 (RFC 1813 §2.6).
x::nfsstat3 to_nfsstat3(int err);

// statx of a node, AT_EMPTY_PATH; 0 or an errno.
int stat_node(const vfs::Node& node, struct statx& st);

}  // namespace nfsrdmad::nfs::v3
