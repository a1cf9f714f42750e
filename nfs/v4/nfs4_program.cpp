#include "nfs/v4/nfs4_program.h"

#include "nfs/v4/compound.h"
#include "nfs/v4/request.h"

namespace nfsrdmad::nfs::v4 {

Nfs4Program::Nfs4Program(std::shared_ptr<vfs::ExportRegistry> exports, const Options& o)
    : svc_(std::move(exports), o), ops_(make_op_table()), op_stats_(make_op_stats()) {}

uint32_t Nfs4Program::number() const {
    return x4::NFS4_PROGRAM;
}

// RFC 8881 §16.1 NULL and §16.2 COMPOUND. COMPOUND does not go through the duplicate
// request cache: a session's slot table gives exactly-once semantics (§2.10.6), and
// the operations allowed outside a session (EXCHANGE_ID, CREATE_SESSION ...) carry
// their own replay rules.
rpc::ProcedureInfo Nfs4Program::procedure(uint32_t, uint32_t proc) const {
    switch (proc) {
        case x4::NFSPROC4_NULL:
            return {true, true, "NULL"};
        case x4::NFSPROC4_COMPOUND: {
            rpc::ProcedureInfo i{true, true, "COMPOUND",
                                 true};  // COMPOUND4res begins with nfsstat4
            i.nowait = true;             // some: Compound::nowait
            return i;
        }
        default:
            return {};
    }
}

rpc::OpStats::StatusName Nfs4Program::status_name(uint32_t) const {
    return nfsstat4_name;
}

rpc::Outcome Nfs4Program::call(rpc::CallContext& ctx) {
    if (ctx.header.proc == x4::NFSPROC4_NULL)
        return ctx.args.remaining() == 0 ? rpc::Outcome::ok() : rpc::Outcome::garbage();
    Request rq(ctx, svc_);
    // §18.36.3 ca_maxrequestsize: "the XDR encoded size of the request, including the RPC
    // headers (including security flavor credentials and verifiers) but excludes any RPC
    // transport framing headers": the call as encoded, WRITE data in read chunks included.
    rq.compound.request_bytes = ctx.args.stream_size();
    rq.compound.nowait = ctx.nowait;
    if (ctx.may_defer) {
        rq.compound.may_defer = true;
        rq.compound.put_off = [&ctx] { return ctx.put_off(); };
    }
    // The operations' times run from the call's start to its end (CallContext::last_reading).
    const bool timed = op_stats_ && ctx.started != 0;
    ctx.last_reading = ctx.started;
    const auto out = run_compound(ops_, rq.compound, ctx.args, ctx.res, op_stats_.get(),
                                  timed ? &ctx.last_reading : nullptr);
    if (out == CompoundOutcome::Garbage) return rpc::Outcome::garbage();
    if (out == CompoundOutcome::WouldBlock) return rpc::Outcome::would_block();
    if (out == CompoundOutcome::Declined) return rpc::Outcome::would_block(/*begun=*/false);
    if (out == CompoundOutcome::Later) return rpc::Outcome::later();
    // Held up on a run that may not be put off (the last of a call put off before, or no
    // transport to run it again): the NFS4ERR_DELAY answer goes, and Later (which the
    // dispatcher sends as it is, since may_defer is false) has it counted as a call held up
    // to the end (defer_gave_up).
    if (rq.compound.held_up && !ctx.may_defer && !ctx.nowait) return rpc::Outcome::later();
    return rpc::Outcome::ok();
}

void Nfs4Program::connection_closed(uint64_t conn) {
    svc_.clients.connection_closed(conn);
    svc_.callbacks.connection_closed(conn);
}

}  // namespace nfsrdmad::nfs::v4
