// What a completion channel's event asks of the owner of its CQ (a connection's send
// queue, a reactor's receives), in each engine mode.
#pragma once

#include <infiniband/verbs.h>

namespace nfsrdmad::rdma::verbs {

// Whether a polled CQ's event is requested (poll and adaptive modes: the reactor calls
// every poller's arm before it sleeps). A request stands until a completion raises the
// CQ's event (ibv_req_notify_cq(3): the CQ is then disarmed until the next request), and
// the event stays on the channel, where it wakes the sleeping reactor, until on_cq_event
// takes it. So a CQ requested since its event was last taken needs no new request: it is
// still armed, or its event is waiting. Requesting anyway costs a system call per CQ on
// some providers (Soft-RoCE: a uverbs command), for every connection on the reactor at
// every sleep: with a hundred connections, a hundred system calls a sleep, idle or not.
class CqNotify {
  public:
    // Requests the event unless it stands; `request` is ibv_req_notify_cq (0: done).
    // Returns whether it asked.
    template <class Request>
    bool arm(Request&& request) {
        if (armed_) return false;
        armed_ = request() == 0;
        return true;
    }
    void armed() { armed_ = true; }   // requested elsewhere (at setup)
    void taken() { armed_ = false; }  // the event was taken from the channel
    bool standing() const { return armed_; }

  private:
    bool armed_ = false;
};

// Takes the channel's event, if one is pending, and acknowledges it. With a poller (poll
// and adaptive modes: the reactor re-arms the CQ before it sleeps, `polled` says whether
// that request stands) it reaps; in event mode it reaps, re-arms, and reaps again what
// slipped in before the re-arm. `gone()` ends it when reaping closed the owner.
template <class Reap, class Gone>
void on_cq_event(ibv_comp_channel* channel, ibv_cq* cq, CqNotify* polled, Reap reap, Gone gone) {
    ibv_cq* ev_cq = nullptr;
    void* ctx = nullptr;
    if (ibv_get_cq_event(channel, &ev_cq, &ctx) == 0) {
        ibv_ack_cq_events(ev_cq, 1);
        if (polled) polled->taken();
    }
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
