// What the verbs layer registers its memory for (no device needed: the choice is pure).
#include <gtest/gtest.h>

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
