// NLMPROC4_TEST (XNFS NLM v4): would this lock be granted? NLM4_GRANTED, or NLM4_DENIED
// with the holder of a conflicting lock (an NFSv4.1 owner's or a local process's too:
// the table and its mirror are shared). Changes nothing, except that an NFSv4.1 client
// whose lease has expired and whose lock is in the way is reaped (as LOCKT does).
#include "nfs/nlm/mirror.h"
#include "nfs/nlm/request.h"

namespace nfsrdmad::nfs::nlm {

rpc::Outcome proc_test(Request& rq) {
    x::nlm4_testargs a;
    if (!rq.decode(a)) return rpc::Outcome::garbage();
    x::nlm4_testres res;
    res.cookie = a.cookie;
    auto answer = [&](x::nlm4_stats s) {
        res.stat.set_stat(s);
        return rq.reply(res);
    };
    // The arguments first (STALE_FH, FBIG), then grace, as knfsd (nlm4svc_retrieve_args,
    // then nlmsvc_testlock): during grace the table is not yet what it will be once
    // clients have reclaimed.
    LockTarget t;
    if (auto s = rq.target(a.alock, t, /*known_host=*/true); s != x::NLM4_GRANTED) return answer(s);
    if (rq.svc.in_grace()) return answer(x::NLM4_DENIED_GRACE_PERIOD);
    if (rq.delegated(t.file, a.exclusive)) return rq.held_up(answer(x::NLM4_DENIED_GRACE_PERIOD));
    CallMirror m(rq.svc, t.file);
    auto r = rq.svc.test(t.file.key, t.owner, lock_of(a.alock, a.exclusive), m.get());
    if (!r) return answer(stat_of_errno(r.error()));
    if (!*r) return answer(x::NLM4_GRANTED);
    const vs::Conflict conflict = **r;  // holder_of's oh points into it
    res.stat.set_stat(x::NLM4_DENIED);
    res.stat.holder() = holder_of(conflict);
    return rq.reply(res);
}

}  // namespace nfsrdmad::nfs::nlm
