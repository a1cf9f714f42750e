// The dispatch interface: what an RPC program (MOUNT, NFSv3, ...) implements. The
// nfs/ tree depends on this header and on nothing else of transport/.
#pragma once

#include <cstdint>
#include <memory>
#include <vector>

#include "transport/rpc/call.h"
#include "xdr/runtime/xdr.h"

namespace nfsrdmad::rpc {

struct CallHeader {
    uint32_t xid = 0;
    uint32_t prog = 0;
    uint32_t vers = 0;
    uint32_t proc = 0;
    Credential cred;
    const Peer* peer = nullptr;
};

// What a procedure handler returns (RFC 5531 §9: accept_stat / auth_stat).
struct Outcome {
    enum Kind { Success, GarbageArgs, SystemErr, AuthError, Drop } kind = Success;
    uint32_t auth_stat = 0;  // for AuthError
    static Outcome ok() { return {}; }
    static Outcome garbage() { return {GarbageArgs, 0}; }
    static Outcome system_error() { return {SystemErr, 0}; }
    static Outcome auth(uint32_t stat) { return {AuthError, stat}; }
};

class CallContext {
public:
    CallContext(const CallHeader& h, xdr::Decoder& args, xdr::Encoder& res,
                PayloadAllocator& alloc, std::vector<std::unique_ptr<PayloadBuffer>>& payloads)
        : header(h), args(args), res(res), alloc_(alloc), payloads_(payloads) {}

    const CallHeader& header;
    xdr::Decoder& args;
    xdr::Encoder& res;

    // Memory for a reply payload; it lives until the reply has been sent, as does every
    // other one this call asked for (a COMPOUND may return several). nullptr when the
    // transport has none free at the moment.
    // Encode it with res.add_external(...) then res.put_opaque(...).
    PayloadBuffer* payload_buffer(size_t bytes) {
        auto b = alloc_.allocate(bytes);
        if (!b) return nullptr;
        payloads_.push_back(std::move(b));
        return payloads_.back().get();
    }

private:
    PayloadAllocator& alloc_;
    std::vector<std::unique_ptr<PayloadBuffer>>& payloads_;
};

struct ProcedureInfo {
    bool exists = false;
    bool idempotent = true;  // false: replies go through the duplicate request cache
    const char* name = "";
};

class Program {
public:
    virtual ~Program() = default;
    virtual uint32_t number() const = 0;
    // The versions this object serves; the registry keys programs by (number, version),
    // so another object may serve other versions of the same number.
    virtual std::vector<uint32_t> versions() const = 0;
    virtual ProcedureInfo procedure(uint32_t vers, uint32_t proc) const = 0;
    // Runs on a worker thread: may block on disk.
    virtual Outcome call(CallContext& ctx) = 0;
    // A connection (Peer::conn) is gone: state bound to it lets go (NFSv4.1 sessions).
    // Runs on the transport's thread: must not block.
    virtual void connection_closed(uint64_t /*conn*/) {}
};

}  // namespace nfsrdmad::rpc
