// The operations on stateids themselves: DELEGRETURN (RFC 8881 §18.6: the delegation of
// the current filehandle's file goes, with its stateid),
// TEST_STATEID (§18.48) and FREE_STATEID (§18.38), answered by the client table.
#include <algorithm>

#include "nfs/v4/lock_state.h"
#include "nfs/v4/ops.h"
#include "nfs/v4/request.h"
#include "nfs/v4/stateids.h"

namespace nfsrdmad::nfs::v4 {

OpResult op_delegreturn(Compound& c, xdr::Decoder& args, xdr::Encoder& res) {
    x4::DELEGRETURN4args a;
    if (!c.rq->decode(args, a)) return OpResult::bad_xdr();
    Request& rq = *c.rq;
    state::Stateid sid;
    x4::nfsstat4 st = c.current_fh ? effective_stateid(c, a.deleg_stateid, sid)
                                   : x4::NFS4ERR_NOFILEHANDLE;
    if (st == x4::NFS4_OK && state::classify(sid) != state::Special::None)
        st = x4::NFS4ERR_BAD_STATEID;
    if (st == x4::NFS4_OK) {
        // The delegation must be of the current filehandle's file (§18.6.3).
        auto d = rq.svc.delegations.find(sid.other);
        if (d && d->file != *c.current_fh) st = x4::NFS4ERR_BAD_STATEID;
    }
    if (st == x4::NFS4_OK) st = rq.svc.return_delegation(rq.clientid, sid);
    encode_status_only(res, st);
    return {st};
}

OpResult op_test_stateid(Compound& c, xdr::Decoder& args, xdr::Encoder& res) {
    Request& rq = *c.rq;
    x4::TEST_STATEID4args a;
    if (!rq.decode(args, a)) return OpResult::bad_xdr();
    std::vector<state::Stateid> ids;
    ids.reserve(a.ts_stateids.size());
    for (const auto& s : a.ts_stateids) ids.push_back(from_wire(s));
    auto codes = rq.svc.clients.test_stateids(rq.clientid, ids);
    x4::TEST_STATEID4res out(x4::NFS4_OK);
    out.tsr_resok4().tsr_status_codes.assign(codes.begin(), codes.end());
    x4::xdr_encode(res, out);
    return {};
}

OpResult op_free_stateid(Compound& c, xdr::Decoder& args, xdr::Encoder& res) {
    Request& rq = *c.rq;
    x4::FREE_STATEID4args a;
    if (!rq.decode(args, a)) return OpResult::bad_xdr();
    state::Stateid sid;
    x4::nfsstat4 st = effective_stateid(c, a.fsa_stateid, sid);
    // §18.38.3: a lock stateid whose owner holds locks on its file is LOCKS_HELD.
    std::optional<LockState> ls;
    bool holds = false;
    if (st == x4::NFS4_OK) {
        ls = rq.svc.lock_states.find(sid.other);
        holds = ls && ls->client == rq.clientid &&
                !rq.svc.locks.locks_of(ls->file, ls->owner).empty();
    }
    if (st == x4::NFS4_OK) st = rq.svc.clients.free_stateid(rq.clientid, sid, holds);
    if (st == x4::NFS4_OK) {
        rq.svc.opens.erase(sid.other);
        // A revoked lock stateid may still have locks: they go with it.
        if (ls) rq.svc.pass_woken(rq.svc.locks.release_owner(ls->file, ls->owner));
        rq.svc.lock_states.erase(sid.other);
    }
    encode_status_only(res, st);
    return {st};
}

}  // namespace nfsrdmad::nfs::v4
