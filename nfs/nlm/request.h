// Per-call plumbing shared by the NLM procedures: decoding, the file a request names
// (its NFSv3 handle, checked against the export's client rules), the lock owner it acts
// for, and the pieces of the replies.
#pragma once

#include <optional>

#include "nfs/common/authorize.h"
#include "nfs/nlm/services.h"
#include "nfs/vfs/node.h"
#include "nfs/vfs/state/lock_table.h"
#include "transport/rpc/program.h"
#include "xdr/nlm_prot.h"

namespace nfsrdmad::nfs::nlm {

namespace x = xdr::nlm;
namespace vs = vfs::state;

// Whether the range starts and ends at or below 2^63 - 1, the largest offset a Linux file
// has (l_len 0: to the end). Beyond it the Linux server answers NLM4_FBIG
// (nlm4svc_retrieve_args); XNFS leaves the limit to the server.
bool within_offsets(const x::nlm4_lock& l);

// The file of a request and how its locks are keyed.
struct File {
    vfs::Node node;
    vs::FileKey key;
};

// The file an nlm4_lock names, and the lock owner it acts for there.
struct LockTarget {
    File file;
    vs::StateOwner owner;
};

class Request {
  public:
    Request(rpc::CallContext& ctx, Services& svc)
        : ctx(ctx), svc(svc), pin_(*svc.exports), table(pin_.table()) {}
    ~Request() {
        for (uint64_t id : pinned_) svc.hosts.unpin(id);
    }
    Request(const Request&) = delete;
    Request& operator=(const Request&) = delete;

    rpc::CallContext& ctx;
    Services& svc;

  private:
    vfs::ExportRegistry::Pin pin_;  // the table, for this call (export_registry.h)

  public:
    const std::shared_ptr<const vfs::ExportTable>& table;

    template <class Args>
    bool decode(Args& a) {
        return x::xdr_decode(ctx.args, a) && ctx.args.remaining() == 0 &&
               ctx.args.unconsumed_chunks() == 0;
    }

    // The handle's file, if the export lets this caller in and it is a regular file:
    // NLM4_GRANTED, or the status to answer (STALE_FH for a handle that names nothing,
    // FAILED for a refused caller or what cannot be locked). A flavor the export does not
    // accept makes the whole call an AUTH_TOOWEAK reject.
    x::nlm4_stats file(std::span<const uint8_t> fh, File& out);
    // The lock owner: caller_name's host, svid and oh (XNFS nlm4_lock). DENIED_NOLOCKS
    // when no more hosts can be known. `known_host` (TEST, UNLOCK, CANCEL: nothing is
    // taken): an unknown host is not made one, its owner is under host id 0, which holds
    // nothing.
    x::nlm4_stats owner(const x::nlm4_lock& l, vs::StateOwner& out, bool known_host = false);
    // file() and owner() of an nlm4_lock; NLM4_FBIG for a range past the largest file
    // offset (within_offsets).
    x::nlm4_stats target(const x::nlm4_lock& l, LockTarget& out, bool known_host = false) {
        if (auto s = file(l.fh, out.file); s != x::NLM4_GRANTED) return s;
        if (!within_offsets(l)) return x::NLM4_FBIG;
        return owner(l, out.owner, known_host);
    }
    // An NFSv4.1 client's delegation of the file stands in the way (Options::delegations):
    // its recall is under way; the call answers NLM4_DENIED_GRACE_PERIOD through held_up().
    bool delegated(const File& f, bool exclusive) {
        auto& d = svc.options.delegations;
        return d && d->any() && d->conflict(f.node.handle, exclusive);
    }
    // `answered`: the NLM4_DENIED_GRACE_PERIOD of a call a delegation held up before it did
    // anything. The dispatcher may run the call again a little later instead of sending it
    // (rpc::Outcome::Later): Linux's lockd waits 5 s after that answer (NLMCLNT_GRACE_WAIT)
    // for what takes the holder milliseconds (its locks, then DELEGRETURN).
    static rpc::Outcome held_up(rpc::Outcome answered) {
        return answered.kind == rpc::Outcome::Success ? rpc::Outcome::later() : answered;
    }
    // The id of host `caller_name` (made if new), pinned until this call is done
    // (hosts.h): what the call takes is never held under a forgotten id. nullopt: no
    // more hosts can be known.
    std::optional<uint64_t> host(std::string_view caller_name);

    template <class Res>
    rpc::Outcome reply(const Res& res) {
        if (rejected_) return *rejected_;
        x::xdr_encode(ctx.res, res);
        return rpc::Outcome::ok();
    }
    // An nlm4_res: the call's cookie back, and the status.
    rpc::Outcome answer(std::span<const uint8_t> cookie, x::nlm4_stats s) {
        x::nlm4_res res;
        res.cookie = cookie;
        res.stat.stat = s;
        return reply(res);
    }

  private:
    std::optional<rpc::Outcome> rejected_;
    std::vector<uint64_t> pinned_;
};

// nlm4_holder of a conflict: svid and oh back from an NLM owner's bytes; a holder of
// another protocol (an NFSv4.1 lock owner) or outside the table (a local process) is
// reported with svid 0 and an empty oh.
x::nlm4_holder holder_of(const vs::Conflict& c);
// The lock an nlm4_lock asks for: [l_offset, l_offset + l_len), l_len 0 = to EOF.
vs::Lock lock_of(const x::nlm4_lock& l, bool exclusive);
// ENOLCK (a bound) -> DENIED_NOLOCKS; anything else -> FAILED.
x::nlm4_stats stat_of_errno(int err);

// The procedures (XNFS NLM v4).
rpc::Outcome proc_test(Request& rq);
rpc::Outcome proc_lock(Request& rq);  // NLMPROC4_LOCK and NLMPROC4_NM_LOCK
rpc::Outcome proc_cancel(Request& rq);
rpc::Outcome proc_unlock(Request& rq);
rpc::Outcome proc_granted(Request& rq);
rpc::Outcome proc_share(Request& rq);    // NLMPROC4_SHARE
rpc::Outcome proc_unshare(Request& rq);  // NLMPROC4_UNSHARE
rpc::Outcome proc_free_all(Request& rq);
rpc::Outcome proc_result(Request& rq);      // the *_RES procedures
rpc::Outcome proc_msg(Request& rq);         // the *_MSG procedures (their result as a _RES call)
rpc::Outcome proc_nsm_notify(Request& rq);  // statd: a watched host rebooted (nsm_monitor.h)

}  // namespace nfsrdmad::nfs::nlm
