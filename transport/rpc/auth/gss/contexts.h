// contexts.h — the server-wide table of RPCSEC_GSS contexts (RFC 2203 §5.2.3.1).
//
// One table for the daemon, never one per connection: the Linux client's gssd builds a
// context over a short-lived TCP connection to port 2049 and then uses it on every
// connection of the mount, RDMA included, and seldom destroys it. A context lives until
// the client destroys it (RPCSEC_GSS_DESTROY), its Kerberos ticket runs out (then the
// next call finds it gone and is answered RPCSEC_GSS_CREDPROBLEM, upon which the client
// builds another), or room is needed for a new one.
//
// Bounds (Limits), each making room by letting go of the context that expires first
// among those it counts: all contexts; contexts of one principal (a client that builds
// many, or renews its ticket often without DESTROY, pushes out only its own); contexts
// not yet complete (CONTINUE_INIT to come; they live kIncompleteLife at most).
//
// Handles are 16 random bytes: knowing one's own handle says nothing about another's.
//
// Owner: the table, through shared_ptr; a call holds its context until its reply is
// built, so a DESTROY racing a call frees nothing in use. Thread-safe: the table has
// one mutex; each context has its own for the mechanism's calls and its window.
#pragma once

#include <atomic>
#include <chrono>
#include <cstddef>
#include <cstdint>
#include <memory>
#include <mutex>
#include <optional>
#include <set>
#include <span>
#include <string>
#include <unordered_map>
#include <utility>
#include <vector>

#include "transport/rpc/auth/gss/mech.h"
#include "transport/rpc/auth/gss/seq_window.h"
#include "transport/rpc/call.h"

namespace nfsrdmad::rpc::gss {

using Clock = std::chrono::steady_clock;

struct Context {
    explicit Context(uint32_t window) : window(window) {}

    std::mutex mu;  // sec and window
    SecContext sec;
    SeqWindow window;
    // Written before `ready` is set, read-only after:
    std::optional<AuthSys> identity;  // uid, gid and groups it maps to; none: anonymous
    std::string principal;           // "alice@REALM"
    std::atomic<bool> ready{false};  // complete: DATA calls may use it
};

class ContextTable {
  public:
    struct Limits {
        size_t max = 65536;
        size_t per_principal = 4096;
        size_t incomplete = 1024;
    };
    explicit ContextTable(Limits limits);

    // A new handle for `c`, good until `expires`: complete (of `principal`) or not.
    std::vector<uint8_t> insert(std::shared_ptr<Context> c, Clock::time_point expires,
                                const std::string& principal, bool complete);
    // An incomplete context of `handle` is complete now. False: it went meanwhile.
    bool complete(std::span<const uint8_t> handle, Clock::time_point expires,
                  const std::string& principal);
    // The context of `handle`; null when unknown or expired (an expired one goes).
    std::shared_ptr<Context> find(std::span<const uint8_t> handle);
    void erase(std::span<const uint8_t> handle);
    size_t size() const;

  private:
    struct Entry {
        std::shared_ptr<Context> ctx;
        Clock::time_point expires;
        std::string principal;  // "" while incomplete
    };
    using Index = std::set<std::pair<Clock::time_point, std::string>>;  // (expiry, handle)

    void index(const std::string& key, const Entry& e);
    void erase_locked(std::string key);  // a copy: callers pass keys held by the indexes
    void make_room(const std::string& principal, bool complete);
    std::string fresh_handle() const;

    const Limits limits_;
    mutable std::mutex mu_;
    std::unordered_map<std::string, Entry> by_handle_;
    Index all_, incomplete_;
    std::unordered_map<std::string, Index> by_principal_;
};

}  // namespace nfsrdmad::rpc::gss
