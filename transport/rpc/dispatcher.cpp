#include "transport/rpc/dispatcher.h"

#include <spdlog/spdlog.h>

#include "transport/rpc/message.h"
#include "xdr/rpc_prot.h"

namespace nfsrdmad::rpc {

namespace x = xdr::rpc;

void Dispatcher::add(std::shared_ptr<Program> p) { programs_[p->number()] = std::move(p); }

std::optional<Reply> Dispatcher::dispatch(const Message& msg, const Peer& peer,
                                          PayloadAllocator& alloc) {
    counters_.calls++;
    DecodedCall dc = decode_call(msg.bytes);
    Reply r;
    switch (dc.status) {
        case DecodedCall::NotACall:
        case DecodedCall::Undecodable:
            counters_.dropped++;
            spdlog::debug("rpc: dropping undecodable message from {}", peer.text);
            return std::nullopt;
        case DecodedCall::RpcMismatch:
            encode_rpc_mismatch(r.bytes, dc.header.xid);
            return r;
        case DecodedCall::BadCred:
            counters_.auth_errors++;
            encode_auth_error(r.bytes, dc.header.xid, dc.auth_stat);
            return r;
        case DecodedCall::Ok:
            break;
    }
    CallHeader& h = dc.header;
    h.peer = &peer;
    auto it = programs_.find(h.prog);
    if (it == programs_.end()) {
        counters_.prog_unavail++;
        encode_accepted(r.bytes, h.xid, x::PROG_UNAVAIL);
        return r;
    }
    Program& prog = *it->second;
    if (h.vers < prog.min_version() || h.vers > prog.max_version()) {
        counters_.prog_mismatch++;
        encode_prog_mismatch(r.bytes, h.xid, prog.min_version(), prog.max_version());
        return r;
    }
    ProcedureInfo info = prog.procedure(h.vers, h.proc);
    if (!info.exists) {
        counters_.proc_unavail++;
        encode_accepted(r.bytes, h.xid, x::PROC_UNAVAIL);
        return r;
    }
    if (info.idempotent) return run(msg, h, dc.args_offset, prog, alloc);

    auto args = msg.bytes.subspan(dc.args_offset);
    ReplyCache::Key key{peer.text, h.xid, h.prog, h.vers, h.proc,
                        hash_bytes(args.data(), args.size())};
    switch (cache_.begin(key, r.bytes)) {
        case ReplyCache::Lookup::Done:
            counters_.cache_replays++;
            return r;
        case ReplyCache::Lookup::InProgress:
            counters_.dropped++;
            return std::nullopt;
        case ReplyCache::Lookup::New:
            break;
    }
    auto reply = run(msg, h, dc.args_offset, prog, alloc);
    // A reply with payload segments is not cached: the cache keeps inline bytes only.
    if (reply && reply->payloads.empty())
        cache_.finish(key, reply->bytes);
    else
        cache_.abandon(key);
    return reply;
}

std::optional<Reply> Dispatcher::run(const Message& msg, const CallHeader& h,
                                     size_t args_offset, Program& prog,
                                     PayloadAllocator& alloc) {
    Reply r;
    encode_accepted(r.bytes, h.xid, x::SUCCESS);
    xdr::Decoder args(msg.bytes.subspan(args_offset), args_offset);
    args.set_read_chunks(msg.read_chunks);
    xdr::Encoder res(r.bytes);
    CallContext ctx(h, args, res, alloc, r.payload_owners);
    Outcome out = prog.call(ctx);
    // RFC 8166 §4.5.2: a read chunk that matches no XDR data item of the arguments is a
    // mismatch between chunk offsets and the Payload stream: GARBAGE_ARGS. (Linux svc_rdma
    // splices each chunk into the arguments at its position, so there a misplaced chunk
    // garbles them and the procedure's decoder usually answers GARBAGE_ARGS.) Programs
    // check before acting (nfs/v3 Request::decode); this catches the rest.
    if (out.kind == Outcome::Success && args.unconsumed_chunks() != 0) out = Outcome::garbage();
    switch (out.kind) {
        case Outcome::Success:
            r.payloads = res.externals();
            return r;
        case Outcome::Drop:
            counters_.dropped++;
            return std::nullopt;
        case Outcome::GarbageArgs:
            counters_.garbage_args++;
            break;
        case Outcome::SystemErr:
            counters_.system_errors++;
            break;
        case Outcome::AuthError:
            counters_.auth_errors++;
            break;
    }
    // Replace whatever the handler wrote with the error reply.
    Reply err;
    if (out.kind == Outcome::AuthError)
        encode_auth_error(err.bytes, h.xid, out.auth_stat);
    else
        encode_accepted(err.bytes, h.xid,
                        out.kind == Outcome::GarbageArgs ? x::GARBAGE_ARGS : x::SYSTEM_ERR);
    return err;
}

}  // namespace nfsrdmad::rpc
