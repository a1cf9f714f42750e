// What the RDMA transport did, globally and per connection, readable from a running
// daemon (SIGUSR1 dump) so tests can prove which paths ran.
#pragma once

#include <atomic>
#include <cstdint>
#include <string>

namespace nfsrdmad::rdma::verbs {

struct ConnectionCounters {
    uint64_t calls_msg = 0, calls_nomsg = 0, calls_msgp = 0;
    uint64_t read_chunks = 0, read_bytes = 0;
    uint64_t write_chunks = 0, write_bytes = 0;
    uint64_t reply_chunks = 0, reply_bytes = 0;
    uint64_t err_vers = 0, err_chunk = 0;
    uint64_t completions = 0, completion_errors = 0;
    uint64_t send_invalidate = 0;
};

struct RdmaCounters {
    std::atomic<uint64_t> connections{0}, disconnects{0}, rejected_connections{0};
    std::atomic<uint64_t> calls_msg{0}, calls_nomsg{0}, calls_msgp{0}, done_ignored{0};
    std::atomic<uint64_t> read_chunks{0}, read_bytes{0};
    std::atomic<uint64_t> write_chunks{0}, write_bytes{0};
    std::atomic<uint64_t> reply_chunks{0}, reply_bytes{0};
    std::atomic<uint64_t> inline_replies{0};
    std::atomic<uint64_t> err_vers{0}, err_chunk{0}, credit_overruns{0};
    std::atomic<uint64_t> credits_granted{0};
    std::atomic<uint64_t> completions{0}, completion_errors{0}, send_invalidate{0};
    std::atomic<uint64_t> staged_bytes{0};          // RPC headers/attributes copied to send
    std::atomic<uint64_t> payload_memcpy_bytes{0};  // file data copied in userspace: must stay 0

    std::string format() const;
};

}  // namespace nfsrdmad::rdma::verbs
