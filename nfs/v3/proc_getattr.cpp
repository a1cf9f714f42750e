// NFSPROC3_GETATTR (RFC 1813 §3.3.1).
#include "nfs/v3/request.h"
#include "nfs/vfs/attrs.h"

namespace nfsrdmad::nfs::v3 {

rpc::Outcome proc_getattr(Request& rq) {
    x::GETATTR3args a;
    if (!rq.decode(a)) return rpc::Outcome::garbage();
    x::GETATTR3res res;
    Target t;
    // The attributes resolving the handle read are the reply's: nothing ran in between.
    struct statx st {};
    res.set_status(rq.resolve(a.object, t, &st));
    // A write delegation's holder may have writes the file does not show yet: it is asked
    // for its size (RFC 8881 §10.4.3, CB_GETATTR), and the call runs again once the answer
    // may be in (Request::held_up; JUKEBOX after a while: no worker waits on a client).
    DelegationBreaker::HeldAttrs held;
    if (res.status() == x::NFS3_OK && rq.any_delegations()) {
        // Nowait, a write delegation granted since resolve() looked: a worker asks.
        if (rq.ctx.nowait && rq.svc.delegations->write_delegated(t.node.handle)) {
            rq.block();
            return rq.reply(res);
        }
        held = rq.svc.delegations->held_attrs(t.node.handle);
        if (held.delay) res.set_status(rq.held_up());
    }
    if (res.status() == x::NFS3_OK) {
        if (held.size) st.stx_size = *held.size;
        res.resok().obj_attributes = to_fattr3(st, t.node.fsid());
    }
    return rq.reply(res);
}

}  // namespace nfsrdmad::nfs::v3
