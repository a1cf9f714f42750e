// NLM against NFSv4.1 courtesy clients (nfs/nlm/services.h lock(), test()): a lock of an
// NFSv4.1 client whose lease has expired is no reason to deny an NLM host; the client is
// reaped (Options::reap_lock_holder, which the daemon wires to NFSv4.1) and the request
// runs again. A live holder denies as before.
#include <gtest/gtest.h>

#include <set>

#include "nfs/nlm/services.h"

namespace nfsrdmad::nfs::nlm {
namespace {

TEST(NlmCourtesy, AnExpiredNfs4HolderIsReapedALiveOneDenies) {
    std::shared_ptr<vs::LockTable> table = std::make_shared<vs::LockTable>();
    std::set<uint64_t> expired{7};
    std::vector<uint64_t> reaped;
    Options o;
    o.locks = table;
    o.reap_lock_holder = [&](const vs::Conflict& c) {
        if (!c.owner || c.owner->client().protocol != vs::Protocol::Nfs4) return false;
        const uint64_t id = c.owner->client().id;
        if (!expired.count(id)) return false;
        reaped.push_back(id);
        (void)table->release_client(c.owner->client());
        return true;
    };
    Services svc(nullptr, o);
    vs::FileKey file;
    file.fsid = 1;
    const uint8_t b[] = {1, 2};
    auto v4_expired = *vs::StateOwner::make({vs::Protocol::Nfs4, 7}, b);
    auto v4_live = *vs::StateOwner::make({vs::Protocol::Nfs4, 8}, b);
    auto host = *vs::StateOwner::nlm(1, 1, {});
    const vs::Lock low{{0, 9}, vs::LockType::Write}, high{{100, 109}, vs::LockType::Write};
    ASSERT_FALSE(table->lock(file, v4_expired, low)->denied);
    ASSERT_FALSE(table->lock(file, v4_live, high)->denied);

    // TEST finds the courtesy client's lock: reaped, and the answer is "free".
    auto t = svc.test(file, host, low, nullptr);
    ASSERT_TRUE(t);
    EXPECT_FALSE(*t);
    EXPECT_EQ(reaped, std::vector<uint64_t>{7});
    // LOCK on the live client's bytes: denied, nobody reaped.
    auto r = svc.lock(file, host, high, std::nullopt, nullptr);
    ASSERT_TRUE(r);
    EXPECT_TRUE(r->denied);
    EXPECT_EQ(reaped.size(), 1u);
    // Once the live client's lease runs out too, LOCK reaps it and is granted.
    expired.insert(8);
    r = svc.lock(file, host, high, std::nullopt, nullptr);
    ASSERT_TRUE(r);
    EXPECT_FALSE(r->denied);
    EXPECT_EQ(reaped, (std::vector<uint64_t>{7, 8}));
}

}  // namespace
}  // namespace nfsrdmad::nfs::nlm
