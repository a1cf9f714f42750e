// seq_window.h — the RPCSEC_GSS replay window of one context (RFC 2203 §5.3.3.1), pure.
//
// The server remembers the highest sequence number it has seen and which of the
// `size` numbers at and below it it has seen. A number above the highest moves the
// window up; one inside the window is new once; one below the window, or seen before, is
// dropped without a reply (the RFC's choice: the client retransmits with a new number).
// The window is large (the daemon's default is 4096, sent to the client in
// rpc_gss_init_res.seq_window): a client with many calls in flight over RDMA, each
// krb5p call slow to unwrap, numbers calls far ahead of the oldest one still queued.
//
// Not thread-safe: the context that owns it holds a lock around accept().
#pragma once

#include <cstdint>
#include <vector>

namespace nfsrdmad::rpc::gss {

class SeqWindow {
  public:
    explicit SeqWindow(uint32_t size);

    enum class Verdict { New, Replay, TooOld };
    // Records `seq` when it is new.
    Verdict accept(uint32_t seq);
    uint32_t size() const { return size_; }

  private:
    bool seen(uint32_t seq) const;
    void mark(uint32_t seq, bool on);

    uint32_t size_;
    bool any_ = false;
    uint32_t highest_ = 0;
    std::vector<uint64_t> bits_;  // bit (seq % size_): seen, for seq in the window
};

}  // namespace nfsrdmad::rpc::gss
