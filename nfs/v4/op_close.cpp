// CLOSE (RFC 8881 §18.2) and OPEN_DOWNGRADE (§18.18). The stateid must be an open
// stateid of this client for the current filehandle (stateids.h). CLOSE frees it and
// answers the invalid special stateid (§18.2.4: the stateid is meaningless now);
// OPEN_DOWNGRADE narrows access and deny to a subset of what is held (INVAL otherwise)
// and answers the stateid with its seqid bumped. CLOSE refuses while a lock owner that
// came through the open holds locks (NFS4ERR_LOCKS_HELD) and otherwise frees the lock
// stateids that came through it.
#include "nfs/v4/lock_state.h"
#include "nfs/v4/ops.h"
#include "nfs/v4/request.h"
#include "nfs/v4/stateids.h"

namespace nfsrdmad::nfs::v4 {

namespace {

// The current filehandle is only matched against the open's file: it is checked, never
// opened (no system call).
x4::nfsstat4 the_open(Compound& c, const x4::stateid4& in, Open& out) {
    const WireHandle* fh;
    bool pseudo = false;
    if (auto st = c.rq->current_handle(fh, pseudo); st != x4::NFS4_OK) return st;
    state::Stateid sid;
    if (auto st = effective_stateid(c, in, sid); st != x4::NFS4_OK) return st;
    if (pseudo) return x4::NFS4ERR_BAD_STATEID;
    return find_open_of(*c.rq, sid, *fh, out);
}

}  // namespace

OpResult op_close(Compound& c, xdr::Decoder& args, xdr::Encoder& res) {
    Request& rq = *c.rq;
    x4::CLOSE4args a;
    if (!rq.decode(args, a)) return OpResult::bad_xdr();
    Open o;
    x4::nfsstat4 st = the_open(c, a.open_stateid, o);
    // §18.2.3: lock owners that came through this open and still hold locks on the file:
    // NFS4ERR_LOCKS_HELD. Their lock stateids without locks go with the open.
    std::vector<LockState> lock_states;
    if (st == x4::NFS4_OK) {
        lock_states = rq.svc.lock_states.of_open(o.stateid.other);
        for (const auto& ls : lock_states)
            if (!rq.svc.locks.locks_of(ls.file, ls.owner).empty()) st = x4::NFS4ERR_LOCKS_HELD;
    }
    if (st == x4::NFS4_OK) st = rq.svc.clients.release_stateid(rq.clientid, o.stateid);
    if (st == x4::NFS4_OK) {
        rq.svc.opens.erase(o.stateid.other);
        for (const auto& ls : lock_states) {
            state::Stateid any = ls.stateid;
            any.seqid = 0;  // whatever its seqid is now
            (void)rq.svc.clients.release_stateid(rq.clientid, any);
            rq.svc.lock_states.erase(ls.stateid.other);
        }
    }
    x4::CLOSE4res r(st);
    if (st == x4::NFS4_OK) {
        r.open_stateid() = x4::stateid4{0xffffffffu, {}};
        c.current_stateid.reset();
    }
    x4::xdr_encode(res, r);
    return {st};
}

OpResult op_open_downgrade(Compound& c, xdr::Decoder& args, xdr::Encoder& res) {
    Request& rq = *c.rq;
    x4::OPEN_DOWNGRADE4args a;
    if (!rq.decode(args, a)) return OpResult::bad_xdr();
    Open o;
    x4::nfsstat4 st = the_open(c, a.open_stateid, o);
    const uint32_t access = a.share_access & x4::OPEN4_SHARE_ACCESS_BOTH;
    // §18.18.3: the share_access bits are judged without the delegation wants (the
    // OPEN4_SHARE_ACCESS_WANT_* bits), which mean nothing here and are ignored, as the
    // Linux server ignores them.
    if (st == x4::NFS4_OK &&
        (access == 0 || (a.share_access & ~(x4::OPEN4_SHARE_ACCESS_BOTH | kShareAccessWants)) ||
         a.share_deny > x4::OPEN4_SHARE_DENY_BOTH || (access & ~o.access) ||
         (a.share_deny & ~o.deny)))
        st = x4::NFS4ERR_INVAL;
    // §18.18.3: the bits "SHOULD equal the union of the share_access bits ... specified for
    // some subset of the OPENs in effect for the current open-owner on the current file",
    // else "the server SHOULD return the error NFS4ERR_INVAL": as the Linux server, a
    // downgrade goes to an access and a deny that an OPEN of this stateid asked for.
    if (st == x4::NFS4_OK &&
        (!(o.access_modes & (1u << access)) || !(o.deny_modes & (1u << a.share_deny))))
        st = x4::NFS4ERR_INVAL;
    state::Stateid bumped;
    if (st == x4::NFS4_OK) {
        auto b = rq.svc.clients.bump_stateid(rq.clientid, o.stateid);
        st = b.status;
        bumped = b.stateid;
    }
    x4::OPEN_DOWNGRADE4res r(st);
    if (st == x4::NFS4_OK) {
        o.access = access;
        o.deny = a.share_deny;
        // What the downgrade gave up is no OPEN's any more (nfs4_stateid_downgrade).
        for (uint32_t m = 0; m < 4; ++m) {
            if (m & ~access) o.access_modes &= uint8_t(~(1u << m));
            if (m & ~a.share_deny) o.deny_modes &= uint8_t(~(1u << m));
        }
        o.access_modes |= uint8_t(1u << access);
        o.deny_modes |= uint8_t(1u << a.share_deny);
        o.stateid = bumped;
        rq.svc.opens.put(o);
        r.resok4().open_stateid = to_wire(bumped);
        c.current_stateid = to_wire(bumped);
    }
    x4::xdr_encode(res, r);
    return {st};
}

}  // namespace nfsrdmad::nfs::v4
