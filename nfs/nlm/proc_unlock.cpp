// NLMPROC4_UNLOCK (XNFS NLM v4): release a range; unlocking what is not held is not an
// error. NLM4_DENIED_GRACE_PERIOD during grace (as knfsd).
#include "nfs/nlm/mirror.h"
#include "nfs/nlm/request.h"

namespace nfsrdmad::nfs::nlm {

rpc::Outcome proc_unlock(Request& rq) {
    x::nlm4_unlockargs a;
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
    CallMirror m(rq.svc, f);
    auto r = rq.svc.locks.unlock(f.key, owner, lock_of(a.alock, false).range, m.get());
    if (!r) return answer(stat_of_errno(r.error()));
    rq.svc.wake(std::move(*r));  // whoever waited for these bytes
    return answer(x::NLM4_GRANTED);
}

}  // namespace nfsrdmad::nfs::nlm
