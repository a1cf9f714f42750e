// What the verbs layer registers its pools for (no device needed: the choice is pure).
#include <gtest/gtest.h>

#include "transport/rdma/verbs/memory_pool.h"

// Issue 8 finding 1: the pools were registered with REMOTE_READ | REMOTE_WRITE in a
// protection domain every connection shares. Nothing of ours is ever a remote target.
TEST(RdmaRegistration, PoolsAreLocalOnlyAndIwarpIsRefused) {
    using nfsrdmad::rdma::verbs::pool_access;
    for (auto t : {IBV_TRANSPORT_IB, IBV_TRANSPORT_UNKNOWN}) {
        ASSERT_TRUE(pool_access(t).has_value());
        EXPECT_EQ(*pool_access(t), IBV_ACCESS_LOCAL_WRITE);
        EXPECT_EQ(*pool_access(t) &
                      (IBV_ACCESS_REMOTE_READ | IBV_ACCESS_REMOTE_WRITE | IBV_ACCESS_REMOTE_ATOMIC),
                  0);
    }
    EXPECT_FALSE(pool_access(IBV_TRANSPORT_IWARP).has_value());
}
