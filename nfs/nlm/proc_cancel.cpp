// NLMPROC4_CANCEL (XNFS NLM v4): the client no longer waits for a blocked LOCK; its
// waiter leaves the queue, and a grant of it the client has not heard of is undone
// (Services::cancel). NLM4_GRANTED whether or not one was queued (as knfsd), and
// NLM4_DENIED_GRACE_PERIOD during grace.
#include "nfs/nlm/request.h"

namespace nfsrdmad::nfs::nlm {

rpc::Outcome proc_cancel(Request& rq) {
    x::nlm4_cancargs a;
    if (!rq.decode(a)) return rpc::Outcome::garbage();
    if (rq.svc.in_grace()) return rq.answer(a.cookie, x::NLM4_DENIED_GRACE_PERIOD);
    LockTarget t;
    if (auto s = rq.target(a.alock, t, /*known_host=*/true); s != x::NLM4_GRANTED)
        return rq.answer(a.cookie, s);
    rq.svc.cancel(t.file.node, t.file.key, t.owner, lock_of(a.alock, a.exclusive));
    return rq.answer(a.cookie, x::NLM4_GRANTED);
}

}  // namespace nfsrdmad::nfs::nlm
