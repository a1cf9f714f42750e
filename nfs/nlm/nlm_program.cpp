#include "nfs/nlm/nlm_program.h"

#include <iterator>

#include "nfs/nlm/request.h"

namespace nfsrdmad::nfs::nlm {

namespace {

struct Proc {
    const char* name;
    bool idempotent;  // false: through the duplicate request cache
    rpc::Outcome (*run)(Request&);
};

rpc::Outcome proc_null(Request& rq) {
    return rq.ctx.args.remaining() == 0 ? rpc::Outcome::ok() : rpc::Outcome::garbage();
}

// Indexed by procedure number (XNFS NLM v4); nullptr: not served (PROC_UNAVAIL).
constexpr Proc kProcs[] = {
    {"NULL", true, proc_null},
    {"TEST", true, proc_test},
    {"LOCK", false, proc_lock},
    {"CANCEL", false, proc_cancel},
    {"UNLOCK", false, proc_unlock},
    {"GRANTED", true, proc_granted},
    {"TEST_MSG", true, proc_msg},
    {"LOCK_MSG", false, proc_msg},
    {"CANCEL_MSG", false, proc_msg},
    {"UNLOCK_MSG", false, proc_msg},
    {"GRANTED_MSG", true, proc_msg},
    {"TEST_RES", true, proc_result},
    {"LOCK_RES", true, proc_result},
    {"CANCEL_RES", true, proc_result},
    {"UNLOCK_RES", true, proc_result},
    {"GRANTED_RES", true, proc_result},
    {"NSM_NOTIFY", false, proc_nsm_notify},  // statd's callback (nsm_monitor.h), not XNFS
    {"", true, nullptr},
    {"", true, nullptr},
    {"", true, nullptr},
    {"SHARE", false, proc_share},
    {"UNSHARE", false, proc_unshare},
    {"NM_LOCK", false, proc_lock},
    {"FREE_ALL", false, proc_free_all},
};

}  // namespace

NlmProgram::NlmProgram(std::shared_ptr<vfs::ExportRegistry> exports, const Options& o)
    : svc_(std::move(exports), o) {}

uint32_t NlmProgram::number() const {
    return x::NLM_PROG;
}

rpc::ProcedureInfo NlmProgram::procedure(uint32_t, uint32_t proc) const {
    if (proc >= std::size(kProcs) || !kProcs[proc].run) return {};
    return {true, kProcs[proc].idempotent, kProcs[proc].name};
}

rpc::Outcome NlmProgram::call(rpc::CallContext& ctx) {
    Request rq(ctx, svc_);
    return kProcs[ctx.header.proc].run(rq);
}

}  // namespace nfsrdmad::nfs::nlm
