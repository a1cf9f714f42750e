// contexts.h — the server-wide table of RPCSEC_GSS contexts (RFC 2203 §5.2.3.1).
//
// One table for the daemon, never one per connection: the Linux client's gssd builds a
// context over a short-lived TCP connection to port 2049 and then uses it on every
// connection of the mount, RDMA included, and seldom destroys it. A context lives until
// the client destroys it (RPCSEC_GSS_DESTROY), its Kerberos ticket runs out (then the
// next call finds it gone and is answered RPCSEC_GSS_CREDPROBLEM, upon which the client
// builds another), or the table is full and it is the one that expires first.
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
#include <span>
#include <string>
#include <unordered_map>
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
    AuthSys identity;                // uid, gid and groups the principal maps to
    std::string principal;           // "alice@REALM"
    std::atomic<bool> ready{false};  // complete: DATA calls may use it
};

class ContextTable {
  public:
    explicit ContextTable(size_t max_contexts);

    // A new handle for `c`, good until `expires`. A full table first lets go of the
    // context that expires first.
    std::vector<uint8_t> insert(std::shared_ptr<Context> c, Clock::time_point expires);
    // The context of `handle`; null when unknown or expired (an expired one goes).
    std::shared_ptr<Context> find(std::span<const uint8_t> handle);
    void set_expiry(std::span<const uint8_t> handle, Clock::time_point expires);
    void erase(std::span<const uint8_t> handle);
    size_t size() const;

  private:
    const size_t max_;
    const uint64_t boot_;  // in every handle: a handle of another boot matches nothing
    mutable std::mutex mu_;
    uint64_t next_ = 1;
    struct Entry {
        std::shared_ptr<Context> ctx;
        Clock::time_point expires;
    };
    std::unordered_map<std::string, Entry> by_handle_;
};

}  // namespace nfsrdmad::rpc::gss
