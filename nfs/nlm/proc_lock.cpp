// NLMPROC4_LOCK and NLMPROC4_NM_LOCK (XNFS NLM v4): take a byte-range lock in the table
// NFSv4.1 shares.
//
//   granted                           NLM4_GRANTED
//   conflict, block = false           NLM4_DENIED
//   conflict, block = true            NLM4_BLOCKED: a waiter is queued (lock_table.h);
//                                     the client re-sends LOCK until it is granted (its
//                                     lockd polls; GRANTED callbacks are not sent yet)
//   a bound (locks, waiters, hosts)   NLM4_DENIED_NOLOCKS
//   grace, reclaim = false            NLM4_DENIED_GRACE_PERIOD
//   reclaim = true outside grace      NLM4_DENIED_GRACE_PERIOD (as knfsd: nothing to reclaim)
// NM_LOCK is the same request from a client that is not monitored by NSM.
#include "nfs/nlm/mirror.h"
#include "nfs/nlm/request.h"

namespace nfsrdmad::nfs::nlm {

rpc::Outcome proc_lock(Request& rq) {
    x::nlm4_lockargs a;
    if (!rq.decode(a)) return rpc::Outcome::garbage();
    x::nlm4_res res;
    res.cookie = a.cookie;
    auto answer = [&](x::nlm4_stats s) {
        res.stat.stat = s;
        return rq.reply(res);
    };
    if (rq.svc.in_grace() != a.reclaim) return answer(x::NLM4_DENIED_GRACE_PERIOD);
    File f;
    if (auto s = rq.file(a.alock.fh, f); s != x::NLM4_GRANTED) return answer(s);
    vs::StateOwner owner;
    if (auto s = rq.owner(a.alock, owner); s != x::NLM4_GRANTED) return answer(s);
    CallMirror m(rq.svc, f);
    // The waiter's cookie: the owner's svid, for the log and a later GRANTED callback.
    std::optional<uint64_t> wait;
    if (a.block) wait = static_cast<uint32_t>(a.alock.svid);
    auto r = rq.svc.locks.lock(f.key, owner, lock_of(a.alock, a.exclusive), wait, m.get());
    if (!r) return answer(stat_of_errno(r.error()));
    if (!r->denied) return answer(x::NLM4_GRANTED);
    if (!a.block) return answer(x::NLM4_DENIED);
    return answer(r->queued ? x::NLM4_BLOCKED : x::NLM4_DENIED_NOLOCKS);
}

}  // namespace nfsrdmad::nfs::nlm
