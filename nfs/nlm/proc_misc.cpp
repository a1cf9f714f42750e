// The NLM v4 procedures that take no lock (XNFS NLM v4):
//   GRANTED       a server's callback to a client whose blocked LOCK it granted. This
//                 daemon is a server only and never asked another for a lock, so nothing
//                 it is told of is pending: NLM4_DENIED.
//   FREE_ALL      everything the named host holds (locks, waiters, shares) goes: its
//                 statd saw it reboot. No reply body.
//   the *_RES     results of _MSG calls: this server sends only GRANTED (synchronous),
//                 so they are decoded and dropped.
#include <spdlog/spdlog.h>

#include "nfs/common/log_text.h"
#include "nfs/nlm/request.h"

namespace nfsrdmad::nfs::nlm {

rpc::Outcome proc_granted(Request& rq) {
    x::nlm4_testargs a;
    if (!rq.decode(a)) return rpc::Outcome::garbage();
    x::nlm4_res res;
    res.cookie = a.cookie;
    res.stat.stat = x::NLM4_DENIED;
    return rq.reply(res);
}

rpc::Outcome proc_free_all(Request& rq) {
    x::nlm4_notify a;
    if (!rq.decode(a)) return rpc::Outcome::garbage();
    auto woken = rq.svc.free_all(a.name);
    spdlog::info("nlm: FREE_ALL for host '{}' ({} waiter(s) may proceed)", log_text(a.name),
                 woken.size());
    rq.svc.wake(std::move(woken));
    return rpc::Outcome::ok();
}

rpc::Outcome proc_result(Request& rq) {
    if (rq.ctx.header.proc == x::NLMPROC4_TEST_RES) {
        x::nlm4_testres a;
        return rq.decode(a) ? rpc::Outcome::ok() : rpc::Outcome::garbage();
    }
    x::nlm4_res a;
    return rq.decode(a) ? rpc::Outcome::ok() : rpc::Outcome::garbage();
}

}  // namespace nfsrdmad::nfs::nlm
