// The operations a COMPOUND can run, by number (RFC 8881 §18). An operation missing
// here is answered NFS4ERR_OP_ILLEGAL by the engine (§18.52); the optional ones this
// server does not offer are NFS4ERR_NOTSUPP (op_not_supported.cpp).
#include "nfs/v4/nfs4_program.h"
#include "nfs/v4/ops.h"

namespace nfsrdmad::nfs::v4 {

namespace {

// An operation whose result on failure is its status alone.
OpEntry plain(const char* name, OpFn* run, bool needs_fh = false) {
    return {name, run, encode_status_only, needs_fh, false};
}

OpEntry with_preflight(OpEntry e, bool (*may_nowait)(Compound&, xdr::Decoder)) {
    e.may_nowait = may_nowait;
    return e;
}

}  // namespace

OpTable make_op_table() {
    OpTable t;
    install_not_supported(t);

    // Sessions and clients.
    t.set(x4::OP_EXCHANGE_ID, plain("EXCHANGE_ID", op_exchange_id));
    t.set(x4::OP_CREATE_SESSION, plain("CREATE_SESSION", op_create_session));
    t.set(x4::OP_SEQUENCE, plain("SEQUENCE", op_sequence));
    t.set(x4::OP_RECLAIM_COMPLETE, plain("RECLAIM_COMPLETE", op_reclaim_complete));
    t.set(x4::OP_DESTROY_SESSION, plain("DESTROY_SESSION", op_destroy_session));
    t.set(x4::OP_DESTROY_CLIENTID, plain("DESTROY_CLIENTID", op_destroy_clientid));
    t.set(x4::OP_TEST_STATEID, plain("TEST_STATEID", op_test_stateid));
    t.set(x4::OP_FREE_STATEID, plain("FREE_STATEID", op_free_stateid));
    t.set(x4::OP_BIND_CONN_TO_SESSION, plain("BIND_CONN_TO_SESSION", op_bind_conn_to_session));
    t.set(x4::OP_BACKCHANNEL_CTL, plain("BACKCHANNEL_CTL", op_backchannel_ctl));
    t.set(x4::OP_SET_SSV, plain("SET_SSV", op_set_ssv));

    // Filehandles.
    t.set(x4::OP_PUTROOTFH, plain("PUTROOTFH", op_putrootfh));
    t.set(x4::OP_PUTFH, with_preflight(plain("PUTFH", op_putfh), putfh_may_nowait));
    t.set(x4::OP_PUTPUBFH, plain("PUTPUBFH", op_putpubfh));
    t.set(x4::OP_GETFH, plain("GETFH", op_getfh, true));
    t.set(x4::OP_SAVEFH, plain("SAVEFH", op_savefh, true));
    t.set(x4::OP_RESTOREFH, {"RESTOREFH", op_restorefh, encode_status_only, false, true});

    // Looking at the namespace and at objects.
    t.set(x4::OP_GETATTR, plain("GETATTR", op_getattr, true));
    t.set(x4::OP_LOOKUP, plain("LOOKUP", op_lookup, true));
    t.set(x4::OP_LOOKUPP, plain("LOOKUPP", op_lookupp, true));
    t.set(x4::OP_ACCESS, plain("ACCESS", op_access, true));
    t.set(x4::OP_READDIR, plain("READDIR", op_readdir, true));
    t.set(x4::OP_READLINK, plain("READLINK", op_readlink, true));
    t.set(x4::OP_SECINFO, plain("SECINFO", op_secinfo, true));
    t.set(x4::OP_VERIFY, plain("VERIFY", op_verify, true));
    t.set(x4::OP_NVERIFY, plain("NVERIFY", op_nverify, true));
    t.set(x4::OP_SECINFO_NO_NAME, plain("SECINFO_NO_NAME", op_secinfo_no_name, true));

    // Changing the namespace and attributes.
    t.set(x4::OP_CREATE, plain("CREATE", op_create, true));
    t.set(x4::OP_REMOVE, plain("REMOVE", op_remove, true));
    t.set(x4::OP_RENAME, {"RENAME", op_rename, encode_status_only, true, true});
    t.set(x4::OP_LINK, {"LINK", op_link, encode_status_only, true, true});
    t.set(x4::OP_SETATTR, {"SETATTR", op_setattr, encode_setattr_error, true, false});

    // Opens and I/O.
    t.set(x4::OP_OPEN, plain("OPEN", op_open, true));
    t.set(x4::OP_CLOSE, plain("CLOSE", op_close, true));
    t.set(x4::OP_OPEN_DOWNGRADE, plain("OPEN_DOWNGRADE", op_open_downgrade, true));
    t.set(x4::OP_READ, with_preflight(plain("READ", op_read, true), read_may_nowait));
    t.set(x4::OP_WRITE, plain("WRITE", op_write, true));
    t.set(x4::OP_COMMIT, plain("COMMIT", op_commit, true));
    t.set(x4::OP_DELEGRETURN, plain("DELEGRETURN", op_delegreturn, true));

    // Byte-range locks.
    t.set(x4::OP_LOCK, plain("LOCK", op_lock, true));
    t.set(x4::OP_LOCKT, plain("LOCKT", op_lockt, true));
    t.set(x4::OP_LOCKU, plain("LOCKU", op_locku, true));

    return t;
}

}  // namespace nfsrdmad::nfs::v4
