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
    EXPECT_NE(*a, *b);
    EXPECT_EQ(t.id("a", never_idle), a);
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
    for (const char* n : {"a", "b", "c"}) busy.insert(*t.id(n, idle));
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

}  // namespace
}  // namespace nfsrdmad::nfs::nlm
