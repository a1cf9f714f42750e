// NLM's host table (nfs/nlm/hosts.h): a bounded map of caller names to ids.
#include <gtest/gtest.h>

#include <set>

#include "nfs/nlm/hosts.h"

namespace nfsrdmad::nfs::nlm {
namespace {

TEST(NlmHosts, OneIdPerNameNeverReused) {
    HostTable t(8);
    auto never_idle = [](uint64_t) { return false; };
    auto a = t.id("a", never_idle), b = t.id("b", never_idle);
    ASSERT_TRUE(a && b);
    t.unpin(*a);  // the calls that made them are done
    t.unpin(*b);
    EXPECT_NE(*a, *b);
    EXPECT_EQ(t.id("a", never_idle), a);
    t.unpin(*a);
    EXPECT_EQ(t.find("b"), b);
    EXPECT_EQ(t.forget("a"), a);
    EXPECT_FALSE(t.find("a"));
    auto again = t.id("a", never_idle);
    ASSERT_TRUE(again);
    EXPECT_NE(*again, *a);  // a new incarnation, not the old id
    EXPECT_FALSE(t.forget("never-seen"));
}

TEST(NlmHosts, FullTableForgetsIdleHostsOrRefuses) {
    HostTable t(3);
    std::set<uint64_t> busy;
    auto idle = [&](uint64_t id) { return !busy.count(id); };
    for (const char* n : {"a", "b", "c"}) {
        busy.insert(*t.id(n, idle));
        t.unpin(*t.find(n));  // the call that made it is done
    }
    // Every host holds something: a fourth is refused, nobody is forgotten.
    EXPECT_FALSE(t.id("d", idle));
    EXPECT_EQ(t.size(), 3u);
    // One lets go: it makes room, the others stay.
    busy.erase(*t.find("b"));
    auto d = t.id("d", idle);
    ASSERT_TRUE(d);
    EXPECT_FALSE(t.find("b"));
    EXPECT_TRUE(t.find("a") && t.find("c"));
    EXPECT_EQ(t.size(), 3u);
}

// A host a call is acting for is pinned: however full the table, it is not forgotten
// under that call (the lock the call takes must not land under an id nobody knows).
TEST(NlmHosts, APinnedHostIsNeverForgotten) {
    HostTable t(1);
    auto always_idle = [](uint64_t) { return true; };
    auto a = t.id("a", always_idle);  // pinned by this call
    ASSERT_TRUE(a);
    EXPECT_FALSE(t.id("b", always_idle)) << "a pinned host made room";
    EXPECT_EQ(t.find("a"), a);
    // FREE_ALL meanwhile keeps the pinned id (what the call takes stays releasable).
    EXPECT_EQ(t.forget("a"), a);
    EXPECT_EQ(t.find("a"), a);
    t.unpin(*a);
    auto b = t.id("b", always_idle);
    ASSERT_TRUE(b);
    EXPECT_FALSE(t.find("a"));
    // Two calls for one host: it stays pinned until both are done.
    t.unpin(*b);
    auto b2 = t.id("b", always_idle);
    auto b3 = t.id("b", always_idle);
    ASSERT_TRUE(b2 && b3);
    t.unpin(*b2);
    EXPECT_FALSE(t.id("c", always_idle));
    t.unpin(*b3);
    EXPECT_TRUE(t.id("c", always_idle));
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
    auto a = t.id("a", idle, "10.0.0.1", t0);
    auto b = t.id("b", idle, "10.0.0.2", t0);
    auto c = t.id("c", idle, "10.0.0.2", t0);
    auto d = t.id("d", idle, "10.0.0.4", t0);
    ASSERT_TRUE(a && b && c && d);
    EXPECT_TRUE(t.mark_monitored("a"));
    EXPECT_FALSE(t.mark_monitored("a"));
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
    EXPECT_FALSE(t.find("a"));
    EXPECT_FALSE(t.address_in_use("10.0.0.1"));
    EXPECT_TRUE(t.address_in_use("10.0.0.2"));  // b and c
    EXPECT_TRUE(t.find("b") && t.find("c") && t.find("d"));
    // Later: c's turn (not monitored); b still holds its lock, d is still pinned.
    gone = t.take_idle(idle, t0 + std::chrono::seconds(200));
    ASSERT_EQ(gone.size(), 1u);
    EXPECT_EQ(gone[0].name, "c");
    EXPECT_FALSE(gone[0].monitored);
    EXPECT_TRUE(t.address_in_use("10.0.0.2"));  // b
    // A monitored host that FREE_ALL forgot comes back unmonitored: asked for again.
    EXPECT_TRUE(t.mark_monitored("b"));
    busy.erase(*b);
    (void)t.forget("b");
    auto b2 = t.id("b", idle, "10.0.0.2", t0);
    ASSERT_TRUE(b2);
    EXPECT_TRUE(t.mark_monitored("b"));
}

}  // namespace
}  // namespace nfsrdmad::nfs::nlm
