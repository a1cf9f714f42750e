// Plain types shared by the NFSv4.1 state machines (RFC 8881): status codes, ids, the
// injectable clock. No I/O, no threads, no transport: the COMPOUND operations decode, call
// these state machines, and encode.
//
// Status codes are the generated nfsstat4 enum (RFC 5662 numbers); state_protect_how4 and
// the operation numbers come from the same header.
#pragma once

#include <time.h>

#include <array>
#include <chrono>
#include <cstdint>
#include <string>
#include <vector>

#include "xdr/nfs4_prot.h"

namespace nfsrdmad::nfs::v4::state {

namespace x4 = xdr::nfs4;
using Status = x4::nfsstat4;

using ClientId = uint64_t;                  // clientid4: boot epoch << 32 | counter
using Verifier = std::array<uint8_t, 8>;    // co_verifier (verifier4)
using SessionId = std::array<uint8_t, 16>;  // sessionid4
using ConnId = uint64_t;                    // a transport connection, opaque to this code
using OpSet = std::vector<uint32_t>;        // bitmap4 of operation numbers (spo_must_*)

using Time = std::chrono::steady_clock::time_point;

// The time source. The daemon passes SteadyClock; tests pass a clock they advance by hand.
class Clock {
  public:
    virtual ~Clock() = default;
    virtual Time now() const = 0;
};

// Leases, grace periods and delegation recalls count in seconds: the kernel's coarse
// monotonic clock (the same epoch as steady_clock, at most one tick behind it) serves, and
// is read from the vDSO on every clock source. CLOCK_MONOTONIC is a system call where the
// clock source has no vDSO reader (hpet, acpi_pm: virtual machines), and a COMPOUND asks
// for the time several times.
class SteadyClock final : public Clock {
  public:
    Time now() const override {
        struct timespec ts;
        ::clock_gettime(CLOCK_MONOTONIC_COARSE, &ts);
        return Time(std::chrono::duration_cast<Time::duration>(
            std::chrono::seconds(ts.tv_sec) + std::chrono::nanoseconds(ts.tv_nsec)));
    }
};

// bitmap4 helpers: operation n is bit n % 32 of word n / 32.
inline bool op_in(const OpSet& set, uint32_t op) {
    return op / 32 < set.size() && (set[op / 32] >> (op % 32) & 1u) != 0;
}
inline void op_add(OpSet& set, uint32_t op) {
    if (set.size() <= op / 32) set.resize(op / 32 + 1);
    set[op / 32] |= 1u << (op % 32);
}
inline OpSet op_intersect(const OpSet& a, const OpSet& b) {
    OpSet out(std::min(a.size(), b.size()));
    for (size_t i = 0; i < out.size(); ++i) out[i] = a[i] & b[i];
    while (!out.empty() && out.back() == 0) out.pop_back();
    return out;
}

// A client's boot epoch sits in the high half of every clientid4 and the first word of every
// sessionid4 and stateid4 "other", so an id from an earlier server instance is recognized as
// stale (RFC 8881 §8.4: a client ID the server no longer knows gets NFS4ERR_STALE_CLIENTID).
inline uint32_t epoch_of(ClientId id) {
    return static_cast<uint32_t>(id >> 32);
}

}  // namespace nfsrdmad::nfs::v4::state
