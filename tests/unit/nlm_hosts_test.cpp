// NLM's host table (nfs/nlm/hosts.h): a bounded map of hosts (caller name and address) to ids.
#include <gtest/gtest.h>

#include <set>

#include "nfs/nlm/hosts.h"

namespace nfsrdmad::nfs::nlm {
namespace {

TEST(NlmHosts, OneIdPerNameNeverReused) {
    HostTable t(8);
    auto never_idle = [](uint64_t) { return false; };
    auto a = t.id("a", "10.0.0.1", never_idle), b = t.id("b", "10.0.0.1", never_idle);
    ASSERT_TRUE(a && b);
    t.unpin(*a);  // the calls that made them are done
    t.unpin(*b);
    EXPECT_NE(*a, *b);
    EXPECT_EQ(t.id("a", "10.0.0.1", never_idle), a);
    t.unpin(*a);
    EXPECT_EQ(t.find("b", "10.0.0.1"), b);
    EXPECT_EQ(t.forget("a", "10.0.0.1"), a);
    EXPECT_FALSE(t.find("a", "10.0.0.1"));
    auto again = t.id("a", "10.0.0.1", never_idle);
    ASSERT_TRUE(again);
    EXPECT_NE(*again, *a);  // a new incarnation, not the old id
    EXPECT_FALSE(t.forget("never-seen", "10.0.0.1"));
}

TEST(NlmHosts, FullTableForgetsIdleHostsOrRefuses) {
    HostTable t(3);
    std::set<uint64_t> busy;
    auto idle = [&](uint64_t id) { return !busy.count(id); };
    for (const char* n : {"a", "b", "c"}) {
        busy.insert(*t.id(n, "10.0.0.1", idle));
        t.unpin(*t.find(n, "10.0.0.1"));  // the call that made it is done
    }
    // Every host holds something: a fourth is refused, nobody is forgotten.
    EXPECT_FALSE(t.id("d", "10.0.0.1", idle));
    EXPECT_EQ(t.size(), 3u);
    // One lets go: it makes room, the others stay.
    busy.erase(*t.find("b", "10.0.0.1"));
    auto d = t.id("d", "10.0.0.1", idle);
    ASSERT_TRUE(d);
    EXPECT_FALSE(t.find("b", "10.0.0.1"));
    EXPECT_TRUE(t.find("a", "10.0.0.1") && t.find("c", "10.0.0.1"));
    EXPECT_EQ(t.size(), 3u);
}

// A host a call is acting for is pinned: however full the table, it is not forgotten
// under that call (the lock the call takes must not land under an id nobody knows).
TEST(NlmHosts, APinnedHostIsNeverForgotten) {
    HostTable t(1);
    auto always_idle = [](uint64_t) { return true; };
    auto a = t.id("a", "10.0.0.1", always_idle);  // pinned by this call
    ASSERT_TRUE(a);
    EXPECT_FALSE(t.id("b", "10.0.0.1", always_idle)) << "a pinned host made room";
    EXPECT_EQ(t.find("a", "10.0.0.1"), a);
    // FREE_ALL meanwhile keeps the pinned id (what the call takes stays releasable).
    EXPECT_EQ(t.forget("a", "10.0.0.1"), a);
    EXPECT_EQ(t.find("a", "10.0.0.1"), a);
    t.unpin(*a);
    auto b = t.id("b", "10.0.0.1", always_idle);
    ASSERT_TRUE(b);
    EXPECT_FALSE(t.find("a", "10.0.0.1"));
    // Two calls for one host: it stays pinned until both are done.
    t.unpin(*b);
    auto b2 = t.id("b", "10.0.0.1", always_idle);
    auto b3 = t.id("b", "10.0.0.1", always_idle);
    ASSERT_TRUE(b2 && b3);
    t.unpin(*b2);
    EXPECT_FALSE(t.id("c", "10.0.0.1", always_idle));
    t.unpin(*b3);
    EXPECT_TRUE(t.id("c", "10.0.0.1", always_idle));
    t.unpin(*b);  // unpinning a forgotten id is harmless
}

// The sweep forgets hosts that hold nothing, are not pinned and have not been used for a
// while; it says which were monitored (statd must be told) and from where they called.
TEST(NlmHosts, TheSweepTakesIdleUnusedUnpinnedHosts) {
    using Clock = HostTable::Clock;
    HostTable t(8);
    std::set<uint64_t> busy;
    auto idle = [&](uint64_t id) { return !busy.count(id); };
    const Clock::time_point t0 = Clock::now();
    auto a = t.id("a", "10.0.0.1", idle, t0);
    auto b = t.id("b", "10.0.0.2", idle, t0);
    auto c = t.id("c", "10.0.0.2", idle, t0);
    auto d = t.id("d", "10.0.0.4", idle, t0);
    ASSERT_TRUE(a && b && c && d);
    EXPECT_TRUE(t.mark_monitored("a", "10.0.0.1"));
    EXPECT_FALSE(t.mark_monitored("a", "10.0.0.1"));
    t.unpin(*a, t0);
    t.unpin(*b, t0);
    t.unpin(*c, t0 + std::chrono::seconds(100));  // used later
    busy.insert(*b);                              // b holds a lock; d stays pinned
    auto gone = t.take_idle(idle, t0 + std::chrono::seconds(50));
    ASSERT_EQ(gone.size(), 1u);
    EXPECT_EQ(gone[0].name, "a");
    EXPECT_EQ(gone[0].address, "10.0.0.1");
    EXPECT_EQ(gone[0].id, *a);
    EXPECT_TRUE(gone[0].monitored);
    EXPECT_FALSE(t.find("a", "10.0.0.1"));
    EXPECT_FALSE(t.address_in_use("10.0.0.1"));
    EXPECT_TRUE(t.address_in_use("10.0.0.2"));  // b and c
    EXPECT_TRUE(t.find("b", "10.0.0.2") && t.find("c", "10.0.0.2") && t.find("d", "10.0.0.4"));
    // Later: c's turn (not monitored); b still holds its lock, d is still pinned.
    gone = t.take_idle(idle, t0 + std::chrono::seconds(200));
    ASSERT_EQ(gone.size(), 1u);
    EXPECT_EQ(gone[0].name, "c");
    EXPECT_FALSE(gone[0].monitored);
    EXPECT_TRUE(t.address_in_use("10.0.0.2"));  // b
    // A monitored host that FREE_ALL forgot comes back unmonitored: asked for again.
    EXPECT_TRUE(t.mark_monitored("b", "10.0.0.2"));
    busy.erase(*b);
    (void)t.forget("b", "10.0.0.2");
    auto b2 = t.id("b", "10.0.0.2", idle, t0);
    ASSERT_TRUE(b2);
    EXPECT_TRUE(t.mark_monitored("b", "10.0.0.2"));
}

// A host is its name at its address: two machines that call themselves alike (cloned
// VMs, containers named "localhost") are two hosts, with ids, states and NSM watches of
// their own. statd is asked to watch an address once, whichever hosts are there.
TEST(NlmHosts, OneNameAtTwoAddressesIsTwoHosts) {
    HostTable t(8);
    auto never_idle = [](uint64_t) { return false; };
    auto a = t.id("localhost", "10.0.0.1", never_idle);
    auto b = t.id("localhost", "10.0.0.2", never_idle);
    auto c = t.id("other", "10.0.0.2", never_idle);
    ASSERT_TRUE(a && b && c);
    EXPECT_NE(*a, *b);
    EXPECT_EQ(t.find("localhost", "10.0.0.2"), b);
    EXPECT_FALSE(t.find("localhost", "10.0.0.3"));
    t.set_state("localhost", "10.0.0.1", 3);
    t.set_state("localhost", "10.0.0.2", 7);
    EXPECT_EQ(t.state("localhost", "10.0.0.1"), 3);
    EXPECT_EQ(t.state("localhost", "10.0.0.2"), 7);
    EXPECT_EQ(t.named("localhost").size(), 2u);
    auto there = t.at("10.0.0.2");
    ASSERT_EQ(there.size(), 2u);
    EXPECT_TRUE(t.mark_monitored("localhost", "10.0.0.2"));  // watch 10.0.0.2
    EXPECT_FALSE(t.mark_monitored("other", "10.0.0.2"));     // already watched
    EXPECT_TRUE(t.watched("10.0.0.2"));
    EXPECT_FALSE(t.watched("10.0.0.1"));
    t.unpin(*a);
    t.unpin(*b);
    t.unpin(*c);
    EXPECT_EQ(t.forget("localhost", "10.0.0.2"), b);
    EXPECT_EQ(t.find("localhost", "10.0.0.1"), a);  // the other machine keeps its id
    EXPECT_TRUE(t.watched("10.0.0.2"));             // "other" is still watched there
    // A host whose address is not known is watched by its name.
    auto n = t.id("nameonly", "", never_idle);
    ASSERT_TRUE(n);
    EXPECT_TRUE(t.mark_monitored("nameonly", ""));
    EXPECT_TRUE(t.watched("nameonly"));
    EXPECT_FALSE(t.watched(""));
}

}  // namespace
}  // namespace nfsrdmad::nfs::nlm
