// The asynchronous procedures (XNFS NLM v4): TEST_MSG, LOCK_MSG, CANCEL_MSG, UNLOCK_MSG
// and GRANTED_MSG do what TEST, LOCK, CANCEL, UNLOCK and GRANTED do, but the result goes
// back as a call of the matching _RES procedure to the caller's NLM (through its
// rpcbind, by the callback sender), and the _MSG call itself gets an empty reply.
// Undecodable arguments are GARBAGE_ARGS to the _MSG call, and nothing is sent back.
#include <spdlog/spdlog.h>

#include "nfs/nlm/request.h"

namespace nfsrdmad::nfs::nlm {

namespace {

// NLM allocates no payload buffers.
class NoPayloads final : public rpc::PayloadAllocator {
  public:
    std::unique_ptr<rpc::PayloadBuffer> allocate(size_t) override { return nullptr; }
};

struct Async {
    uint32_t msg, sync, res;
    rpc::Outcome (*run)(Request&);
};

constexpr Async kAsync[] = {
    {x::NLMPROC4_TEST_MSG, x::NLMPROC4_TEST, x::NLMPROC4_TEST_RES, proc_test},
    {x::NLMPROC4_LOCK_MSG, x::NLMPROC4_LOCK, x::NLMPROC4_LOCK_RES, proc_lock},
    {x::NLMPROC4_CANCEL_MSG, x::NLMPROC4_CANCEL, x::NLMPROC4_CANCEL_RES, proc_cancel},
    {x::NLMPROC4_UNLOCK_MSG, x::NLMPROC4_UNLOCK, x::NLMPROC4_UNLOCK_RES, proc_unlock},
    {x::NLMPROC4_GRANTED_MSG, x::NLMPROC4_GRANTED, x::NLMPROC4_GRANTED_RES, proc_granted},
};

}  // namespace

rpc::Outcome proc_msg(Request& rq) {
    const Async* a = nullptr;
    for (const Async& c : kAsync)
        if (c.msg == rq.ctx.header.proc) a = &c;
    if (!a) return rpc::Outcome::system_error();
    // The synchronous procedure, its result encoded aside.
    rpc::CallHeader h = rq.ctx.header;
    h.proc = a->sync;
    rpc::OutgoingCall res;
    xdr::Encoder e(res.args);
    NoPayloads none;
    std::vector<std::unique_ptr<rpc::PayloadBuffer>> payloads;
    rpc::CallContext sub(h, rq.ctx.args, e, none, payloads);
    Request srq(sub, rq.svc);
    rpc::Outcome o = a->run(srq);
    // A _MSG call is not put off (its result is a call of ours, not a reply): a wait-and-
    // retry answer (rpc::Outcome::Later) goes back in the _RES as it is.
    if (o.kind != rpc::Outcome::Success && o.kind != rpc::Outcome::Later) return o;
    rpc::CallbackSender* cb = rq.svc.callbacks();
    if (!cb || !h.peer) {
        spdlog::warn("nlm: no way to send a _RES: procedure {} answered nowhere", a->msg);
        return rpc::Outcome::ok();
    }
    res.peer = h.peer->addr;
    res.peer_len = h.peer->len;
    res.prog = x::NLM_PROG;
    res.vers = x::NLM4_VERS;
    res.proc = a->res;
    const uint32_t proc = a->res;
    if (!cb->call(std::move(res), [proc](rpc::CallbackResult r) {
            if (!r.ok) spdlog::info("nlm: result (procedure {}) not delivered: {}", proc, r.error);
        }))
        spdlog::warn("nlm: too many callbacks in flight: procedure {} not sent", proc);
    return rpc::Outcome::ok();
}

}  // namespace nfsrdmad::nfs::nlm
