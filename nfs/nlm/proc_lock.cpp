// NLMPROC4_LOCK and NLMPROC4_NM_LOCK (XNFS NLM v4): take a byte-range lock in the table
// NFSv4.1 shares.
//
//   granted                           NLM4_GRANTED
//   conflict, block = false           NLM4_DENIED
//   conflict, block = true            NLM4_BLOCKED: a waiter is queued (lock_table.h) and
//                                     the request kept (blocked.h); once the lock is free
//                                     it is taken for the client and the client is called
//                                     back with NLM4_GRANTED (granted.cpp)
//   a bound (locks, waiters, hosts,   NLM4_DENIED_NOLOCKS
//   blocked requests)
//   grace, reclaim = false            NLM4_DENIED_GRACE_PERIOD
//   reclaim = true outside grace      NLM4_DENIED_GRACE_PERIOD (as knfsd: nothing to reclaim)
//   an NFSv4.1 delegation of the      NLM4_DENIED_GRACE_PERIOD while it is recalled; the
//   file in the way                   call is run again a few times first, for up to a
//                                     second (Request::held_up), as the Linux client
//                                     asks again only 5 s later
// NM_LOCK is the same request from a client that is not monitored by NSM.
#include "nfs/nlm/mirror.h"
#include "nfs/nlm/request.h"

namespace nfsrdmad::nfs::nlm {

namespace {

// The request kept while it waits (blocked.h), with what GRANTED will need.
Blocked blocked_of(const Request& rq, const x::nlm4_lockargs& a, const LockTarget& t,
                   const vs::Lock& want) {
    Blocked b;
    if (const rpc::Peer* p = rq.ctx.header.peer) {
        b.peer = p->addr;
        b.peer_len = p->len;
    }
    b.file = t.file.key;
    b.owner = t.owner;
    b.lock = want;
    b.cookie.assign(a.cookie.begin(), a.cookie.end());
    b.caller_name = a.alock.caller_name;
    b.oh.assign(a.alock.oh.begin(), a.alock.oh.end());
    b.fh.assign(a.alock.fh.begin(), a.alock.fh.end());
    b.svid = a.alock.svid;
    b.offset = a.alock.l_offset;
    b.length = a.alock.l_len;
    b.exclusive = a.exclusive;
    return b;
}

}  // namespace

rpc::Outcome proc_lock(Request& rq) {
    x::nlm4_lockargs a;
    if (!rq.decode(a)) return rpc::Outcome::garbage();
    auto answer = [&](x::nlm4_stats s) { return rq.answer(a.cookie, s); };
    // The arguments first (STALE_FH, FBIG), then grace, as knfsd (nlm4svc_retrieve_args,
    // then nlmsvc_lock).
    LockTarget t;
    if (auto s = rq.target(a.alock, t); s != x::NLM4_GRANTED) return answer(s);
    if (rq.svc.in_grace() != a.reclaim) return answer(x::NLM4_DENIED_GRACE_PERIOD);
    if (rq.delegated(t.file, a.exclusive)) return rq.held_up(answer(x::NLM4_DENIED_GRACE_PERIOD));
    // XNFS: LOCK is monitored (the host is notified if this server restarts), NM_LOCK not.
    const bool monitored = rq.ctx.header.proc == x::NLMPROC4_LOCK;
    if (monitored && !a.reclaim)
        rq.svc.check_state(a.alock.caller_name,
                           rq.ctx.header.peer ? peer_host(*rq.ctx.header.peer) : "", a.state);
    CallMirror m(rq.svc, t.file);
    const vs::Lock want = lock_of(a.alock, a.exclusive);
    // A blocking request is kept so that it can be granted and the client told; its
    // record's id is the waiter's cookie in the table.
    std::optional<uint64_t> wait;
    if (a.block) wait = rq.svc.blocked.put(blocked_of(rq, a, t, want));
    auto r = rq.svc.lock(t.file.key, t.owner, want, wait, m.get());  // courtesy clients reaped
    if (!r) {
        if (wait) rq.svc.blocked.drop(t.file.key, t.owner, want);
        return answer(stat_of_errno(r.error()));
    }
    if (!r->woken.empty()) rq.svc.wake(std::move(r->woken));  // a downgrade freed bytes
    if (!r->denied) {
        // Granted (or held already, granted by us meanwhile): no request waits any more,
        // and a GRANTED still in flight is settled: the client knows it holds the lock.
        rq.svc.blocked.drop(t.file.key, t.owner, want);
        (void)rq.svc.settle_grant(BlockedTable::key(t.file.key, t.owner, want));
        if (monitored) rq.svc.monitor(rq.ctx.header.peer, a.alock.caller_name, a.state);
        return answer(x::NLM4_GRANTED);
    }
    if (!a.block) return answer(x::NLM4_DENIED);
    if (r->queued) {
        if (monitored) rq.svc.monitor(rq.ctx.header.peer, a.alock.caller_name, a.state);
        return answer(x::NLM4_BLOCKED);
    }
    if (wait) rq.svc.blocked.drop(t.file.key, t.owner, want);
    return answer(x::NLM4_DENIED_NOLOCKS);
}

}  // namespace nfsrdmad::nfs::nlm
