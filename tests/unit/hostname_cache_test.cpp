// HostnameCache: the names behind hostname client rules, with an injected resolver so the
// tests count its calls and hold it blocked.
#include <arpa/inet.h>
#include <netinet/in.h>

#include <atomic>
#include <condition_variable>
#include <mutex>
#include <thread>
#include <vector>

#include <gtest/gtest.h>

#include "nfs/common/hostname_cache.h"

using nfsrdmad::nfs::HostnameCache;
using nfsrdmad::rpc::Peer;

namespace {

Peer peer(const char* ip, uint16_t port = 700) {
    Peer p;
    auto* a = reinterpret_cast<sockaddr_in*>(&p.addr);
    a->sin_family = AF_INET;
    a->sin_port = htons(port);
    inet_pton(AF_INET, ip, &a->sin_addr);
    p.len = sizeof *a;
    return p;
}

std::string ip_of(const Peer& p) {
    char buf[INET_ADDRSTRLEN];
    inet_ntop(AF_INET, &reinterpret_cast<const sockaddr_in*>(&p.addr)->sin_addr, buf, sizeof buf);
    return buf;
}

}  // namespace

TEST(HostnameCache, RemembersNamesAndFailuresPerAddress) {
    std::atomic<int> calls{0};
    HostnameCache cache([&](const Peer& p) {
        ++calls;
        return ip_of(p) == "10.0.0.1" ? std::string("a.example.com") : std::string();
    });
    EXPECT_EQ(cache.lookup(peer("10.0.0.1")), "a.example.com");
    EXPECT_EQ(cache.lookup(peer("10.0.0.1", 801)), "a.example.com") << "the port does not matter";
    EXPECT_EQ(cache.lookup(peer("10.0.0.2")), "");
    EXPECT_EQ(cache.lookup(peer("10.0.0.2")), "") << "no name is an answer too";
    EXPECT_EQ(calls, 2) << "one resolution per address, negative ones included";
}

TEST(HostnameCache, IsABoundedLeastRecentlyUsedCache) {
    std::vector<std::string> resolved;
    HostnameCache cache(
        [&](const Peer& p) {
            resolved.push_back(ip_of(p));
            return "h-" + ip_of(p);
        },
        3);
    cache.lookup(peer("10.0.0.1"));
    cache.lookup(peer("10.0.0.2"));
    cache.lookup(peer("10.0.0.3"));
    cache.lookup(peer("10.0.0.1"));  // now the most recently used
    cache.lookup(peer("10.0.0.4"));  // evicts 10.0.0.2, the least recently used
    EXPECT_EQ(cache.size(), 3u);
    resolved.clear();
    EXPECT_EQ(cache.lookup(peer("10.0.0.1")), "h-10.0.0.1");
    EXPECT_EQ(cache.lookup(peer("10.0.0.3")), "h-10.0.0.3");
    EXPECT_EQ(cache.lookup(peer("10.0.0.4")), "h-10.0.0.4");
    EXPECT_TRUE(resolved.empty()) << "still cached: nothing is cleared wholesale";
    EXPECT_EQ(cache.lookup(peer("10.0.0.2")), "h-10.0.0.2");
    EXPECT_EQ(resolved, std::vector<std::string>{"10.0.0.2"})
        << "the evicted one is resolved again";
    EXPECT_EQ(cache.size(), 3u);
    for (int i = 0; i < 1000; ++i)
        cache.lookup(
            peer(("10.1." + std::to_string(i / 250) + "." + std::to_string(i % 250)).c_str()));
    EXPECT_EQ(cache.size(), 3u) << "never more than the capacity";
}

TEST(HostnameCache, AtMostMaxResolvingLookupsRunAndOthersDoNotWait) {
    std::mutex mu;
    std::condition_variable cv;
    int running = 0;
    bool release = false;
    std::atomic<int> calls{0};
    HostnameCache cache(
        [&](const Peer& p) {
            ++calls;
            std::unique_lock lock(mu);
            ++running;
            cv.notify_all();
            cv.wait(lock, [&] { return release; });
            return "h-" + ip_of(p);
        },
        100, 2);
    // Two workers stuck in a slow DNS server.
    std::thread a([&] { EXPECT_EQ(cache.lookup(peer("10.0.0.1")), "h-10.0.0.1"); });
    std::thread b([&] { EXPECT_EQ(cache.lookup(peer("10.0.0.2")), "h-10.0.0.2"); });
    {
        std::unique_lock lock(mu);
        cv.wait(lock, [&] { return running == 2; });
    }
    // A third address, and an address already being resolved: answered at once, no name.
    EXPECT_EQ(cache.lookup(peer("10.0.0.3")), "");
    EXPECT_EQ(cache.lookup(peer("10.0.0.1")), "");
    EXPECT_EQ(calls, 2) << "no third resolution while two run";
    {
        std::lock_guard lock(mu);
        release = true;
    }
    cv.notify_all();
    a.join();
    b.join();
    EXPECT_EQ(cache.lookup(peer("10.0.0.1")), "h-10.0.0.1") << "cached once resolved";
    EXPECT_EQ(cache.lookup(peer("10.0.0.3")), "h-10.0.0.3") << "resolved now that a slot is free";
    EXPECT_EQ(calls, 3);
}
