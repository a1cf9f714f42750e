// Who keeps a program version in rpcbind when it is already registered (rpcbind.h): a
// second NFS server that answers keeps its entries; a dead one, our own earlier run, and
// this host's lockd (which registers NLM for its own mounts) are replaced.
#include <gtest/gtest.h>

#include "transport/rpc/rpcbind.h"

using nfsrdmad::rpc::rpcbind_claim;
using nfsrdmad::rpc::RpcbindClaim;

TEST(RpcbindClaim, AnotherLiveNfsServerKeepsItsEntriesEverythingElseIsTaken) {
    EXPECT_EQ(rpcbind_claim(2049, 0, false, false), RpcbindClaim::Take);       // nothing there
    EXPECT_EQ(rpcbind_claim(2049, 2049, true, true), RpcbindClaim::Take);      // ours, earlier
    EXPECT_EQ(rpcbind_claim(2049, 3049, false, true), RpcbindClaim::Take);     // dead server
    EXPECT_EQ(rpcbind_claim(2049, 3049, true, true), RpcbindClaim::LeaveToOther);
    EXPECT_EQ(rpcbind_claim(2049, 40001, true, false), RpcbindClaim::Take);    // lockd alone
}
