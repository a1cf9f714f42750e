// What the RDMA transport did, globally and per connection, readable from a running
// daemon (SIGUSR1 dump) so tests can prove which paths ran.
//
// Every connection owns a TransportCounters; each event is counted there and in the
// server-wide RdmaCounters (which adds what only the listener sees). The fields are
// relaxed: the reactor and the workers write them, the stats dump and the metrics read
// them from another thread. A connection's own counters are written by its reactor and
// the workers of its calls, so plain atomics. The server-wide ones are written by every
// reactor on every call, so they are striped (rpc/stripes.h: a copy per thread a cache
// line apart, summed when read), as the TCP transport's are; otherwise, with a reactor
// per core, every call would pass the same few cache lines from core to core.
#pragma once

#include <atomic>
#include <cstdint>
#include <string>

#include "transport/rpc/stripes.h"

namespace nfsrdmad::rdma::verbs {

using Counter = std::atomic<uint64_t>;

// The counters both kinds hold, in the order format() prints them.
//   staged_bytes          RPC headers/attributes copied to send
//   payload_memcpy_bytes  file data copied in userspace: must stay 0
//   buffer_waits          times calls or replies waited for registered memory
//   send_queue_waits      attempts that found the send queue full
//   reply_parts           parts of a reply's Writes posted ahead of its Send (send_queue.h)
//   stalled_sends         disconnects for a Send the peer never took
//   sink_registrations    iWARP: RDMA Read sinks registered for one Read
//   back_calls, back_failed, stray_replies
//                         RFC 8167: calls to the client (the NFSv4.1 backchannel), those
//                         that failed (no reply in time, the connection closed), replies
//                         that matched none
//   reactor_calls         calls answered on the reactor, without a worker (receive.cpp)
//   worker_replies        replies a worker posted itself, as its sleeping reactor
//                         (receive.cpp: no wake-up)
//   cq_arms               requests for a connection's CQ event (poll and adaptive modes:
//                         before its reactor sleeps, and only where none stands, cq_events.h)
#define NFSRDMAD_RDMA_TRANSPORT_COUNTERS(X)                                                   \
    X(calls_msg)                                                                              \
    X(calls_nomsg)                                                                            \
    X(calls_msgp) X(done_ignored) X(read_chunks) X(read_bytes) X(write_chunks) X(write_bytes) \
        X(reply_chunks) X(reply_bytes) X(inline_replies) X(err_vers) X(err_chunk)             \
            X(credit_overruns) X(completions) X(completion_errors) X(send_invalidate)         \
                X(staged_bytes) X(payload_memcpy_bytes) X(buffer_waits) X(send_queue_waits)   \
                    X(reply_parts) X(stalled_sends) X(sink_registrations) X(back_calls)       \
                        X(back_failed) X(stray_replies) X(reactor_calls) X(worker_replies)    \
                            X(cq_arms)

// Names one of them, for Connection::count.
enum class Tc {
#define NFSRDMAD_X(name) name,
    NFSRDMAD_RDMA_TRANSPORT_COUNTERS(NFSRDMAD_X)
#undef NFSRDMAD_X
};

template <class C>
struct BasicTransportCounters {
#define NFSRDMAD_X(name) C name{};
    NFSRDMAD_RDMA_TRANSPORT_COUNTERS(NFSRDMAD_X)
#undef NFSRDMAD_X

    C& operator[](Tc which) {
        switch (which) {
#define NFSRDMAD_X(name) \
    case Tc::name:       \
        return name;
            NFSRDMAD_RDMA_TRANSPORT_COUNTERS(NFSRDMAD_X)
#undef NFSRDMAD_X
        }
        __builtin_unreachable();
    }

    // "calls_msg=1 calls_nomsg=0 ..." in declaration order
    std::string format() const;
};

using TransportCounters = BasicTransportCounters<Counter>;

struct RdmaCounters : BasicTransportCounters<rpc::StripedCounter> {
    // Rare events (the listener's, a connection's end): plain atomics.
    Counter connections{0}, disconnects{0}, rejected_connections{0};
    Counter credits_granted{0};  // the last grant sent, on any connection
    Counter calls_waiting{0};    // now: calls waiting for a payload buffer (a gauge)
};

extern template struct BasicTransportCounters<Counter>;
extern template struct BasicTransportCounters<rpc::StripedCounter>;

}  // namespace nfsrdmad::rdma::verbs
