// Credit-based flow control (RFC 8166 §3.3.1). We grant a fixed number of credits,
// never more than receives we keep posted (the seeds' notes §4.4: implementations use a
// fixed value). A call uses a credit from its arrival until its reply is sent; a peer
// with more calls outstanding than granted broke the protocol and is disconnected.
#pragma once

#include <cstdint>

namespace nfsrdmad::rdma {

class CreditWindow {
public:
    explicit CreditWindow(uint32_t granted) : granted_(granted ? granted : 1) {}

    uint32_t granted() const { return granted_; }
    uint32_t outstanding() const { return outstanding_; }

    // A call arrived. False: the peer exceeded its credits.
    bool on_call() {
        if (outstanding_ >= granted_) return false;
        ++outstanding_;
        return true;
    }
    // Its reply (or RDMA_ERROR) was sent, or the call was dropped.
    void on_reply() {
        if (outstanding_) --outstanding_;
    }

private:
    uint32_t granted_;
    uint32_t outstanding_ = 0;
};

}  // namespace nfsrdmad::rdma
