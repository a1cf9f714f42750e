// names.h — component4 checks shared by the operations that take a name (RFC 8881
// §14.2 and the ERRORS of LOOKUP, CREATE, OPEN, REMOVE, RENAME, LINK): empty is
// NFS4ERR_INVAL, longer than NAME_MAX NFS4ERR_NAMETOOLONG, "." / ".." or a name with
// '/' or NUL NFS4ERR_BADNAME (as the Linux server's check_filename answers).
#pragma once

#include <string_view>

#include "xdr/nfs4_prot.h"

namespace nfsrdmad::nfs::v4 {

inline xdr::nfs4::nfsstat4 check_name(std::span<const uint8_t> n, std::string_view& out) {
    out = {reinterpret_cast<const char*>(n.data()), n.size()};
    if (out.empty()) return xdr::nfs4::NFS4ERR_INVAL;
    if (out.size() > 255) return xdr::nfs4::NFS4ERR_NAMETOOLONG;
    if (out == "." || out == ".." || out.find_first_of(std::string_view("/\0", 2)) != out.npos)
        return xdr::nfs4::NFS4ERR_BADNAME;
    return xdr::nfs4::NFS4_OK;
}

}  // namespace nfsrdmad::nfs::v4
