// NLMPROC4_UNLOCK (XNFS NLM v4): release a range; unlocking what is not held is not an
// error. NLM4_DENIED_GRACE_PERIOD during grace (as knfsd). It also cancels the owner's
// blocked LOCK of that range, shared or exclusive (knfsd's nlmsvc_unlock: "This implies a
// CANCEL call"), so a waiter its client gave up is not granted later.
#include "nfs/nlm/request.h"

namespace nfsrdmad::nfs::nlm {

rpc::Outcome proc_unlock(Request& rq) {
    x::nlm4_unlockargs a;
    if (!rq.decode(a)) return rpc::Outcome::garbage();
    if (rq.svc.in_grace()) return rq.answer(a.cookie, x::NLM4_DENIED_GRACE_PERIOD);
    LockTarget t;
    if (auto s = rq.target(a.alock, t, /*known_host=*/true); s != x::NLM4_GRANTED)
        return rq.answer(a.cookie, s);
    const vs::ByteRange range = lock_of(a.alock, false).range;
    for (vs::LockType type : {vs::LockType::Read, vs::LockType::Write}) {
        const vs::Lock waiting{range, type};
        (void)rq.svc.locks.cancel_wait(t.file.key, t.owner, waiting);
        rq.svc.blocked.drop(t.file.key, t.owner, waiting);
        // A grant whose GRANTED is in flight: settled, the unlock below releases it.
        (void)rq.svc.settle_grant(BlockedTable::key(t.file.key, t.owner, waiting));
    }
    auto r = rq.svc.locks.unlock(t.file.key, t.owner, range);
    if (!r) return rq.answer(a.cookie, stat_of_errno(r.error()));
    rq.svc.wake(std::move(*r));  // whoever waited for these bytes
    return rq.answer(a.cookie, x::NLM4_GRANTED);
}

}  // namespace nfsrdmad::nfs::nlm
