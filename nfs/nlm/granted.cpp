// Blocked locks granted (XNFS NLM v4, NLM4_GRANTED): when an unlock of either protocol
// frees what an NLM waiter waits for, the lock is taken for the waiting owner and the
// client is called back at the address its LOCK came from (a TCP callback through its
// rpcbind, transport/tcp/callback_client.h). Nothing here waits: the retry is a table
// operation, the callback an event whose reply comes back later on a worker.
//
//   the waiter is still denied           queued again (its place kept by the table)
//   granted, the client answers GRANTED  done: it holds the lock
//   the client answers otherwise         the grant is undone (it no longer waits; as knfsd
//                                        does): what the owner held there before stays (an
//                                        upgrade falls back to its read lock), the rest is
//                                        unlocked and whoever waits next is woken; unless the
//                                        owner's re-send found the lock meanwhile: then the
//                                        client holds it and knows it
//   the GRANTED cannot be delivered      the lock stays for the owner's re-send (its lockd
//                                        asks again within 30 s); a CANCEL releases it
#include <spdlog/spdlog.h>

#include <algorithm>

#include "nfs/nlm/services.h"
#include "nfs/vfs/state/ofd_mirror.h"
#include "xdr/nlm_prot.h"

namespace nfsrdmad::nfs::nlm {

namespace x = xdr::nlm;

namespace {

std::span<const uint8_t> bytes(const std::string& s) {
    return {reinterpret_cast<const uint8_t*>(s.data()), s.size()};
}

// The owner's locks within `range`, cut to it.
vs::OwnerLocks within(const vs::OwnerLocks& held, const vs::ByteRange& range) {
    vs::OwnerLocks out;
    for (const vs::Lock& l : held) {
        if (!l.range.overlaps(range)) continue;
        vs::Lock c = l;
        c.range.first = std::max(l.range.first, range.first);
        c.range.last = std::min(l.range.last, range.last);
        out.push_back(c);
    }
    return out;
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
    // What a refused GRANTED must give back (an upgrade's read locks).
    vs::OwnerLocks before = within(locks.locks_of(req.file, req.owner), req.lock.range);
    auto r = locks.lock(req.file, req.owner, req.lock, req.id, m ? &*m : nullptr);
    if (r && r->denied && r->queued) return;  // waits on, its record in place
    (void)blocked.take(req.id);
    if (!r || r->denied) return;  // the client's re-send will ask again
    send_granted(req, std::move(before));
}

std::optional<vs::OwnerLocks> Services::settle_grant(const std::string& key) {
    std::lock_guard l(grants_mu_);
    auto it = pending_grants_.find(key);
    if (it == pending_grants_.end()) return std::nullopt;
    vs::OwnerLocks before = std::move(it->second.before);
    pending_grants_.erase(it);
    return before;
}

void Services::send_granted(const Blocked& b, vs::OwnerLocks before) {
    {
        std::lock_guard l(grants_mu_);
        pending_grants_[BlockedTable::key(b.file, b.owner, b.lock)] =
            PendingGrant{b.owner.client(), std::move(before)};
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
    auto before = settle_grant(key);
    if (!before || accepted) return;
    spdlog::info("nlm: GRANTED refused by the client (it no longer waits): the grant is undone");
    release(b, *before);
}

void Services::release(const Blocked& b, const vs::OwnerLocks& before) {
    std::optional<vfs::Node> node;
    if (auto ref = exports->snapshot()->find_by_handle(b.fh))
        if (auto n = vfs::ExportTable::open(*ref)) node = std::move(*n);
    if (!node) {
        // No descriptor to mirror the restored types with: all of the owner's locks on
        // the file go.
        wake(locks.release_owner(b.file, b.owner));
        return;
    }
    undo_grant(*node, b.file, b.owner, b.lock, before);
}

void Services::undo_grant(const vfs::Node& node, const vs::FileKey& file,
                          const vs::StateOwner& owner, const vs::Lock& lock,
                          const vs::OwnerLocks& held_before) {
    // Only bytes the owner still holds are given back: an UNLOCK that came after the grant
    // (the client unlocked, then refused or cancelled) leaves nothing to restore.
    vs::OwnerLocks before;
    const vs::OwnerLocks now = within(locks.locks_of(file, owner), lock.range);
    for (const vs::Lock& b : held_before)
        for (const vs::Lock& n : now)
            if (b.range.overlaps(n.range))
                before.push_back(vs::Lock{
                    {std::max(b.range.first, n.range.first), std::min(b.range.last, n.range.last)},
                    b.type});
    std::optional<vs::OfdMirror> m;
    if (options.lock_files) m.emplace(node.fd.get(), options.lock_files);
    std::vector<vs::Waiter> woken;
    auto add = [&woken](std::vector<vs::Waiter> w) {
        woken.insert(woken.end(), std::make_move_iterator(w.begin()),
                     std::make_move_iterator(w.end()));
    };
    // First the bytes held before get their earlier type back: a downgrade, which cannot
    // be denied; unlocking them first would let another owner in between.
    for (const vs::Lock& p : before)
        if (auto r = locks.lock(file, owner, p, std::nullopt, m ? &*m : nullptr); r)
            add(std::move(r->woken));
    // Then the bytes of the range that were not held are unlocked (the gaps of `before`,
    // sorted and disjoint).
    auto unlock = [&](uint64_t first, uint64_t last) {
        if (auto u = locks.unlock(file, owner, vs::ByteRange{first, last})) add(std::move(*u));
    };
    uint64_t pos = lock.range.first;
    bool done = false;
    for (const vs::Lock& p : before) {
        if (p.range.first > pos) unlock(pos, p.range.first - 1);
        if (p.range.last >= lock.range.last) {
            done = true;
            break;
        }
        pos = p.range.last + 1;
    }
    if (!done && pos <= lock.range.last) unlock(pos, lock.range.last);
    wake(std::move(woken));
}

void Services::cancel(const vfs::Node& node, const vs::FileKey& file, const vs::StateOwner& owner,
                      const vs::Lock& lock) {
    (void)locks.cancel_wait(file, owner, lock);
    blocked.drop(file, owner, lock);
    // Granted while the client gave up (its GRANTED not delivered or not answered yet).
    if (auto before = settle_grant(BlockedTable::key(file, owner, lock)))
        undo_grant(node, file, owner, lock, *before);
}

}  // namespace nfsrdmad::nfs::nlm
