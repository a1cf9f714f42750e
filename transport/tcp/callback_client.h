// callback_client.h — RPC calls to clients over TCP (rpc::CallbackSender), run as events
// on a reactor: nothing waits on a client. Per call:
//
//   connect to the client's rpcbind (port 111), PMAPPROC_GETPORT (RFC 1833 §3.2, portmap
//   version 2) for the program, version and TCP -> the port
//   connect there, send the call (record marking, RFC 5531 §11), read the reply
//   done(result), on a worker (`run`), once
//
// Every call has a deadline (Options::timeout) covering all of it; a client that does not
// answer costs one timer and a socket until then. At most Options::max_in_flight calls at
// once: past it call() refuses (the caller's bound). Replies are bounded (64 KiB).
// Calls go out with AUTH_NONE (RFC 5531 §8.1; what NLM and NSM callbacks need), from a
// reserved port when possible.
#pragma once

#include <atomic>
#include <chrono>
#include <cstdint>
#include <functional>
#include <memory>

#include "transport/engine/reactor.h"
#include "transport/rpc/callback.h"

namespace nfsrdmad::tcp {

class CallbackClient final : public rpc::CallbackSender {
  public:
    struct Options {
        uint16_t rpcbind_port = 111;
        std::chrono::milliseconds timeout{10000};
        size_t max_in_flight = 256;
        // From a reserved source port (< 1024, when the process may bind one), as the
        // kernel's lockd and sm-notify call: some peers accept NSM calls only so.
        bool reserved_port = true;
    };
    // `run` runs `done` off the reactor (a worker pool's submit). The reactor must outlive
    // every call (stop it before destroying what `done` uses).
    CallbackClient(engine::Reactor& reactor, std::function<void(std::function<void()>)> run,
                   Options o);
    CallbackClient(engine::Reactor& reactor, std::function<void(std::function<void()>)> run)
        : CallbackClient(reactor, std::move(run), Options{}) {}

    bool call(rpc::OutgoingCall c, std::function<void(rpc::CallbackResult)> done) override;

    size_t in_flight() const { return in_flight_->load(); }

  private:
    struct Call;
    engine::Reactor& reactor_;
    std::function<void(std::function<void()>)> run_;
    const Options opts_;
    std::shared_ptr<std::atomic<size_t>> in_flight_ = std::make_shared<std::atomic<size_t>>(0);
    std::atomic<uint32_t> xid_{0x6e6c6d00};
};

}  // namespace nfsrdmad::tcp
