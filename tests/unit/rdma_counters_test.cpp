// The RDMA transport's counters: each name reaches its own field, the dump prints every
// one in order, and the server-wide (striped) totals lose nothing to many threads.
#include <gtest/gtest.h>

#include <string>
#include <thread>
#include <vector>

#include "transport/rdma/verbs/counters.h"

namespace nfsrdmad::rdma::verbs {
namespace {

const std::vector<std::string> kNames = {
    "calls_msg",         "calls_nomsg",     "calls_msgp",    "done_ignored",         "read_chunks",
    "read_bytes",        "write_chunks",    "write_bytes",   "reply_chunks",         "reply_bytes",
    "inline_replies",    "err_vers",        "err_chunk",     "credit_overruns",      "completions",
    "completion_errors", "send_invalidate", "staged_bytes",  "payload_memcpy_bytes", "buffer_waits",
    "send_queue_waits",  "reply_parts",     "stalled_sends", "sink_registrations",   "back_calls",
    "back_failed",       "stray_replies",   "reactor_calls", "worker_replies",       "cq_arms"};

// Counter i (in declaration order) gets i + 1: every field distinct in the dump.
template <class C>
std::string counted_by_index(BasicTransportCounters<C>& c) {
    for (size_t i = 0; i < kNames.size(); ++i) c[static_cast<Tc>(i)] += i + 1;
    return c.format();
}

std::string expected_dump() {
    std::string out;
    for (size_t i = 0; i < kNames.size(); ++i)
        out += (i ? " " : "") + kNames[i] + "=" + std::to_string(i + 1);
    return out;
}

TEST(RdmaCounters, EachNameCountsItsOwnFieldAndTheDumpListsThemInOrder) {
    TransportCounters local;
    EXPECT_EQ(counted_by_index(local), expected_dump());
    EXPECT_EQ(local.calls_msg.load(), 1u);
    EXPECT_EQ(local[Tc::read_bytes].load(), 6u);
    EXPECT_EQ(local.cq_arms.load(), kNames.size());

    RdmaCounters server;
    EXPECT_EQ(counted_by_index(server), expected_dump());
    EXPECT_EQ(server.payload_memcpy_bytes.load(), 19u);
}

TEST(RdmaCounters, ServerTotalsCountedOnManyThreadsAddUp) {
    RdmaCounters server;
    constexpr int kThreads = int(rpc::kStripes) + 3, kEach = 5000;
    std::vector<std::thread> threads;
    for (int t = 0; t < kThreads; ++t)
        threads.emplace_back([&] {
            for (int n = 0; n < kEach; ++n) {
                server[Tc::calls_msg].add(1);
                server[Tc::reply_bytes].add(4096);
            }
        });
    for (auto& th : threads) th.join();
    EXPECT_EQ(server.calls_msg.load(), uint64_t(kThreads) * kEach);
    EXPECT_EQ(server.reply_bytes.load(), uint64_t(kThreads) * kEach * 4096);
    EXPECT_EQ(server.calls_nomsg.load(), 0u);
}

}  // namespace
}  // namespace nfsrdmad::rdma::verbs
