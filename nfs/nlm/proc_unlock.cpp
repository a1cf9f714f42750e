// NLMPROC4_UNLOCK (XNFS NLM v4): release a range; unlocking what is not held is not an
// error. NLM4_DENIED_GRACE_PERIOD during grace (as knfsd).
#include "nfs/nlm/request.h"

namespace nfsrdmad::nfs::nlm {

rpc::Outcome proc_unlock(Request& rq) {
    x::nlm4_unlockargs a;
    if (!rq.decode(a)) return rpc::Outcome::garbage();
    if (rq.svc.in_grace()) return rq.answer(a.cookie, x::NLM4_DENIED_GRACE_PERIOD);
    LockTarget t;
    if (auto s = rq.target(a.alock, t, /*known_host=*/true); s != x::NLM4_GRANTED)
        return rq.answer(a.cookie, s);
    auto r = rq.svc.locks.unlock(t.file.key, t.owner, lock_of(a.alock, false).range);
    if (!r) return rq.answer(a.cookie, stat_of_errno(r.error()));
    rq.svc.wake(std::move(*r));  // whoever waited for these bytes
    return rq.answer(a.cookie, x::NLM4_GRANTED);
}

}  // namespace nfsrdmad::nfs::nlm
