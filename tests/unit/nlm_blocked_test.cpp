// NLM's blocked LOCK requests (nfs/nlm/blocked.h): one record per owner and lock, bounded.
#include <gtest/gtest.h>

#include "nfs/nlm/blocked.h"

namespace nfsrdmad::nfs::nlm {
namespace {

Blocked request(uint64_t host, uint32_t svid, uint64_t first, const std::string& cookie) {
    Blocked b;
    b.owner = *vs::StateOwner::nlm(host, svid, {});
    b.lock = vs::Lock{vs::ByteRange{first, first + 9}, vs::LockType::Write};
    b.cookie = cookie;
    return b;
}

TEST(NlmBlocked, ReSendsKeepTheirIdAndTheLatestCookie) {
    BlockedTable t(8);
    auto a = t.put(request(1, 7, 0, "first"));
    auto again = t.put(request(1, 7, 0, "second"));  // the client's lockd re-sends
    ASSERT_TRUE(a && again);
    EXPECT_EQ(*a, *again);
    EXPECT_EQ(t.size(), 1u);
    auto other = t.put(request(1, 7, 100, "x"));  // another range: another request
    ASSERT_TRUE(other);
    EXPECT_NE(*other, *a);
    auto got = t.take(*a);
    ASSERT_TRUE(got);
    EXPECT_EQ(got->cookie, "second");
    EXPECT_EQ(got->id, *a);
    EXPECT_FALSE(t.take(*a));
    t.put_back(std::move(*got));  // queued again: same id
    EXPECT_TRUE(t.take(*a));
}

// The same owner and range on two files are two requests (threads of one process).
TEST(NlmBlocked, OneRecordPerFileOwnerAndLock) {
    BlockedTable t(8);
    Blocked a = request(1, 7, 0, "a"), b = request(1, 7, 0, "b");
    b.file.fsid = 2;
    auto ia = t.put(a), ib = t.put(b);
    ASSERT_TRUE(ia && ib);
    EXPECT_NE(*ia, *ib);
    t.drop(a.file, a.owner, a.lock);
    auto got = t.take(*ib);
    ASSERT_TRUE(got);
    EXPECT_EQ(got->cookie, "b");
}

TEST(NlmBlocked, DropsAndTheBound) {
    BlockedTable t(2);
    ASSERT_TRUE(t.put(request(1, 1, 0, "")));
    ASSERT_TRUE(t.put(request(2, 1, 0, "")));
    EXPECT_FALSE(t.put(request(3, 1, 0, "")));  // full
    const Blocked first = request(1, 1, 0, "");
    t.drop(first.file, first.owner, first.lock);  // CANCEL
    EXPECT_EQ(t.size(), 1u);
    ASSERT_TRUE(t.put(request(3, 1, 0, "")));
    t.drop_client(vs::ClientKey{vs::Protocol::Nlm, 2});  // FREE_ALL
    EXPECT_EQ(t.size(), 1u);
    t.drop_client(vs::ClientKey{vs::Protocol::Nlm, 3});
    EXPECT_EQ(t.size(), 0u);
}

}  // namespace
}  // namespace nfsrdmad::nfs::nlm
