// What the RDMA transport did, globally and per connection, readable from a running
// daemon (SIGUSR1 dump) so tests can prove which paths ran.
//
// Every connection owns a TransportCounters; each event is counted there and in the
// server-wide RdmaCounters (which adds what only the listener sees). All fields are
// relaxed atomics: the reactor and the workers write them, the stats dump reads them
// from another thread.
#pragma once

#include <atomic>
#include <cstdint>
#include <string>

namespace nfsrdmad::rdma::verbs {

using Counter = std::atomic<uint64_t>;

struct TransportCounters {
    Counter calls_msg{0}, calls_nomsg{0}, calls_msgp{0}, done_ignored{0};
    Counter read_chunks{0}, read_bytes{0};
    Counter write_chunks{0}, write_bytes{0};
    Counter reply_chunks{0}, reply_bytes{0};
    Counter inline_replies{0};
    Counter err_vers{0}, err_chunk{0}, credit_overruns{0};
    Counter completions{0}, completion_errors{0}, send_invalidate{0};
    Counter staged_bytes{0};          // RPC headers/attributes copied to send
    Counter payload_memcpy_bytes{0};  // file data copied in userspace: must stay 0
    Counter buffer_waits{0};          // times calls or replies waited for registered memory
    Counter send_queue_waits{0};      // attempts that found the send queue full
    Counter reply_parts{0};  // parts of a reply's Writes posted ahead of its Send (send_queue.h)
    Counter stalled_sends{0};         // disconnects for a Send the peer never took
    Counter sink_registrations{0};    // iWARP: RDMA Read sinks registered for one Read
    // RFC 8167: calls to the client (the NFSv4.1 backchannel), those that failed (no
    // reply in time, the connection closed), replies that matched none.
    Counter back_calls{0}, back_failed{0}, stray_replies{0};
    Counter reactor_calls{0};  // calls answered on the reactor, without a worker (receive.cpp)
    // Replies a worker posted itself, as its sleeping reactor (receive.cpp: no wake-up)
    Counter worker_replies{0};

    // "calls_msg=1 calls_nomsg=0 ..." in declaration order
    std::string format() const;
};

struct RdmaCounters : TransportCounters {
    Counter connections{0}, disconnects{0}, rejected_connections{0};
    Counter credits_granted{0};  // the last grant sent, on any connection
    Counter calls_waiting{0};    // now: calls waiting for a payload buffer (a gauge)
};

}  // namespace nfsrdmad::rdma::verbs
