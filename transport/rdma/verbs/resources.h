// RAII owners for every verbs and rdma_cm object the transport creates.
#pragma once

#include <infiniband/verbs.h>
#include <rdma/rdma_cma.h>

#include <memory>

namespace nfsrdmad::rdma::verbs {

struct PdDelete {
    void operator()(ibv_pd* p) const { ibv_dealloc_pd(p); }
};
struct MrDelete {
    void operator()(ibv_mr* m) const { ibv_dereg_mr(m); }
};
struct CqDelete {
    void operator()(ibv_cq* c) const { ibv_destroy_cq(c); }
};
struct CompChannelDelete {
    void operator()(ibv_comp_channel* c) const { ibv_destroy_comp_channel(c); }
};
struct EventChannelDelete {
    void operator()(rdma_event_channel* c) const { rdma_destroy_event_channel(c); }
};
struct CmIdDelete {
    void operator()(rdma_cm_id* id) const {
        if (id->qp) rdma_destroy_qp(id);
        rdma_destroy_id(id);
    }
};

using PdPtr = std::unique_ptr<ibv_pd, PdDelete>;
using MrPtr = std::unique_ptr<ibv_mr, MrDelete>;
using CqPtr = std::unique_ptr<ibv_cq, CqDelete>;
using CompChannelPtr = std::unique_ptr<ibv_comp_channel, CompChannelDelete>;
using EventChannelPtr = std::unique_ptr<rdma_event_channel, EventChannelDelete>;
using CmIdPtr = std::unique_ptr<rdma_cm_id, CmIdDelete>;

}  // namespace nfsrdmad::rdma::verbs
