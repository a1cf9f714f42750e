// callback.h — RPC calls this server makes to a client: NLM's GRANTED when a blocked
// lock becomes free (XNFS NLM v4), later the NFSv4.1 backchannel. nfs/ sees only this
// interface; a transport implements it (transport/tcp/callback_client.h).
//
// A call is an event, never a parked thread: call() queues it and returns at once; the
// result comes to `done` later, on the transport's thread (keep it short, never block).
#pragma once

#include <sys/socket.h>

#include <cstdint>
#include <functional>
#include <string>
#include <vector>

namespace nfsrdmad::rpc {

struct OutgoingCall {
    sockaddr_storage peer{};  // the client's address; the port is looked up (rpcbind)
    socklen_t peer_len = 0;
    uint32_t prog = 0, vers = 0, proc = 0;
    std::vector<uint8_t> args;  // XDR-encoded arguments
};

struct CallbackResult {
    bool ok = false;               // an accepted, successful reply came back
    std::string error;             // why not, for the log
    std::vector<uint8_t> results;  // the procedure's results when ok
};

class CallbackSender {
  public:
    virtual ~CallbackSender() = default;
    // false: not queued (too many calls in flight: the bound); `done` is not called.
    virtual bool call(OutgoingCall c, std::function<void(CallbackResult)> done) = 0;
};

}  // namespace nfsrdmad::rpc
