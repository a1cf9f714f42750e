// NLMPROC4_CANCEL (XNFS NLM v4): the client no longer waits for a blocked LOCK; its
// waiter leaves the queue. NLM4_GRANTED whether or not one was queued (as knfsd), and
// NLM4_DENIED_GRACE_PERIOD during grace.
#include "nfs/nlm/request.h"

namespace nfsrdmad::nfs::nlm {

rpc::Outcome proc_cancel(Request& rq) {
    x::nlm4_cancargs a;
    if (!rq.decode(a)) return rpc::Outcome::garbage();
    x::nlm4_res res;
    res.cookie = a.cookie;
    auto answer = [&](x::nlm4_stats s) {
        res.stat.stat = s;
        return rq.reply(res);
    };
    if (rq.svc.in_grace()) return answer(x::NLM4_DENIED_GRACE_PERIOD);
    File f;
    if (auto s = rq.file(a.alock.fh, f); s != x::NLM4_GRANTED) return answer(s);
    vs::StateOwner owner;
    if (auto s = rq.owner(a.alock, owner); s != x::NLM4_GRANTED) return answer(s);
    const vs::Lock lock = lock_of(a.alock, a.exclusive);
    (void)rq.svc.locks.cancel_wait(f.key, owner, lock);
    rq.svc.blocked.drop(owner, lock);
    return answer(x::NLM4_GRANTED);
}

}  // namespace nfsrdmad::nfs::nlm
