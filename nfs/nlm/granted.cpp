// Blocked locks granted (XNFS NLM v4, NLM4_GRANTED): when an unlock of either protocol
// frees what an NLM waiter waits for, the lock is taken for the waiting owner and the
// client is called back at the address its LOCK came from (a TCP callback through its
// rpcbind, transport/tcp/callback_client.h). Nothing here waits: the retry is a table
// operation, the callback an event whose reply comes back later on a worker.
//
//   the waiter is still denied           queued again (its place kept by the table)
//   granted, the client answers GRANTED  done: it holds the lock
//   the client answers otherwise         the lock is released again (it no longer waits; as
//                                        knfsd does) and whoever waits next is woken, unless
//                                        the owner's re-send found the lock meanwhile: then
//                                        the client holds it and knows it
//   the GRANTED cannot be delivered      the lock stays for the owner's re-send (its lockd
//                                        asks again within 30 s); a CANCEL releases it
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
    // The record goes back before the waiter can: an unlock racing in right after lock()
    // queued it again must find it.
    const Blocked req = b;
    blocked.put_back(std::move(b));
    auto r = locks.lock(req.file, req.owner, req.lock, req.id, m ? &*m : nullptr);
    if (r && r->denied && r->queued) return;  // waits on, its record in place
    (void)blocked.take(req.id);
    if (!r || r->denied) return;  // the client's re-send will ask again
    send_granted(req);
}

bool Services::settle_grant(const std::string& key) {
    std::lock_guard l(grants_mu_);
    return pending_grants_.erase(key) > 0;
}

void Services::send_granted(const Blocked& b) {
    {
        std::lock_guard l(grants_mu_);
        pending_grants_[BlockedTable::key(b.file, b.owner, b.lock)] = b.owner.client();
    }
    rpc::CallbackSender* cb = callbacks_.load();
    if (!cb) return;  // pending until the owner's re-send (or CANCEL) settles it
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
    if (!cb->call(std::move(call), [this, b](rpc::CallbackResult r) { granted_reply(b, r); }))
        spdlog::warn(
            "nlm: too many callbacks in flight: GRANTED not sent (the client's re-send "
            "will find its lock)");
}

void Services::granted_reply(const Blocked& b, const rpc::CallbackResult& r) {
    if (!r.ok) {
        // Not delivered: the lock stays, pending; the owner's re-send finds it (and settles
        // it), a CANCEL releases it, the host's reboot or FREE_ALL frees it.
        spdlog::info("nlm: GRANTED not delivered ({}): the client's re-send will find its lock",
                     r.error);
        return;
    }
    const std::string key = BlockedTable::key(b.file, b.owner, b.lock);
    x::nlm4_res res;
    xdr::Decoder d(r.results);
    const bool accepted = x::xdr_decode(d, res) && res.stat.stat == x::NLM4_GRANTED;
    // Settled by a re-send meanwhile: the client holds the lock and knows it, whatever it
    // answered about a block it no longer had.
    if (!settle_grant(key) || accepted) return;
    spdlog::info("nlm: GRANTED refused by the client (it no longer waits): the lock is released");
    release(b);
}

void Services::release(const Blocked& b) {
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

void Services::cancel(const vfs::Node& node, const vs::FileKey& file, const vs::StateOwner& owner,
                      const vs::Lock& lock) {
    (void)locks.cancel_wait(file, owner, lock);
    blocked.drop(file, owner, lock);
    if (!settle_grant(BlockedTable::key(file, owner, lock))) return;
    // Granted while the client gave up (its GRANTED not delivered or not answered yet).
    std::optional<vs::OfdMirror> m;
    if (options.lock_files) m.emplace(node.fd.get(), options.lock_files);
    if (auto u = locks.unlock(file, owner, lock.range, m ? &*m : nullptr)) wake(std::move(*u));
}

}  // namespace nfsrdmad::nfs::nlm
