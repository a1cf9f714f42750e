#include "transport/rdma/verbs/counters.h"

#include <spdlog/fmt/fmt.h>

namespace nfsrdmad::rdma::verbs {

std::string TransportCounters::format() const {
    auto v = [](const Counter& c) { return c.load(std::memory_order_relaxed); };
    return fmt::format(
        "calls_msg={} calls_nomsg={} calls_msgp={} done_ignored={} read_chunks={} "
        "read_bytes={} write_chunks={} write_bytes={} reply_chunks={} reply_bytes={} "
        "inline_replies={} err_vers={} err_chunk={} credit_overruns={} completions={} "
        "completion_errors={} send_invalidate={} staged_bytes={} payload_memcpy_bytes={} "
        "buffer_waits={} send_queue_waits={} reply_parts={} stalled_sends={} sink_registrations={} "
        "back_calls={} "
        "back_failed={} "
        "stray_replies={} reactor_calls={} worker_replies={}",
        v(calls_msg), v(calls_nomsg), v(calls_msgp), v(done_ignored), v(read_chunks), v(read_bytes),
        v(write_chunks), v(write_bytes), v(reply_chunks), v(reply_bytes), v(inline_replies),
        v(err_vers), v(err_chunk), v(credit_overruns), v(completions), v(completion_errors),
        v(send_invalidate), v(staged_bytes), v(payload_memcpy_bytes), v(buffer_waits),
        v(send_queue_waits), v(reply_parts), v(stalled_sends), v(sink_registrations), v(back_calls),
        v(back_failed), v(stray_replies), v(reactor_calls), v(worker_replies));
}

}  // namespace nfsrdmad::rdma::verbs
