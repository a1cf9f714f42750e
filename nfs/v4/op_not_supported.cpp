// Operations this server answers with NFS4ERR_NOTSUPP.
//
// RFC 8881 §17 marks pNFS (GETDEVICEINFO, GETDEVICELIST, LAYOUTCOMMIT, LAYOUTGET,
// LAYOUTRETURN), OPENATTR, GET_DIR_DELEGATION and WANT_DELEGATION as optional; a
// server without them says NOTSUPP. DELEGPURGE too (§18.5.3: a server without it
// supports neither CLAIM_DELEGATE_PREV nor CLAIM_DELEG_PREV_FH, and neither does this
// one). The NFSv4.0 operations SETCLIENTID, SETCLIENTID_CONFIRM, RENEW, OPEN_CONFIRM and
// RELEASE_LOCKOWNER are "MNI" in §17's table (MUST NOT implement in minor version 1):
// NOTSUPP as well.
#include "nfs/v4/op_table.h"

namespace nfsrdmad::nfs::v4 {

namespace {

// Arguments are not read: the COMPOUND ends at this operation's error.
OpResult not_supported(Compound&, xdr::Decoder&, xdr::Encoder& res) {
    encode_status_only(res, x4::NFS4ERR_NOTSUPP);
    return {x4::NFS4ERR_NOTSUPP};
}

}  // namespace

void install_not_supported(OpTable& table) {
    static const std::pair<uint32_t, const char*> ops[] = {
        {x4::OP_OPENATTR, "OPENATTR"},
        {x4::OP_DELEGPURGE, "DELEGPURGE"},
        {x4::OP_GET_DIR_DELEGATION, "GET_DIR_DELEGATION"},
        {x4::OP_WANT_DELEGATION, "WANT_DELEGATION"},
        {x4::OP_GETDEVICEINFO, "GETDEVICEINFO"},
        {x4::OP_GETDEVICELIST, "GETDEVICELIST"},
        {x4::OP_LAYOUTCOMMIT, "LAYOUTCOMMIT"},
        {x4::OP_LAYOUTGET, "LAYOUTGET"},
        {x4::OP_LAYOUTRETURN, "LAYOUTRETURN"},
        {x4::OP_SETCLIENTID, "SETCLIENTID"},
        {x4::OP_SETCLIENTID_CONFIRM, "SETCLIENTID_CONFIRM"},
        {x4::OP_RENEW, "RENEW"},
        {x4::OP_OPEN_CONFIRM, "OPEN_CONFIRM"},
        {x4::OP_RELEASE_LOCKOWNER, "RELEASE_LOCKOWNER"},
    };
    for (auto [opnum, name] : ops) table.set(opnum, {name, not_supported, encode_status_only});
}

}  // namespace nfsrdmad::nfs::v4
