// What the verbs layer registers its memory for (no device needed: the choice is pure).
#include <gtest/gtest.h>

#include "transport/rdma/verbs/device.h"
#include "transport/rdma/verbs/memory_pool.h"

using nfsrdmad::rdma::verbs::pool_access;
using nfsrdmad::rdma::verbs::read_sink_access;

constexpr int kRemote = IBV_ACCESS_REMOTE_READ | IBV_ACCESS_REMOTE_WRITE | IBV_ACCESS_REMOTE_ATOMIC;

// Issue 8 finding 1: the pools were registered with REMOTE_READ | REMOTE_WRITE in a
// protection domain every connection shares. Nothing of ours is ever a remote target.
TEST(RdmaRegistration, PoolsAreLocalOnlyOnEveryTransport) {
    for (auto t : {IBV_TRANSPORT_IB, IBV_TRANSPORT_IWARP, IBV_TRANSPORT_UNKNOWN}) {
        EXPECT_EQ(pool_access(t), IBV_ACCESS_LOCAL_WRITE);
        EXPECT_EQ(pool_access(t) & kRemote, 0);
    }
}

// iWARP places an RDMA Read Response into a remotely writable sink: one registration per
// Read, of that Read's bytes alone; IB and RoCE read into the pool's own registration.
TEST(RdmaRegistration, OnlyIwarpRegistersEachReadSinkRemotelyWritable) {
    EXPECT_FALSE(read_sink_access(IBV_TRANSPORT_IB).has_value());
    EXPECT_FALSE(read_sink_access(IBV_TRANSPORT_UNKNOWN).has_value());
    ASSERT_TRUE(read_sink_access(IBV_TRANSPORT_IWARP).has_value());
    EXPECT_EQ(*read_sink_access(IBV_TRANSPORT_IWARP),
              IBV_ACCESS_LOCAL_WRITE | IBV_ACCESS_REMOTE_WRITE);
    EXPECT_EQ(*read_sink_access(IBV_TRANSPORT_IWARP) &
                  (IBV_ACCESS_REMOTE_READ | IBV_ACCESS_REMOTE_ATOMIC),
              0);
}

// Issue 16: RDMA Reads in flight are bounded by what the payload buffers hold unless a
// budget is set (8 MiB served 200 mounts' writes 1.15-1.25x slower than 256 MiB).
TEST(RdmaRegistration, TheReadBudgetIsThePayloadPoolsUnlessSet) {
    nfsrdmad::rdma::verbs::PoolSizes p;
    EXPECT_EQ(p.read_budget(), size_t(256) << 20) << "default: 256 buffers of 1 MiB";
    p.max_payload_buffers = 4;
    EXPECT_EQ(p.read_budget(), size_t(4) << 20);
    p.max_read_bytes = 65536;
    EXPECT_EQ(p.read_budget(), 65536u) << "a configured budget is taken as it is";
}
