// Names of peers for hostname client rules (exports(5) "*.lab.example.com"), bounded so
// that many source addresses cannot tie up the workers that resolve them:
//
//   - at most `capacity` addresses are remembered, least recently used first out;
//     failures ("no name") are remembered like names, for the same time;
//   - at most `max_resolving` lookups run at once, and one address is looked up once.
//     A caller that finds them busy does not wait: the peer has no name yet, so no
//     hostname rule matches it this time (a later call may find the name cached).
//
// The resolver is injected (tests count and block its calls); the daemon's does
// forward-confirmed reverse DNS, which may block for the resolver's timeout.
#pragma once

#include <chrono>
#include <cstddef>
#include <functional>
#include <list>
#include <mutex>
#include <string>
#include <unordered_map>
#include <unordered_set>

#include "transport/rpc/call.h"

namespace nfsrdmad::nfs {

class HostnameCache {
  public:
    using Resolver = std::function<std::string(const rpc::Peer&)>;  // "": no verified name
    using Clock = std::chrono::steady_clock;

    explicit HostnameCache(Resolver resolver, size_t capacity = 10000, size_t max_resolving = 2,
                           Clock::duration ttl = std::chrono::minutes(5));

    // The peer's name, "" when it has none or it is not known yet. Blocks only while this
    // caller itself runs the resolver.
    std::string lookup(const rpc::Peer& peer);
    size_t size() const;

  private:
    struct Entry {
        std::string key;  // the address, without port
        std::string name;
        Clock::time_point expires;
    };

    const Resolver resolver_;
    const size_t capacity_, max_resolving_;
    const Clock::duration ttl_;
    mutable std::mutex mu_;
    std::list<Entry> lru_;  // most recently used first
    std::unordered_map<std::string, std::list<Entry>::iterator> index_;
    std::unordered_set<std::string> resolving_;
};

}  // namespace nfsrdmad::nfs
