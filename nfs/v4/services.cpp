// The shared state operations of Services that span more than one table: a client's end
// (forget_client), reaping (RFC 8881 §8.4.3 courtesy clients) and the lease sweep (§8.3).
#include <spdlog/spdlog.h>

#include <algorithm>

#include "nfs/v4/services.h"

namespace nfsrdmad::nfs::v4 {

void Services::forget_client(state::ClientId id) {
    // Its delegations first: the calls forget() fails find nothing left to recall.
    bool freed = false;
    for (const Delegation& d : delegations.forget_client(id)) {
        if (d.lease) d.lease->release(false);
        freed = true;
        std::lock_guard l(recall_mu_);
        recall_retries_.erase(d.stateid.other);
    }
    if (freed) held_calls_freed();  // once every lease is let go
    callbacks.forget(id);
    opens.forget_client(id);  // closes the files only these opens kept open
    lock_states.forget_client(id);
    pass_woken(locks.release_client(vfs::state::ClientKey{vfs::state::Protocol::Nfs4, id}));
}

bool Services::reap_client(state::ClientId id) {
    // The client table goes first: once the record is gone no SEQUENCE of the client
    // succeeds and no new stateid is handed out for it, so nothing can add state for it
    // between the two steps (reap() refuses while one of its COMPOUNDs runs).
    auto owner = clients.ownerid(id);
    if (!clients.reap(id)) return false;
    forget_client(id);
    // Nothing of it is left to reclaim after a restart.
    if (owner) recovery.destroyed(*owner);
    return true;
}

x4::nfsstat4 Services::check_share(const vfs::FileHandle& file, uint32_t access, uint32_t deny,
                                   const std::optional<OpenTable::Other>& self) {
    const x4::nfsstat4 st = check_open_shares(file, access, deny, self);
    if (st == x4::NFS4_OK && options.foreign_shares && options.foreign_shares(file, access, deny))
        return x4::NFS4ERR_SHARE_DENIED;
    return st;
}

x4::nfsstat4 Services::check_open_shares(const vfs::FileHandle& file, uint32_t access,
                                         uint32_t deny,
                                         const std::optional<OpenTable::Other>& self) {
    x4::nfsstat4 st = opens.check_share(file, access, deny, self);
    if (st != x4::NFS4ERR_SHARE_DENIED) return st;
    // §8.4.3: a courtesy client's state stays until it conflicts with another client's
    // request; then the server may release it. Only when every conflicting open is a
    // courtesy client's: a live conflict denies the OPEN whatever else conflicts.
    const auto who = opens.conflicting_clients(file, access, deny, self);
    if (who.empty()) return st;
    for (state::ClientId id : who)
        if (!clients.may_reap(id)) return st;
    for (state::ClientId id : who)
        if (reap_client(id))
            spdlog::info("nfsv4.1: client {:#x} reaped: lease expired, an OPEN conflicts with it",
                         id);
    return opens.check_share(file, access, deny, self);
}

bool Services::reap_lock_holder(const vfs::state::Conflict& c) {
    if (!c.owner || c.owner->client().protocol != vfs::state::Protocol::Nfs4) return false;
    const state::ClientId id = c.owner->client().id;
    if (!clients.may_reap(id) || !reap_client(id)) return false;
    spdlog::info("nfsv4.1: client {:#x} reaped: lease expired, a lock request conflicts with it",
                 id);
    return true;
}

vfs::Result<vfs::state::LockReply> Services::lock_range(const vfs::Node& node,
                                                        const vfs::state::FileKey& file,
                                                        const vfs::state::StateOwner& owner,
                                                        const vfs::state::Lock& want) {
    std::optional<vfs::state::OfdMirror> m;
    std::shared_ptr<const vfs::OpenFile> leased;  // kept open for the call
    if (options.lock_files) {
        leased = vfs::leased_file(node.handle);
        m.emplace(node.fd.get(), options.lock_files, leased ? leased->fd.get() : -1);
    }
    for (size_t reaped = 0;; ++reaped) {
        auto r = locks.lock(file, owner, want, std::nullopt, m ? &*m : nullptr);
        if (!r || !r->denied || reaped == kMaxCourtesyReaps || !reap_lock_holder(*r->denied))
            return r;
    }
}

vfs::Result<std::optional<vfs::state::Conflict>> Services::test_lock_range(
    const vfs::Node& node, const vfs::state::FileKey& file, const vfs::state::StateOwner& owner,
    const vfs::state::Lock& want) {
    std::optional<vfs::state::OfdMirror> m;
    std::shared_ptr<const vfs::OpenFile> leased;
    if (options.lock_files) {
        leased = vfs::leased_file(node.handle);
        m.emplace(node.fd.get(), options.lock_files, leased ? leased->fd.get() : -1);
    }
    for (size_t reaped = 0;; ++reaped) {
        auto r = locks.test(file, owner, want, m ? &*m : nullptr);
        if (!r || !*r || reaped == kMaxCourtesyReaps || !reap_lock_holder(**r)) return r;
    }
}

size_t Services::reap_oldest_courtesy(size_t n) {
    size_t reaped = 0;
    clients.expired_clients();  // every client whose lease has run out, swept or not yet
    for (const auto& [id, end] : clients.courtesy_clients()) {
        if (reaped == n) break;
        if (reap_client(id)) ++reaped;
    }
    return reaped;
}

std::chrono::milliseconds Services::expire_leases() {
    using std::chrono::milliseconds;
    const state::Limits& l = options.limits;
    const state::Time now = clock.now();
    clients.expired_clients();  // live → courtesy; stale unconfirmed records dropped

    const auto keep = l.lease * l.courtesy_leases;
    const auto courtesy = clients.courtesy_clients();  // longest expired first
    size_t i = 0, reaped = 0;
    for (; i < courtesy.size() && now - courtesy[i].second >= keep; ++i)
        reaped += reap_client(courtesy[i].first);
    // Room for new clients: courtesy clients are the first to go (EXCHANGE_ID reaps one
    // itself when the table is full).
    const size_t high = l.max_clients - l.max_clients / 4;
    for (; i < courtesy.size() && clients.client_count() > high; ++i)
        reaped += reap_client(courtesy[i].first);
    if (reaped)
        spdlog::info("nfsv4.1: reaped {} client(s) whose lease had expired ({} left)", reaped,
                     clients.client_count());

    state::Time next = now + l.lease;
    if (sweep_delegations()) next = std::min(next, now + std::chrono::seconds(1));
    if (auto e = clients.next_expiry()) next = std::min(next, *e);
    if (i < courtesy.size()) next = std::min(next, courtesy[i].second + keep);
    auto delay = std::chrono::ceil<milliseconds>(next - now);
    return std::clamp<milliseconds>(delay, milliseconds(1000),
                                    std::max<milliseconds>(l.lease, milliseconds(1000)));
}

}  // namespace nfsrdmad::nfs::v4
