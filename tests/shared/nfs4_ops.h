// nfs4_ops.h — NFSv4.1 argument builders shared by the in-process tests (tests/unit,
// through Nfs4Program) and the raw TCP client tests (tests/e2e): each returns one
// nfs_argop4 of the generated RFC 5662 codecs. Views (names, data) are not copied: the
// caller keeps what they point to alive until the COMPOUND is encoded.
#pragma once

#include <cstdint>
#include <initializer_list>
#include <span>

#include "xdr/nfs4_prot.h"

namespace nfsrdmad::test_nfs4 {

namespace x4 = xdr::nfs4;

inline x4::nfs_argop4 op_putrootfh() {
    return x4::nfs_argop4(x4::OP_PUTROOTFH);
}
inline x4::nfs_argop4 op_getfh() {
    return x4::nfs_argop4(x4::OP_GETFH);
}
inline x4::nfs_argop4 op_savefh() {
    return x4::nfs_argop4(x4::OP_SAVEFH);
}
inline x4::nfs_argop4 op_restorefh() {
    return x4::nfs_argop4(x4::OP_RESTOREFH);
}
inline x4::nfs_argop4 op_putfh(std::span<const uint8_t> fh) {
    x4::nfs_argop4 op(x4::OP_PUTFH);
    op.opputfh().object = fh;
    return op;
}
inline x4::nfs_argop4 op_access(uint32_t access) {
    x4::nfs_argop4 op(x4::OP_ACCESS);
    op.opaccess().access = access;
    return op;
}
inline x4::nfs_argop4 op_lookup(std::span<const uint8_t> name) {
    x4::nfs_argop4 op(x4::OP_LOOKUP);
    op.oplookup().objname = name;
    return op;
}
inline x4::nfs_argop4 op_remove(std::span<const uint8_t> name) {
    x4::nfs_argop4 op(x4::OP_REMOVE);
    op.opremove().target = name;
    return op;
}
// EXCHANGE_ID for client owner `owner` (RFC 8881 §18.35), without state protection.
inline x4::nfs_argop4 op_exchange_id(std::span<const uint8_t> owner,
                                     const x4::verifier4& verifier = {1, 2, 3, 4, 5, 6, 7, 8}) {
    x4::nfs_argop4 op(x4::OP_EXCHANGE_ID);
    auto& ea = op.opexchange_id();
    ea.eia_clientowner.co_ownerid = owner;
    ea.eia_clientowner.co_verifier = verifier;
    ea.eia_state_protect.set_spa_how(x4::SP4_NONE);
    return op;
}
// CREATE_SESSION (§18.36) for the client EXCHANGE_ID made: requests and replies up to
// 1 MiB, 16 operations, 8 slots; a backchannel of one slot.
inline x4::nfs_argop4 op_create_session(uint64_t clientid, uint32_t sequence) {
    x4::nfs_argop4 op(x4::OP_CREATE_SESSION);
    auto& ca = op.opcreate_session();
    ca.csa_clientid = clientid;
    ca.csa_sequence = sequence;
    ca.csa_fore_chan_attrs = {0, 1 << 20, 1 << 20, 8192, 16, 8, {}};
    ca.csa_back_chan_attrs = {0, 4096, 4096, 0, 2, 1, {}};
    return op;
}
// RECLAIM_COMPLETE (RFC 8881 §18.51) for the whole client: what a client sends after a new
// client ID and before its first non-reclaim OPEN, even with nothing to reclaim.
inline x4::nfs_argop4 op_reclaim_complete() {
    x4::nfs_argop4 op(x4::OP_RECLAIM_COMPLETE);
    op.opreclaim_complete().rca_one_fs = false;
    return op;
}
inline x4::nfs_argop4 op_getattr(std::initializer_list<uint32_t> attrs) {
    x4::nfs_argop4 op(x4::OP_GETATTR);
    auto& m = op.opgetattr().attr_request;
    for (uint32_t a : attrs) {
        if (m.size() <= a / 32) m.resize(a / 32 + 1);
        m[a / 32] |= 1u << (a % 32);
    }
    return op;
}
// OPEN by name in the current directory; `create`: with `how` and no attributes.
inline x4::nfs_argop4 op_open(std::span<const uint8_t> owner, std::span<const uint8_t> name,
                              bool create, uint32_t access, uint32_t deny = 0,
                              x4::createmode4 how = x4::UNCHECKED4) {
    x4::nfs_argop4 op(x4::OP_OPEN);
    auto& o = op.opopen();
    o.share_access = access;
    o.share_deny = deny;
    o.owner.owner = owner;
    o.openhow.set_opentype(create ? x4::OPEN4_CREATE : x4::OPEN4_NOCREATE);
    if (create) o.openhow.how().set_mode(how);
    o.claim.set_claim(x4::CLAIM_NULL);
    o.claim.file() = name;
    return op;
}
inline x4::nfs_argop4 op_write(const x4::stateid4& sid, uint64_t off, std::span<const uint8_t> d) {
    x4::nfs_argop4 op(x4::OP_WRITE);
    op.opwrite().stateid = sid;
    op.opwrite().offset = off;
    op.opwrite().stable = x4::FILE_SYNC4;
    op.opwrite().data = d;
    return op;
}
inline x4::nfs_argop4 op_read(const x4::stateid4& sid, uint64_t off, uint32_t count) {
    x4::nfs_argop4 op(x4::OP_READ);
    op.opread().stateid = sid;
    op.opread().offset = off;
    op.opread().count = count;
    return op;
}
inline x4::nfs_argop4 op_close(const x4::stateid4& sid) {
    x4::nfs_argop4 op(x4::OP_CLOSE);
    op.opclose().open_stateid = sid;
    return op;
}
constexpr uint64_t kToEof = ~uint64_t{0};
// LOCK by a new lock owner (open_to_lock_owner4, through `open_sid`).
inline x4::nfs_argop4 op_lock_new(x4::nfs_lock_type4 t, uint64_t off, uint64_t len,
                                  const x4::stateid4& open_sid, uint64_t clientid,
                                  std::span<const uint8_t> owner) {
    x4::nfs_argop4 op(x4::OP_LOCK);
    auto& a = op.oplock();
    a.locktype = t;
    a.offset = off;
    a.length = len;
    a.locker.set_new_lock_owner(true);
    auto& oo = a.locker.open_owner();
    oo.open_stateid = open_sid;
    oo.lock_owner.clientid = clientid;
    oo.lock_owner.owner = owner;
    return op;
}
// LOCK by a known lock owner (exist_lock_owner4, through its lock stateid).
inline x4::nfs_argop4 op_lock_old(x4::nfs_lock_type4 t, uint64_t off, uint64_t len,
                                  const x4::stateid4& lock_sid) {
    x4::nfs_argop4 op(x4::OP_LOCK);
    auto& a = op.oplock();
    a.locktype = t;
    a.offset = off;
    a.length = len;
    a.locker.set_new_lock_owner(false);
    a.locker.lock_owner().lock_stateid = lock_sid;
    return op;
}
inline x4::nfs_argop4 op_lockt(x4::nfs_lock_type4 t, uint64_t off, uint64_t len, uint64_t clientid,
                               std::span<const uint8_t> owner) {
    x4::nfs_argop4 op(x4::OP_LOCKT);
    auto& a = op.oplockt();
    a.locktype = t;
    a.offset = off;
    a.length = len;
    a.owner.clientid = clientid;
    a.owner.owner = owner;
    return op;
}
inline x4::nfs_argop4 op_locku(const x4::stateid4& sid, uint64_t off = 0, uint64_t len = kToEof) {
    x4::nfs_argop4 op(x4::OP_LOCKU);
    auto& a = op.oplocku();
    a.locktype = x4::WRITE_LT;
    a.lock_stateid = sid;
    a.offset = off;
    a.length = len;
    return op;
}

}  // namespace nfsrdmad::test_nfs4
