#include "transport/rdma/verbs/receive_queue.h"

#include <spdlog/spdlog.h>

#include <algorithm>
#include <cerrno>
#include <cstring>

namespace nfsrdmad::rdma::verbs {

std::shared_ptr<SharedReceiveQueue> SharedReceiveQueue::create(ibv_pd* pd,
                                                               const ibv_device_attr& attr,
                                                               MemoryPool& pool, uint32_t depth,
                                                               engine::Reactor* home,
                                                               std::string* why) {
    if (attr.max_srq == 0 || attr.max_srq_wr <= 0) {
        *why = "the device has no shared receive queues";
        return nullptr;
    }
    std::shared_ptr<SharedReceiveQueue> q(new SharedReceiveQueue(pool, home));
    q->depth_ = std::max<uint32_t>(1, std::min<uint32_t>(depth, uint32_t(attr.max_srq_wr)));
    ibv_srq_init_attr sa{};
    sa.attr.max_wr = q->depth_;
    sa.attr.max_sge = 1;
    q->srq_.reset(ibv_create_srq(pd, &sa));
    if (!q->srq_) {
        *why = std::string("ibv_create_srq: ") + std::strerror(errno);
        return nullptr;
    }
    q->slots_.resize(q->depth_);
    for (uint32_t i = q->depth_; i-- > 0;) q->free_slots_.push_back(i);
    std::lock_guard lock(q->mu_);
    for (uint32_t i = 0; i < q->depth_; ++i) {
        if (!q->post_one()) {
            *why = "cannot post " + std::to_string(q->depth_) + " receives: " +
                   (pool.last_error().empty() ? "ibv_post_srq_recv failed" : pool.last_error());
            return nullptr;
        }
    }
    return q;
}

uint32_t SharedReceiveQueue::posted() const {
    std::lock_guard lock(mu_);
    return depth_ - uint32_t(free_slots_.size());
}

bool SharedReceiveQueue::post_one() {
    if (free_slots_.empty()) return false;
    auto buf = pool_.get();
    if (!buf) return false;
    const uint32_t slot = free_slots_.back();
    ibv_sge sge{reinterpret_cast<uintptr_t>(buf->data()), static_cast<uint32_t>(buf->size()),
                buf->lkey()};
    ibv_recv_wr wr{};
    wr.wr_id = kTag | slot;
    wr.sg_list = &sge;
    wr.num_sge = 1;
    ibv_recv_wr* bad = nullptr;
    if (ibv_post_srq_recv(srq_.get(), &wr, &bad) != 0) {
        spdlog::warn("rdma: ibv_post_srq_recv: {}", std::strerror(errno));
        return false;
    }
    free_slots_.pop_back();
    slots_[slot] = std::move(buf);
    return true;
}

BufferPtr SharedReceiveQueue::take(uint64_t wr_id) {
    const uint64_t slot = wr_id & ~kTag;
    std::lock_guard lock(mu_);
    if (slot >= slots_.size() || !slots_[slot]) return BufferPtr(nullptr, BufferRelease{});
    free_slots_.push_back(uint32_t(slot));
    return std::move(slots_[slot]);
}

void SharedReceiveQueue::refill() {
    std::lock_guard lock(mu_);
    while (!free_slots_.empty()) {
        if (post_one()) continue;
        if (waiting_ || !home_) return;
        // The pool is dry: calls in flight hold every buffer (more than the credit budget
        // allows, e.g. a peer ignoring a lowered grant). Backpressure: the posted receives
        // run low until replies hand buffers back; the home reactor refills then.
        std::weak_ptr<SharedReceiveQueue> weak = weak_from_this();
        auto wake = [weak, home = home_] {
            home->post([weak] {
                if (auto self = weak.lock()) {
                    {
                        std::lock_guard l(self->mu_);
                        self->waiting_ = false;
                    }
                    self->refill();
                }
            });
        };
        // A buffer that came back meanwhile: post it and go on.
        if (auto b = pool_.get_or_notify(wake)) {
            b.reset();
            continue;
        }
        waiting_ = true;
        return;
    }
}

}  // namespace nfsrdmad::rdma::verbs
