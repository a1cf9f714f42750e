// The dispatch interface: what an RPC program (MOUNT, NFSv3, ...) implements. The
// nfs/ tree depends on this header and on nothing else of transport/.
#pragma once

#include <cstdint>
#include <memory>
#include <vector>

#include "transport/rpc/call.h"
#include "transport/rpc/latency_clock.h"
#include "transport/rpc/op_stats.h"
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
    // WouldBlock: only in a nowait call (CallContext::nowait), before the procedure changed
    // or reserved anything: it would have to block, so it is run again on a worker.
    // `declined` (would_block(false)): it said so before doing any of the call's work (an
    // argument check), so nothing is done twice.
    // Later: the results are a wait-and-retry answer (NFS3ERR_JUKEBOX, NLM4_DENIED_GRACE_
    // PERIOD) for a cause that clears by itself soon (a delegation being recalled, a
    // CB_GETATTR out), and the call did nothing else. The dispatcher either sends them as
    // a success, or, when CallContext::may_defer and the bound allow, sends nothing and the
    // transport runs the same call again a little later (Deferral, dispatcher.h): the
    // client does not wait out its own retry timer (5 s for both answers, Linux).
    enum Kind {
        Success,
        GarbageArgs,
        SystemErr,
        AuthError,
        Drop,
        WouldBlock,
        Later
    } kind = Success;
    uint32_t auth_stat = 0;  // for AuthError
    bool declined = false;   // for WouldBlock
    static Outcome ok() { return {}; }
    static Outcome garbage() { return {GarbageArgs, 0}; }
    static Outcome system_error() { return {SystemErr, 0}; }
    static Outcome auth(uint32_t stat) { return {AuthError, stat}; }
    static Outcome would_block(bool begun = true) { return {WouldBlock, 0, !begun}; }
    static Outcome later() { return {Later, 0}; }
};

class CallContext {
public:
    CallContext(const CallHeader& h, xdr::Decoder& args, xdr::Encoder& res,
                PayloadAllocator& alloc, std::vector<std::unique_ptr<PayloadBuffer>>& payloads)
        : header(h), args(args), res(res), alloc_(alloc), payloads_(payloads) {}

    const CallHeader& header;
    xdr::Decoder& args;
    xdr::Encoder& res;
    CallReport report;  // filled by the procedure, counted by the dispatcher

    // The call runs on a thread that must neither block nor change identity (a reactor's:
    // Dispatcher::dispatch_nowait). The procedure uses only what needs no disk and no
    // identity switch (descriptors the cache holds, data in the page cache) and otherwise
    // answers Outcome::would_block() before any effect.
    // Both transports lend payload memory to a nowait call (RDMA's registered buffers,
    // TCP's loop memory without a pipe), so a small READ from the page cache is one too.
    bool nowait = false;

    // The call may be put off (Outcome::later()): the transport can run it again and it has
    // not been put off too often already (an RPCSEC_GSS call keeps what its first run's
    // auth stage accepted: Deferral::kept). Whether the bounds on calls put off at once let
    // it is the dispatcher's to say, after the call, or when put_off() asks.
    bool may_defer = false;
    // For a procedure that must undo what it began before it answers Outcome::later()
    // (NFSv4.1's SEQUENCE slot): puts the call off now, if may_defer and the bounds let it.
    // true: it is put off, and the procedure undoes its work and answers later(); false: it
    // answers as it would have.
    bool put_off() { return put_off_ && put_off_(put_off_arg_); }
    void set_put_off(bool (*fn)(void*), void* arg) {
        put_off_ = fn;
        put_off_arg_ = arg;
    }

    // The call's time on the worker (latency_clock.h), for a program that times its parts
    // too (NFSv4.1's operations): the dispatcher's reading as the program was called, and
    // the last reading the program took, if it ends the call: the dispatcher then takes
    // that as the call's end instead of reading the clock once more.
    latency::Ticks started = 0;
    latency::Ticks last_reading = 0;

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
    bool (*put_off_)(void*) = nullptr;
    void* put_off_arg_ = nullptr;
};

struct ProcedureInfo {
    bool exists = false;
    bool idempotent = true;  // false: replies go through the duplicate request cache
    const char* name = "";
    // The results begin with the protocol's status (nfsstat3, nfsstat4, mountstat3):
    // the dispatcher counts a non-zero one as an error of this procedure.
    bool status_first = false;
    // The procedure honours CallContext::nowait: it may be tried on a reactor.
    bool nowait = false;
};

class Program {
public:
    virtual ~Program() = default;
    virtual uint32_t number() const = 0;
    // The program's name as rpcbind knows it (RFC 1833; /etc/rpc): a metrics label.
    virtual const char* name() const { return ""; }
    // The versions this object serves; the registry keys programs by (number, version),
    // so another object may serve other versions of the same number.
    virtual std::vector<uint32_t> versions() const = 0;
    virtual ProcedureInfo procedure(uint32_t vers, uint32_t proc) const = 0;
    // Names the values of the status that begins results (ProcedureInfo::status_first).
    virtual OpStats::StatusName status_name(uint32_t /*vers*/) const { return nullptr; }
    // Tables of operations inside this program's procedures (NFSv4.1 COMPOUND), beside
    // the per-procedure table the registry keeps.
    virtual std::vector<std::shared_ptr<const OpStats>> op_stats() const { return {}; }
    // Runs on a worker thread: may block on disk. With ctx.nowait (only for a procedure
    // whose ProcedureInfo says nowait), on a reactor: see CallContext::nowait.
    virtual Outcome call(CallContext& ctx) = 0;
    // A connection (Peer::conn) is gone: state bound to it lets go (NFSv4.1 sessions).
    // Runs on the transport's thread: must not block.
    virtual void connection_closed(uint64_t /*conn*/) {}
};

}  // namespace nfsrdmad::rpc
