// Credit-based flow control (RFC 8166 §3.3.1).
//
// The receives behind the credits are shared by every connection on a device (a shared
// receive queue), so the grant is not fixed: each connection gets an equal share of the
// receive buffers calls may hold (credit_share), at most the configured per-connection
// maximum and at least one. RFC 8166 §3.3.1 lets a responder change its grant in any
// reply; the requester adjusts when it reads it. The grant therefore falls as
// connections arrive and rises as they leave, and the memory behind it stays fixed.
//
// A call uses a credit from its arrival until its reply is sent. A lowered grant reaches
// the requester only with a later reply, so calls it sent before that may still exceed
// the new grant: the overrun test is against the largest grant this connection has ever
// been sent (its ceiling), never more than the configured maximum. A peer past that broke
// the protocol and is disconnected.
#pragma once

#include <algorithm>
#include <cstddef>
#include <cstdint>

namespace nfsrdmad::rdma {

// The grant of each of `connections` connections sharing `budget` receive buffers.
inline uint32_t credit_share(size_t budget, size_t connections, uint32_t max) {
    const size_t share = budget / std::max<size_t>(connections, 1);
    return static_cast<uint32_t>(std::clamp<size_t>(share, 1, std::max<uint32_t>(max, 1)));
}

class CreditWindow {
  public:
    explicit CreditWindow(uint32_t granted) : granted_(granted ? granted : 1), ceiling_(granted_) {}

    uint32_t granted() const { return granted_; }
    uint32_t ceiling() const { return ceiling_; }
    uint32_t outstanding() const { return outstanding_; }

    // The grant the next reply carries (at least one: RFC 8166 §3.3.1 has the requester
    // wait for a grant, and a grant of zero would leave it waiting forever).
    uint32_t grant(uint32_t g) {
        granted_ = g ? g : 1;
        ceiling_ = std::max(ceiling_, granted_);
        return granted_;
    }

    // A call arrived. False: the peer exceeded every grant it was ever sent.
    bool on_call() {
        if (outstanding_ >= ceiling_) return false;
        ++outstanding_;
        return true;
    }
    // Its reply (or RDMA_ERROR) was sent, or the call was dropped.
    void on_reply() {
        if (outstanding_) --outstanding_;
    }

  private:
    uint32_t granted_;
    uint32_t ceiling_;
    uint32_t outstanding_ = 0;
};

}  // namespace nfsrdmad::rdma
