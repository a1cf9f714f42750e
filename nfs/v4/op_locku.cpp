// LOCKU (RFC 8881 §18.12): unlock a range of the lock stateid's owner on the current
// filehandle's file. Unlocking bytes not held is not an error; unlocking the middle of
// a lock splits it. The seqid argument is ignored in 4.1 (§18.12.3). The lock stateid's
// seqid is bumped and answered; it stays until FREE_STATEID or the CLOSE of its open.
// A split the table cannot hold (its bounds) is NFS4ERR_LOCK_RANGE (§15.1.8.9).
#include <cerrno>

#include "nfs/v4/lock_state.h"
#include "nfs/v4/ops.h"
#include "nfs/v4/request.h"
#include "nfs/v4/stateids.h"

namespace nfsrdmad::nfs::v4 {

namespace {

namespace vs = vfs::state;

x4::nfsstat4 locku(Compound& c, const x4::LOCKU4args& a, state::Stateid& out) {
    Request& rq = *c.rq;
    Target* cur;
    if (auto st = rq.current(cur); st != x4::NFS4_OK) return st;
    vs::FileKey file;
    if (auto st = lock_file_key(*cur, file); st != x4::NFS4_OK) return st;
    vs::LockType type;
    if (auto st = lock_type_of(a.locktype, type); st != x4::NFS4_OK) return st;
    state::Stateid sid;
    if (auto st = effective_stateid(c, a.lock_stateid, sid); st != x4::NFS4_OK) return st;
    if (state::classify(sid) != state::Special::None) return x4::NFS4ERR_BAD_STATEID;
    auto r = rq.svc.clients.check_stateid(rq.clientid, sid, state::mask_of(state::StateKind::Lock));
    if (r.status != x4::NFS4_OK) return r.status;
    auto ls = rq.svc.lock_states.find(sid.other);
    if (!ls || ls->client != rq.clientid || !(ls->file == file)) return x4::NFS4ERR_BAD_STATEID;
    vs::ByteRange range;
    if (auto st = lock_range_of(a.offset, a.length, range); st != x4::NFS4_OK) return st;
    auto u = rq.svc.locks.unlock(file, ls->owner, range);
    if (!u) return u.error() == ENOLCK ? x4::NFS4ERR_LOCK_RANGE : to_nfsstat4(u.error());
    rq.svc.pass_woken(std::move(*u));
    auto b = rq.svc.clients.bump_stateid(rq.clientid, r.stateid);
    if (b.status != x4::NFS4_OK) return b.status;
    ls->stateid = b.stateid;
    (void)rq.svc.lock_states.update(*ls);  // false: freed meanwhile, nothing to record
    out = b.stateid;
    return x4::NFS4_OK;
}

}  // namespace

OpResult op_locku(Compound& c, xdr::Decoder& args, xdr::Encoder& res) {
    x4::LOCKU4args a;
    if (!c.rq->decode(args, a)) return OpResult::bad_xdr();
    state::Stateid sid;
    x4::nfsstat4 st = locku(c, a, sid);
    x4::LOCKU4res r(st);
    if (st == x4::NFS4_OK) {
        r.lock_stateid() = to_wire(sid);
        c.current_stateid = to_wire(sid);
    }
    x4::xdr_encode(res, r);
    return {st};
}

}  // namespace nfsrdmad::nfs::v4
