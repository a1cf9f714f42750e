// Pipes for spliced READ payloads on TCP (rpc::PayloadBuffer::splice_fd).
//
//   file page cache ──splice──► pipe ──splice──► socket      (worker, then reactor)
//
// Each pipe is sized to hold a whole READ (F_SETPIPE_SZ); empty pipes go back to the
// pool, a pipe that still holds data (its connection died mid-send) is closed.
#pragma once

#include <cstddef>
#include <memory>
#include <mutex>
#include <string>
#include <vector>

#include "transport/engine/unique_fd.h"

namespace nfsrdmad::tcp {

class PipePool : public std::enable_shared_from_this<PipePool> {
  public:
    struct Pipe {
        engine::UniqueFd read_end, write_end;
    };
    class Lease;

    // Pipes of `bytes` (or, where that is not allowed, 1 MiB); at most `keep` idle ones
    // are kept and at most `max_leased` are handed out at once (each holds two
    // descriptors and up to `bytes` of page references until its reply is sent).
    static std::shared_ptr<PipePool> create(size_t bytes, size_t keep = 64,
                                            size_t max_leased = 256);

    // nullptr when `max_leased` pipes are out or no pipe of that size can be made (that
    // reason is logged once): callers read into memory instead.
    std::unique_ptr<Lease> get();
    size_t idle() const;
    size_t leased() const;

  private:
    PipePool(size_t bytes, size_t keep, size_t max_leased)
        : bytes_(bytes), keep_(keep), max_leased_(max_leased) {}
    void put(Pipe p);

    const size_t bytes_, keep_, max_leased_;
    mutable std::mutex mu_;
    std::vector<Pipe> idle_;
    size_t leased_ = 0;
    bool warned_ = false;
};

class PipePool::Lease {
  public:
    Lease(std::shared_ptr<PipePool> pool, Pipe p) : pool_(std::move(pool)), pipe_(std::move(p)) {}
    ~Lease();
    Lease(const Lease&) = delete;
    Lease& operator=(const Lease&) = delete;
    int read_end() const { return pipe_.read_end.get(); }
    int write_end() const { return pipe_.write_end.get(); }

  private:
    std::shared_ptr<PipePool> pool_;
    Pipe pipe_;
};

}  // namespace nfsrdmad::tcp
