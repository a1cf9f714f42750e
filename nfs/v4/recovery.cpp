#include "nfs/v4/recovery.h"

#include <spdlog/spdlog.h>

#include <cstring>

namespace nfsrdmad::nfs::v4 {

namespace {
vfs::state::Grace::Known known_of(const vfs::RecoveryStore* store, size_t nlm_hosts) {
    vfs::state::Grace::Known k;
    if (store) k.nfs4_clients = store->previous();
    k.nlm_hosts = nlm_hosts;
    return k;
}
}  // namespace

Recovery::Recovery(std::shared_ptr<vfs::RecoveryStore> store, const state::Clock& clock,
                   std::chrono::steady_clock::duration period, size_t nlm_hosts)
    : store_(std::move(store)),
      clock_(clock),
      grace_(std::make_unique<vfs::state::Grace>(clock.now(), period,
                                                 known_of(store_.get(), nlm_hosts))) {}

bool Recovery::in_grace() {
    if (over_.load(std::memory_order_relaxed)) return false;
    if (grace_->in_grace(clock_.now())) return true;
    if (!over_.exchange(true)) {
        if (grace_->pending_clients())
            spdlog::info(
                "nfsv4.1: grace period over; {} client(s) of the previous boot did "
                "not reclaim",
                grace_->pending_clients());
        else
            spdlog::info("nfsv4.1: grace period over");
        if (store_)
            if (auto r = store_->end_grace(); !r)
                spdlog::error("nfsv4.1: cannot update the recovery store: {}",
                              std::strerror(r.error()));
    }
    return false;
}

x4::nfsstat4 Recovery::may_reclaim(const std::string& owner, bool reclaim_done) {
    if (reclaim_done || !in_grace()) return x4::NFS4ERR_NO_GRACE;
    const auto now = clock_.now();
    if (!grace_->may_reclaim(owner, now)) return x4::NFS4ERR_NO_GRACE;
    grace_->reclaimed(now);  // a client still reclaiming at the deadline keeps grace going
    return x4::NFS4_OK;
}

x4::nfsstat4 Recovery::may_change() {
    return in_grace() ? x4::NFS4ERR_GRACE : x4::NFS4_OK;
}

bool Recovery::confirmed(const std::string& owner) {
    if (!store_) return true;
    if (auto r = store_->add(owner); !r) {
        spdlog::error("nfsv4.1: cannot record a client for recovery: {}", std::strerror(r.error()));
        return false;
    }
    return true;
}

void Recovery::destroyed(const std::string& owner) {
    if (!store_) return;
    if (auto r = store_->remove(owner); !r)
        spdlog::error("nfsv4.1: cannot update the recovery store: {}", std::strerror(r.error()));
}

void Recovery::reclaim_complete(const std::string& owner) {
    if (grace_->reclaim_complete(owner) == vfs::state::Grace::Completion::Counted &&
        grace_->pending_clients() == 0)
        in_grace();  // ends it now, when this was the last one (logs, updates the store)
}

size_t Recovery::previous_clients() const {
    return store_ ? store_->previous().size() : 0;
}

}  // namespace nfsrdmad::nfs::v4
