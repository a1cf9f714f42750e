// Blocked locks granted (XNFS NLM v4, NLM4_GRANTED): when an unlock of either protocol
// frees what an NLM waiter waits for, the lock is taken for the waiting owner and the
// client is called back at the address its LOCK came from (a TCP callback through its
// rpcbind, transport/tcp/callback_client.h). Nothing here waits: the retry is a table
// operation, the callback an event whose reply comes back later on a worker.
//
//   the waiter is still denied           queued again (its place kept by the table)
//   granted, the client answers GRANTED  done: it holds the lock
//   the client answers otherwise, or     the lock is released again (the client no longer
//   cannot be reached                    waits; as knfsd does when a GRANTED is refused)
//                                        and whoever waits next is woken
#include <spdlog/spdlog.h>

#include "nfs/nlm/services.h"
#include "nfs/vfs/state/ofd_mirror.h"
#include "xdr/nlm_prot.h"

namespace nfsrdmad::nfs::nlm {

namespace x = xdr::nlm;

namespace {

std::span<const uint8_t> bytes(const std::string& s) {
    return {reinterpret_cast<const uint8_t*>(s.data()), s.size()};
}

}  // namespace

void Services::wake(std::vector<vs::Waiter> woken) {
    for (const vs::Waiter& w : woken) {
        if (w.owner.client().protocol != vs::Protocol::Nlm) continue;
        if (auto b = blocked.take(w.cookie)) retry(std::move(*b));
    }
}

void Services::retry(Blocked b) {
    auto ref = exports->snapshot()->find_by_handle(b.fh);
    if (!ref) return;  // the export went away: the client's re-send will hear of it
    auto node = vfs::ExportTable::open(*ref);
    if (!node) return;
    std::optional<vs::OfdMirror> m;
    if (options.lock_files) m.emplace(node->fd.get(), options.lock_files);
    auto r = locks.lock(b.file, b.owner, b.lock, b.id, m ? &*m : nullptr);
    if (!r) return;
    if (r->denied) {
        if (r->queued) blocked.put_back(std::move(b));
        return;
    }
    send_granted(b);
}

void Services::send_granted(const Blocked& b) {
    rpc::CallbackSender* cb = callbacks_.load();
    if (!cb) return;
    x::nlm4_testargs a;
    a.cookie = bytes(b.cookie);
    a.exclusive = b.exclusive;
    a.alock.caller_name = b.caller_name;
    a.alock.fh = b.fh;
    a.alock.oh = bytes(b.oh);
    a.alock.svid = b.svid;
    a.alock.l_offset = b.offset;
    a.alock.l_len = b.length;
    rpc::OutgoingCall call;
    call.peer = b.peer;
    call.peer_len = b.peer_len;
    call.prog = x::NLM_PROG;
    call.vers = x::NLM4_VERS;
    call.proc = x::NLMPROC4_GRANTED;
    xdr::Encoder e(call.args);
    x::xdr_encode(e, a);
    // The lock is held from now on; the reply decides whether it stays (granted_reply).
    if (!cb->call(std::move(call), [this, b](rpc::CallbackResult r) { granted_reply(b, r); }))
        spdlog::warn(
            "nlm: too many callbacks in flight: GRANTED not sent (the client's re-send "
            "will find its lock)");
}

void Services::granted_reply(const Blocked& b, const rpc::CallbackResult& r) {
    x::nlm4_res res;
    if (r.ok) {
        xdr::Decoder d(r.results);
        if (x::xdr_decode(d, res) && res.stat.stat == x::NLM4_GRANTED) return;
    }
    spdlog::info("nlm: GRANTED {}: the lock is released again",
                 r.ok ? std::string("refused by the client") : "not delivered (" + r.error + ")");
    std::optional<vfs::Node> node;
    if (auto ref = exports->snapshot()->find_by_handle(b.fh))
        if (auto n = vfs::ExportTable::open(*ref)) node = std::move(*n);
    if (!node) {
        // No descriptor to mirror the unlock with: all of the owner's locks on the file go
        // (its OFD description closes with them).
        wake(locks.release_owner(b.file, b.owner));
        return;
    }
    std::optional<vs::OfdMirror> m;
    if (options.lock_files) m.emplace(node->fd.get(), options.lock_files);
    if (auto u = locks.unlock(b.file, b.owner, b.lock.range, m ? &*m : nullptr))
        wake(std::move(*u));
}

}  // namespace nfsrdmad::nfs::nlm
