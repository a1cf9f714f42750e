// LOCKT (RFC 8881 §18.11): would this lock be granted? No state is created. The owner
// is this session's client and the owner bytes: §18.11.3, "The clientid field of the owner
// MAY be set to any value by the client and MUST be ignored by the server" (pynfs sends 0).
// A conflict is NFS4ERR_DENIED naming the holder; lengths as for LOCK (INVAL); during
// grace NFS4ERR_GRACE (§8.4.2.1: the holder may not have reclaimed yet). A courtesy
// client's lock in the way is reaped first, as LOCK would (§8.4.3).
#include "nfs/v4/lock_state.h"
#include "nfs/v4/ops.h"
#include "nfs/v4/request.h"

namespace nfsrdmad::nfs::v4 {

namespace {

namespace vs = vfs::state;

x4::nfsstat4 lockt(Request& rq, const x4::LOCKT4args& a, std::optional<vs::Conflict>& denied) {
    Target* cur;
    if (auto st = rq.current(cur); st != x4::NFS4_OK) return st;
    vs::FileKey file;
    if (auto st = lock_file_key(*cur, file); st != x4::NFS4_OK) return st;
    vs::LockType type;
    if (auto st = lock_type_of(a.locktype, type); st != x4::NFS4_OK) return st;
    vs::ByteRange range;
    if (auto st = lock_range_of(a.offset, a.length, range); st != x4::NFS4_OK) return st;
    auto owner = vs::StateOwner::make({vs::Protocol::Nfs4, rq.clientid}, a.owner.owner);
    if (!owner) return x4::NFS4ERR_INVAL;
    if (auto st = rq.svc.recovery.may_change(); st != x4::NFS4_OK) return st;
    // As LOCK: another client's delegation may hide locks its holder has not sent.
    if (rq.delegated(cur->node.handle, type == vs::LockType::Write)) return x4::NFS4ERR_DELAY;
    auto t = rq.svc.test_lock_range(cur->node, file, *owner, vs::Lock{range, type});
    if (!t) return to_nfsstat4(t.error());
    if (!*t) return x4::NFS4_OK;
    denied = std::move(*t);
    return x4::NFS4ERR_DENIED;
}

}  // namespace

OpResult op_lockt(Compound& c, xdr::Decoder& args, xdr::Encoder& res) {
    x4::LOCKT4args a;
    if (!c.rq->decode(args, a)) return OpResult::bad_xdr();
    std::optional<vs::Conflict> denied;
    x4::nfsstat4 st = lockt(*c.rq, a, denied);
    x4::LOCKT4res r(st);
    if (st == x4::NFS4ERR_DENIED) r.denied() = denied_of(*denied);
    x4::xdr_encode(res, r);
    return {st};
}

}  // namespace nfsrdmad::nfs::v4
