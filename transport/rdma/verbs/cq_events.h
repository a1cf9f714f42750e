// What a completion channel's event asks of the owner of its CQ (a connection's send
// queue, a reactor's receives), in each engine mode.
#pragma once

#include <infiniband/verbs.h>

namespace nfsrdmad::rdma::verbs {

// Takes the channel's event, if one is pending, and acknowledges it. With a poller (poll
// and adaptive modes: the reactor re-arms the CQ before it sleeps) it reaps; in event mode
// it reaps, re-arms, and reaps again what slipped in before the re-arm. `gone()` ends it
// when reaping closed the owner.
template <class Reap, class Gone>
void on_cq_event(ibv_comp_channel* channel, ibv_cq* cq, bool polled, Reap reap, Gone gone) {
    ibv_cq* ev_cq = nullptr;
    void* ctx = nullptr;
    if (ibv_get_cq_event(channel, &ev_cq, &ctx) == 0) ibv_ack_cq_events(ev_cq, 1);
    if (polled) {
        reap();
        return;
    }
    do {
        reap();
        if (gone()) return;
        ibv_req_notify_cq(cq, 0);
    } while (reap() > 0);
}

}  // namespace nfsrdmad::rdma::verbs
