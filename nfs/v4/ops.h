// ops.h — the NFSv4.1 operations (RFC 8881 §18), one file each (op_<name>.cpp), and
// the table that lists them (op_table.cpp).
//
// Each runs with the OpEntry signature: decodes its arguments from `args`, encodes its
// whole result (status first) into `res`, reaches the daemon through c.rq (request.h).
#pragma once

#include "nfs/v4/op_table.h"

namespace nfsrdmad::nfs::v4 {

using OpFn = OpResult(Compound& c, xdr::Decoder& args, xdr::Encoder& res);

// Sessions and clients (§18.35–§18.50).
OpFn op_exchange_id, op_create_session, op_destroy_session, op_destroy_clientid,
    op_bind_conn_to_session, op_sequence, op_reclaim_complete, op_test_stateid, op_free_stateid,
    op_backchannel_ctl, op_set_ssv;

// Filehandles (§18.19–§18.22, §18.27, §18.31).
OpFn op_putfh, op_putpubfh, op_putrootfh, op_getfh, op_savefh, op_restorefh;

// Looking at the namespace and at objects without state.
OpFn op_lookup, op_lookupp, op_getattr, op_access, op_readlink, op_readdir, op_verify, op_nverify,
    op_secinfo, op_secinfo_no_name;

// Changing the namespace and attributes.
OpFn op_create, op_remove, op_rename, op_link, op_setattr;
void encode_setattr_error(xdr::Encoder& res, x4::nfsstat4 status);  // attrsset even then

// Nowait pre-flights (OpEntry::may_nowait).
bool putfh_may_nowait(Compound& c, xdr::Decoder args);
bool read_may_nowait(Compound& c, xdr::Decoder args);

// Opens and I/O (§18.16–§18.18, §18.2, §18.22, §18.32).
OpFn op_open, op_close, op_open_downgrade, op_read, op_write, op_commit, op_delegreturn;

// Byte-range locks (§18.10–§18.12).
OpFn op_lock, op_lockt, op_locku;

}  // namespace nfsrdmad::nfs::v4
