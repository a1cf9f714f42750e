// Delegations as Services hands them out and takes them back (RFC 8881 §10.2, §10.4):
// the offer on OPEN, the conflict check every other access makes, CB_RECALL over the
// client's callback path (callback/path.h), CB_GETATTR for another party's GETATTR of a
// write-delegated file (§10.4.3), CB_RECALL_ANY when the table fills up (§20.6),
// DELEGRETURN, and revocation when a recall is not answered by a return within a lease
// (§10.4.6, §8.3: "the server may revoke").
#include <spdlog/spdlog.h>

#include <algorithm>

#include "nfs/v4/attrs/change.h"
#include "nfs/v4/lock_state.h"
#include "nfs/v4/request.h"
#include "nfs/v4/services.h"
#include "nfs/vfs/io.h"

namespace nfsrdmad::nfs::v4 {

namespace {

// A recall the client did not take (no reply, or an error such as NFS4ERR_BAD_STATEID
// when the CB_RECALL overtook the OPEN reply that granted it) is sent again after this,
// at most kRecallTries times in all, until the delegation is returned or revoked.
constexpr std::chrono::seconds kRecallRetry{2};
constexpr uint32_t kRecallTries = 8;
// Delegations the sweep asks the file system about each second (a link count each): all
// of a full default table (65 536) in about 17 minutes.
constexpr size_t kRemovedChecks = 64;
// A CB_GETATTR answer serves the GETATTRs of this long (the Linux client retries an
// NFSv4.1 DELAY within 100 ms, an NFSv3 JUKEBOX after 5 s); later ones ask again.
constexpr std::chrono::seconds kAttrsFresh{10};
// CB_RECALL_ANY: sent when the table is three quarters full, to each of the clients holding
// the most until half would be left, each at most once in this long.
constexpr std::chrono::seconds kRecallAnyEvery{10};

}  // namespace

bool Services::may_offer_delegation(state::ClientId client, uint32_t share_access) const {
    if (!options.delegations) return false;
    const uint32_t want = share_access & x4::OPEN4_SHARE_ACCESS_WANT_DELEG_MASK;
    if (want == x4::OPEN4_SHARE_ACCESS_WANT_NO_DELEG || want == x4::OPEN4_SHARE_ACCESS_WANT_CANCEL)
        return false;
    // A recall must be able to reach the client (§10.2.1: "the server will not grant a
    // delegation" without a callback path).
    return callbacks.state(client) == CallbackPaths::State::Up;
}

std::optional<Delegation> Services::offer_delegation(const Open& open, const Target& file,
                                                     uint32_t share_access) {
    if (!may_offer_delegation(open.client, share_access)) return std::nullopt;
    const uint32_t want = share_access & x4::OPEN4_SHARE_ACCESS_WANT_DELEG_MASK;
    const uint32_t both = x4::OPEN4_SHARE_ACCESS_BOTH;
    bool write = false;
    if ((open.access & both) == both && options.write_delegations && open.fd && open.fd->writable)
        write = want != x4::OPEN4_SHARE_ACCESS_WANT_READ_DELEG;
    else if (!(open.access & x4::OPEN4_SHARE_ACCESS_READ))
        return std::nullopt;  // a write-only open: nothing to cache for reading
    if (want == x4::OPEN4_SHARE_ACCESS_WANT_WRITE_DELEG && !write) return std::nullopt;
    return grant_delegation(open, file, write, false);
}

std::optional<Delegation> Services::reclaim_delegation(const Open& open, const Target& file,
                                                       x4::open_delegation_type4 type) {
    // §10.2.1, §18.16.3: after a restart the client reclaims, with its open, the delegation
    // it held (CLAIM_PREVIOUS' delegate_type). A write delegation only where this server
    // grants them at all; neither where the open cannot carry it.
    if (!options.delegations) return std::nullopt;
    bool write = false;
    if (type == x4::OPEN_DELEGATE_WRITE) {
        const uint32_t both = x4::OPEN4_SHARE_ACCESS_BOTH;
        if (!options.write_delegations || (open.access & both) != both || !open.fd ||
            !open.fd->writable)
            return std::nullopt;
        write = true;
    } else if (type != x4::OPEN_DELEGATE_READ || !(open.access & x4::OPEN4_SHARE_ACCESS_READ)) {
        return std::nullopt;
    }
    auto d = grant_delegation(open, file, write, true);
    // The backchannel of the new session is not known to work: granted, and recalled at
    // once (the `recall` flag of the result, §18.16.3), so that it comes back through the
    // client's own DELEGRETURN and goes, like any recall, a lease later if it does not.
    const auto path = callbacks.state(open.client);
    if (d && path != CallbackPaths::State::Up && path != CallbackPaths::State::Probing)
        if (auto r = delegations.recall(d->stateid.other, clock.now())) d = std::move(r);
    return d;
}

std::optional<Delegation> Services::grant_delegation(const Open& open, const Target& file,
                                                     bool write, bool reclaim) {
    // The file's other opens, this client's other owners' too (as knfsd's leases see
    // them): a writer stops a read delegation, any other open a write one, a deny either
    // (the holder would open locally what they deny).
    auto [access, deny, others] = opens.share_except(open.file, open.stateid.other);
    if (deny || (write ? others != 0 : (access & x4::OPEN4_SHARE_ACCESS_WRITE) != 0))
        return std::nullopt;
    // A write delegation of the file is out (the holder's own OPEN again): none beside it,
    // and not the lock probe below, which would make it give up its lease.
    if (vfs::leased_file(open.file)) return std::nullopt;
    // A holder takes its byte-range locks locally (the Linux client caches them under a
    // delegation): none while anyone else holds a lock on the file, here, through NLM or
    // in a local process (Options::lock_files).
    vfs::state::FileKey key;
    if (lock_file_key(file, key) != x4::NFS4_OK) return std::nullopt;
    static const uint8_t kProbe[] = {0xde, 0x1e, 0x9a, 0x7e};  // no client's lock owner
    auto prober = vfs::state::StateOwner::make({vfs::state::Protocol::Nfs4, open.client}, kProbe);
    if (!prober) return std::nullopt;
    auto held = test_lock_range(file.node, key, *prober,
                                vfs::state::Lock{vfs::state::ByteRange{0, vfs::state::kToEof},
                                                 vfs::state::LockType::Write});
    if (!held || *held) return std::nullopt;
    const state::Time now = clock.now();
    if (!delegations.may_grant(open.file, open.client, write, now)) return std::nullopt;
    // A delegation holds a file lease, so that a local process that opens the file in a
    // way the delegation does not allow recalls it (vfs/lease.h): a writer a read one,
    // anyone a write one. The kernel refuses a read lease while the file is open for
    // writing, a write lease while any other description of it is open: the descriptor
    // cache's one for the file is let go first (opens keep their own).
    // A read delegation's open must not write (a read-write open, or the cache's writer
    // serving a read): the kernel refuses a read lease beside it.
    if (!write && open.fd->writable) return std::nullopt;
    auto take = [&] {
        return write ? vfs::Lease::take_write(open.fd) : vfs::Lease::take_read(*open.fd);
    };
    auto lease = take();
    if (!lease && lease.error() == EAGAIN) {
        files.forget(open.file);
        lease = take();
    }
    if (!lease) {
        if (lease.error() != EAGAIN && !lease_warned_.exchange(true))
            spdlog::warn(
                "nfsv4.1: no delegations: a file lease is refused ({}); the daemon needs "
                "CAP_LEASE and a file system with leases",
                vfs::describe_error(lease.error()));
        return std::nullopt;
    }
    auto sid = clients.new_stateid(open.client, state::StateKind::Delegation);
    if (sid.status != x4::NFS4_OK) return std::nullopt;
    // Its file watched, so that a local chmod, link, unlink or rename recalls it too
    // (vfs/file_watch.h). A file the watch cannot mark (a file system without an fsid, the
    // marks' limit) is delegated all the same, as before there was a watch: warned once.
    std::shared_ptr<vfs::FileWatch::Mark> mark;
    if (options.watch) {
        auto m = options.watch->watch(open.fd, /*writes=*/!write);
        if (m)
            mark = std::move(*m);
        else if (!watch_warned_.exchange(true))
            spdlog::warn(
                "nfsv4.1: a delegated file cannot be watched ({}): a local chmod, link, unlink "
                "or rename of such a file on the server recalls nothing",
                vfs::describe_error(m.error()));
    }
    Delegation d;
    d.client = open.client;
    d.file = open.file;
    d.write = write;
    d.stateid = sid.stateid;
    d.fd = open.fd;
    d.who = open.who;
    d.lease = std::move(*lease);
    // Calls put off while it is out run again once it is gone (Options::held_calls_freed),
    // when its lease is let go: it leaves the table first (the calls' check), and the lease
    // then, at once (the opens of NFSv3 WRITE and NFSv4.1 OPEN).
    d.lease->on_release(options.held_calls_freed);
    d.watch = std::move(mark);
    // §10.4.3: the change attribute at the grant ("sc"), what the holder answers
    // CB_GETATTR with while it holds no changes (a reclaim learns it from the holder).
    if (write && !reclaim)
        if (auto st = vfs::getattr(*open.fd)) d.change = change_of(*st);
    delegations.put(d);
    ++delegation_stats.granted;
    // A break that came between the lease and put() found no delegation to recall.
    if (d.lease->breaking()) lease_broken(d.lease->fd());
    // The grant that fills the table to three quarters sends CB_RECALL_ANY now, not at the
    // next sweep (one lease away when no delegation was held at the last one). Only that
    // one: recall_any() scans the table, the sweep (every second while any is held) does
    // the rest.
    const size_t max = delegations.max();
    if (delegations.size() == max - max / 4) recall_any(now);
    return d;
}

bool Services::delegation_conflict(const vfs::FileHandle& file, state::ClientId by, bool write) {
    if (delegations.empty()) return false;
    auto c = delegations.conflict(file, by, write, clock.now());
    // §8.4.3: a holder whose lease has run out (a courtesy client) is not waited for: it is
    // reaped, and its delegations with it (as check_share does for opens).
    bool reaped = false;
    for (const Delegation& d : c.to_recall)
        if (clients.may_reap(d.client) && reap_client(d.client)) {
            spdlog::info(
                "nfsv4.1: client {:#x} reaped: lease expired, an access conflicts with "
                "its delegation",
                d.client);
            reaped = true;
        }
    // The others the first pass marked are recalled now (start_recall skips the reaped
    // ones); a second pass only says whether anything is still in the way.
    for (const Delegation& d : c.to_recall) start_recall(d);
    if (reaped) return delegations.conflict(file, by, write, clock.now()).blocked;
    return c.blocked;
}

Services::DelegatedAttrs Services::delegated_attrs(const vfs::FileHandle& file,
                                                   state::ClientId by) {
    if (delegations.empty() || !delegations.write_delegated(file)) return {};
    using Q = DelegationTable::AttrQuery;
    auto q = delegations.query_attrs(file, by, clock.now(), kAttrsFresh);
    switch (q.kind) {
        case Q::None:
            return {};
        case Q::Wait:
            return {true, std::nullopt};
        case Q::Answer:
            if (q.d.modified) return {false, q.d.size};
            return {};
        case Q::Ask:
            break;
    }
    // §8.4.3: a holder whose lease ran out is not asked; it goes with its delegations.
    if (clients.may_reap(q.d.client) && reap_client(q.d.client)) {
        spdlog::info(
            "nfsv4.1: client {:#x} reaped: lease expired, a GETATTR needs its write delegation's "
            "attributes",
            q.d.client);
        return {};
    }
    ++delegation_stats.getattrs;
    const auto deadline = CallbackPaths::Clock::now() + options.callback_timeout;
    callbacks.compound(
        q.d.client, cb_getattr(q.d.file.data()), deadline,
        [this, id = q.d.stateid.other](std::optional<CbReply> reply, const std::string& why) {
            getattr_done(id, reply, why);
        });
    return {true, std::nullopt};
}

void Services::getattr_done(const DelegationTable::Other& id, const std::optional<CbReply>& reply,
                            const std::string& why) {
    const state::Time now = clock.now();
    if (reply && reply->status == x4::NFS4_OK && reply->getattr) {
        auto d = delegations.find(id);
        if (!d) return;  // returned meanwhile: the file's attributes are the truth again
        // §10.4.3: the holder answers the change attribute it was granted with ("sc")
        // while it holds no changes, another (the Linux client: sc + 1) when it does; a size
        // other than the file's is a change too. A reclaimed delegation has no sc yet: its
        // first answer's change is taken as the baseline.
        const uint64_t cc = reply->getattr->change;
        bool modified = d->change && cc != *d->change;
        if (d->fd)
            if (auto st = vfs::getattr(*d->fd); st && st->stx_size != reply->getattr->size)
                modified = true;
        // Changes held: the file's times become now, so that its change attribute and times
        // move past what others saw and never go back ("nsc", time_modify = now).
        if (modified && d->fd) {
            if (auto r = vfs::touch(*d->fd); !r)
                spdlog::warn("nfsv4.1: CB_GETATTR: the file's times cannot be set: {}",
                             vfs::describe_error(r.error()));
        }
        delegations.answered(id, modified, reply->getattr->size, cc, now);
        held_calls_freed();
        return;
    }
    const std::string what =
        reply ? "status " + std::to_string(reply->ops.empty() ? reply->status : reply->ops[0])
              : why;
    // §10.4.3: "the server MAY simply recall the delegation".
    if (auto d = delegations.recall(id, now)) {
        spdlog::info(
            "nfsv4.1: CB_GETATTR to client {:#x} failed ({}); its write delegation is "
            "recalled",
            d->client, what);
        start_recall(*d);
    }
}

void Services::recall_any(state::Time now) {
    const size_t max = delegations.max(), held = delegations.size();
    {
        std::lock_guard l(recall_mu_);
        std::erase_if(recall_any_sent_,
                      [&](const auto& kv) { return now - kv.second >= kRecallAnyEvery; });
    }
    if (held < max - max / 4) return;
    auto holders = delegations.holders();
    std::sort(holders.begin(), holders.end(),
              [](const auto& a, const auto& b) { return a.second > b.second; });
    size_t excess = held - max / 2;
    for (const auto& [holder, n] : holders) {
        if (excess == 0 || n < 2) break;
        const state::ClientId client = holder;
        {
            std::lock_guard l(recall_mu_);
            if (!recall_any_sent_.emplace(client, now).second) continue;  // sent lately
        }
        const uint32_t keep = static_cast<uint32_t>(n / 2);
        excess -= std::min(excess, n - keep);
        ++delegation_stats.recall_any;
        spdlog::info(
            "nfsv4.1: {} of {} delegations held: CB_RECALL_ANY to client {:#x} (keep {} "
            "of its {})",
            held, max, client, keep, n);
        // The client returns what it lets go with DELEGRETURN, at its own pace.
        callbacks.compound(
            client,
            cb_recall_any(
                keep, (1u << x4::RCA4_TYPE_MASK_RDATA_DLG) | (1u << x4::RCA4_TYPE_MASK_WDATA_DLG)),
            CallbackPaths::Clock::now() + options.callback_timeout,
            [client](std::optional<CbReply> reply, const std::string& why) {
                if (!reply || reply->status != x4::NFS4_OK)
                    spdlog::info("nfsv4.1: CB_RECALL_ANY to client {:#x} failed ({})", client,
                                 reply ? "status " + std::to_string(reply->status) : why);
            });
    }
}

vfs::Result<std::shared_ptr<const vfs::OpenFile>> Services::open_file(const vfs::Node& node,
                                                                      vfs::OpenFor need,
                                                                      const struct statx* known) {
    if (auto leased = vfs::leased_file(node.handle)) return leased;  // writable: serves both
    return files.get(node, need, known);
}

void Services::lease_broken(int fd) {
    if (auto d = delegations.recall_lease(fd, clock.now())) {
        // §8.4.3: a holder whose lease has run out (a courtesy client) is not waited for.
        if (clients.may_reap(d->client) && reap_client(d->client)) {
            spdlog::info(
                "nfsv4.1: client {:#x} reaped: lease expired, a local process wants a "
                "file it holds a delegation of",
                d->client);
            return;
        }
        spdlog::info(
            "nfsv4.1: a local process wants a file client {:#x} holds a {} "
            "delegation of: recalled",
            d->client, d->write ? "write" : "read");
        start_recall(*d);
    }
}

void Services::file_changed(const vfs::FileHandle& file) {
    if (delegations.empty()) return;
    ++delegation_stats.local_changes;
    // Removed (its last link): recalled and ended at once, as the sweep would later.
    {
        std::lock_guard l(removed_mu_);
        if (end_removed(delegations.forget_removed(file), true) != 0) return;
    }
    // §10.4.1: a change by another party; every delegation of the file is recalled (a
    // read one as a write one: the holder caches what changed). Nobody waits for the
    // answer here.
    if (delegation_conflict(file, 0, true))
        spdlog::info(
            "nfsv4.1: a local process changed a delegated file's attributes, links or name: "
            "recalled");
}

void Services::check_leases() {
    for (const Delegation& d : delegations.recall_breaking_leases(clock.now())) start_recall(d);
}

void Services::start_recall(const Delegation& d) {
    {
        std::lock_guard l(recall_mu_);
        // Returned, revoked or reaped since: nothing to recall (and no entry left behind).
        if (!delegations.find(d.stateid.other)) return;
        auto& r = recall_retries_[d.stateid.other];
        r.first = state::Time::max();  // sent now; a failure sets when to try again
        ++r.second;
    }
    ++delegation_stats.recalls;
    // §20.2: CB_RECALL of the delegation's stateid and file; truncate is false (the file
    // is not being truncated to zero by this access as far as the holder needs to know).
    auto ops = cb_recall(d.stateid, false, d.file.data());
    const auto deadline = CallbackPaths::Clock::now() + options.limits.lease;
    // Not the Delegation itself: its descriptor would stay open while the call waits.
    callbacks.compound(d.client, std::move(ops), deadline,
                       [this, client = d.client, id = d.stateid.other](std::optional<CbReply> reply,
                                                                       const std::string& why) {
                           recall_done(client, id, reply, why);
                       });
}

void Services::recall_done(state::ClientId client, const DelegationTable::Other& id,
                           const std::optional<CbReply>& reply, const std::string& why) {
    const bool taken = reply && reply->status == x4::NFS4_OK;
    std::lock_guard l(recall_mu_);
    auto it = recall_retries_.find(id);
    if (it == recall_retries_.end()) return;  // returned or revoked meanwhile
    if (taken) {
        spdlog::debug("nfsv4.1: client {:#x} took the recall of a delegation", client);
        recall_retries_.erase(it);
        return;
    }
    ++delegation_stats.recall_failures;
    const std::string what =
        reply ? "status " + std::to_string(reply->ops.empty() ? reply->status : reply->ops[0])
              : why;
    if (it->second.second >= kRecallTries) {
        spdlog::warn(
            "nfsv4.1: CB_RECALL to client {:#x} failed ({}); its delegation goes when "
            "its lease runs out",
            client, what);
        recall_retries_.erase(it);
        return;
    }
    spdlog::info("nfsv4.1: CB_RECALL to client {:#x} failed ({}); sending it again", client, what);
    it->second.first = clock.now() + kRecallRetry;
}

bool Services::sweep_delegations() {
    callbacks.tick();
    const state::Time now = clock.now();
    if (!delegations.empty()) recall_any(now);
    // A local `rm` on the server does not break a file lease (the kernel nfsd recalls its
    // delegations before such an unlink): the delegations of removed files end as the
    // sweep comes to them, kRemovedChecks a second, so that the files' space is freed.
    {
        std::lock_guard l(removed_mu_);
        end_removed(delegations.forget_removed_next(kRemovedChecks), true);
    }
    bool revoked = false;
    for (Delegation& d : delegations.overdue(now - options.limits.lease)) {
        {
            std::lock_guard l(recall_mu_);
            recall_retries_.erase(d.stateid.other);
        }
        // §8.2.4 / §18.46.3: its stateid now answers NFS4ERR_DELEG_REVOKED and SEQUENCE
        // flags SEQ4_STATUS_RECALLABLE_STATE_REVOKED until the client frees it.
        clients.revoke_stateid(d.stateid, x4::NFS4ERR_DELEG_REVOKED);
        ++delegation_stats.revoked;
        if (d.lease) d.lease->release(false);
        revoked = true;
        spdlog::warn(
            "nfsv4.1: client {:#x}'s {} delegation revoked: not returned within a lease of its "
            "recall",
            d.client, d.write ? "write" : "read");
    }
    if (revoked) held_calls_freed();  // once every lease revoked is let go
    std::vector<Delegation> again;
    {
        std::lock_guard l(recall_mu_);
        for (auto it = recall_retries_.begin(); it != recall_retries_.end();) {
            auto d = delegations.find(it->first);
            if (!d) {  // gone meanwhile
                it = recall_retries_.erase(it);
                continue;
            }
            if (it->second.first <= now) {
                it->second.first = state::Time::max();
                again.push_back(std::move(*d));
            }
            ++it;
        }
    }
    for (const Delegation& d : again) start_recall(d);
    // Any delegation may be recalled before the next sweep: its retries and its revocation
    // must not wait a lease for it.
    return !delegations.empty();
}

size_t Services::forget_removed_delegations(state::ClientId client) {
    std::lock_guard l(removed_mu_);
    return end_removed(delegations.forget_removed(client), false);
}

size_t Services::end_removed(const std::vector<Delegation>& gone, bool recall) {
    for (const Delegation& d : gone) {
        clients.release_stateid(d.client, d.stateid);
        if (d.lease) d.lease->release(false);
        ++delegation_stats.removed;
        {
            std::lock_guard l(recall_mu_);
            recall_retries_.erase(d.stateid.other);
        }
        // The holder may still trust its cache of the file: one CB_RECALL, whatever its
        // answer (the DELEGRETURN that follows finds no delegation; the Linux client's
        // asks GETATTR first, NFS4ERR_STALE). The descriptor goes with `gone`; the lease
        // went above.
        if (recall)
            callbacks.compound(d.client, cb_recall(d.stateid, false, d.file.data()),
                               CallbackPaths::Clock::now() + options.limits.lease,
                               [](std::optional<CbReply>, const std::string&) {});
    }
    if (!gone.empty()) {
        spdlog::info("nfsv4.1: {} delegation(s) ended: their files were removed on the server{}",
                     gone.size(), recall ? " (holders sent CB_RECALL)" : "");
        held_calls_freed();  // once every lease is let go
    }
    return gone.size();
}

x4::nfsstat4 Services::return_delegation(state::ClientId client, const state::Stateid& sid) {
    auto r = clients.check_stateid(client, sid, state::mask_of(state::StateKind::Delegation));
    if (r.status != x4::NFS4_OK) return r.status;
    auto d = delegations.find(sid.other);
    if (!d || d->client != client) return x4::NFS4ERR_BAD_STATEID;
    const x4::nfsstat4 st = clients.release_stateid(client, sid);
    if (st != x4::NFS4_OK) return st;
    if (auto gone = delegations.erase(sid.other)) {
        ++delegation_stats.returned;
        if (gone->lease) gone->lease->release();  // and calls it held up run again
    }
    std::lock_guard l(recall_mu_);
    recall_retries_.erase(sid.other);
    return x4::NFS4_OK;
}

}  // namespace nfsrdmad::nfs::v4
