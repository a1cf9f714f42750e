// LOCK (RFC 8881 §18.10): a byte-range lock on the current filehandle's file, for a new
// lock owner (open_to_lock_owner4: through an open stateid of this client for this file;
// a new lock stateid, or the owner's existing one for the file) or an existing one
// (exist_lock_owner4: its lock stateid, whose seqid is bumped). The seqid fields are
// ignored in 4.1 (§18.10.3: sessions give exactly-once semantics), so is the lock
// owner's clientid (the session's client owns it).
//
// Blocking types (READW_LT, WRITEW_LT) park nothing: a lock in the way is NFS4ERR_DENIED
// and the client polls (§9.6). Errors: length 0 or an end past 2^64-1 INVAL
// (§18.10.3); a write lock through an open without write access OPENMODE (§18.10.4);
// the table's bounds (ENOLCK) DENIED, naming the requested range (§15.2 lists no
// NFS4ERR_RESOURCE for LOCK in 4.1); grace as recovery.h says. A lock of a courtesy
// client in the way reaps that client (§8.4.3, Services::lock_range). The lock stateid becomes
// the current stateid (§16.2.3.1.2).
#include <cerrno>

#include "nfs/v4/lock_state.h"
#include "nfs/v4/ops.h"
#include "nfs/v4/request.h"
#include "nfs/v4/stateids.h"

namespace nfsrdmad::nfs::v4 {

namespace {

namespace vs = vfs::state;

struct Granted {
    LockState ls;
    bool fresh = false;  // a new lock stateid: free it if the lock is not granted
};

// open_to_lock_owner4: the open must be this client's, for this file.
x4::nfsstat4 new_owner(Compound& c, const Target& cur, const vs::FileKey& file,
                       const x4::open_to_lock_owner4& oo, Granted& g, Open& open) {
    Request& rq = *c.rq;
    state::Stateid osid;
    if (auto st = effective_stateid(c, oo.open_stateid, osid); st != x4::NFS4_OK) return st;
    if (auto st = find_open(rq, osid, cur, open); st != x4::NFS4_OK) return st;
    auto owner = vs::StateOwner::make({vs::Protocol::Nfs4, rq.clientid}, oo.lock_owner.owner);
    if (!owner) return x4::NFS4ERR_INVAL;
    if (auto known = rq.svc.lock_states.find_owner(*owner, file)) {
        g.ls = std::move(*known);
        return x4::NFS4_OK;
    }
    g.ls.client = rq.clientid;
    g.ls.owner = std::move(*owner);
    g.ls.file = file;
    g.ls.fh = cur.node.handle;
    g.ls.open = open.stateid.other;
    g.fresh = true;
    return x4::NFS4_OK;
}

// exist_lock_owner4: a lock stateid of this client for this file.
x4::nfsstat4 known_owner(Compound& c, const vs::FileKey& file, const x4::exist_lock_owner4& el,
                         Granted& g, Open& open) {
    Request& rq = *c.rq;
    state::Stateid sid;
    if (auto st = effective_stateid(c, el.lock_stateid, sid); st != x4::NFS4_OK) return st;
    if (state::classify(sid) != state::Special::None) return x4::NFS4ERR_BAD_STATEID;
    auto r = rq.svc.clients.check_stateid(rq.clientid, sid, state::mask_of(state::StateKind::Lock));
    if (r.status != x4::NFS4_OK) return r.status;
    auto ls = rq.svc.lock_states.find(sid.other);
    if (!ls || ls->client != rq.clientid || !(ls->file == file)) return x4::NFS4ERR_BAD_STATEID;
    auto o = rq.svc.opens.find(ls->open);
    if (!o) return x4::NFS4ERR_BAD_STATEID;
    open = std::move(*o);
    g.ls = std::move(*ls);
    g.ls.stateid = r.stateid;
    return x4::NFS4_OK;
}

x4::nfsstat4 do_lock(Compound& c, const x4::LOCK4args& a, std::optional<vs::Conflict>& denied,
                     state::Stateid& out) {
    Request& rq = *c.rq;
    Target* cur;
    if (auto st = rq.current(cur); st != x4::NFS4_OK) return st;
    vs::FileKey file;
    if (auto st = lock_file_key(*cur, file); st != x4::NFS4_OK) return st;
    vs::LockType type;
    if (auto st = lock_type_of(a.locktype, type); st != x4::NFS4_OK) return st;
    vs::ByteRange range;
    if (auto st = lock_range_of(a.offset, a.length, range); st != x4::NFS4_OK) return st;

    Granted g;
    Open open;
    x4::nfsstat4 st = a.locker.new_lock_owner()
                          ? new_owner(c, *cur, file, a.locker.open_owner(), g, open)
                          : known_owner(c, file, a.locker.lock_owner(), g, open);
    if (st != x4::NFS4_OK) return st;
    if (type == vs::LockType::Write && !(open.access & x4::OPEN4_SHARE_ACCESS_WRITE))
        return x4::NFS4ERR_OPENMODE;
    // §10.4.1: another client's delegation of the file is recalled first: its holder may
    // hold locks it has not sent (a write lock, any; a read lock, a write delegation's).
    // Answered NFS4ERR_DELAY, never put off (Request::delegated): a new lock owner's state
    // may have been made above, before this check.
    if (rq.svc.delegation_conflict(cur->node.handle, rq.clientid, type == vs::LockType::Write))
        return x4::NFS4ERR_DELAY;

    if (a.reclaim) {
        auto owner = rq.svc.clients.ownerid(rq.clientid);
        st = owner ? rq.svc.recovery.may_reclaim(*owner, rq.svc.clients.reclaim_done(rq.clientid))
                   : x4::NFS4ERR_NO_GRACE;
    } else {
        st = rq.svc.recovery.may_change();  // §8.4.2.1
    }
    if (st != x4::NFS4_OK) return st;

    // A new lock stateid first, so that a granted lock always has one.
    if (g.fresh) {
        auto n = rq.svc.clients.new_stateid(rq.clientid, state::StateKind::Lock);
        if (n.status != x4::NFS4_OK) return n.status;
        g.ls.stateid = n.stateid;
    }
    const vs::Lock want{range, type};
    auto lr = rq.svc.lock_range(cur->node, file, g.ls.owner, want);
    if (!lr || lr->denied) {
        if (g.fresh) (void)rq.svc.clients.release_stateid(rq.clientid, g.ls.stateid);
        if (lr) {
            denied = lr->denied;
            return x4::NFS4ERR_DENIED;
        }
        if (lr.error() == ENOLCK) {
            denied = vs::Conflict{std::nullopt, want};
            return x4::NFS4ERR_DENIED;
        }
        return to_nfsstat4(lr.error());
    }
    rq.svc.pass_woken(std::move(lr->woken));  // a downgrade freed bytes
    if (g.fresh) {
        auto raced = rq.svc.lock_states.insert(g.ls);
        if (!raced) {
            out = g.ls.stateid;
            return x4::NFS4_OK;
        }
        // Another first LOCK of this owner on this file made its lock stateid meanwhile
        // (§8.2: one per owner and file): ours goes, the lock is recorded under that one.
        (void)rq.svc.clients.release_stateid(rq.clientid, g.ls.stateid);
        g.ls = std::move(*raced);
    }
    state::Stateid current = g.ls.stateid;
    current.seqid = 0;  // §8.2.2: the current seqid, whatever a racing LOCK made it
    auto b = rq.svc.clients.bump_stateid(rq.clientid, current);
    if (b.status != x4::NFS4_OK) return b.status;  // the lock stays: the owner holds it
    out = g.ls.stateid = b.stateid;
    (void)rq.svc.lock_states.update(g.ls);
    return x4::NFS4_OK;
}

}  // namespace

OpResult op_lock(Compound& c, xdr::Decoder& args, xdr::Encoder& res) {
    x4::LOCK4args a;
    if (!c.rq->decode(args, a)) return OpResult::bad_xdr();
    std::optional<vs::Conflict> denied;
    state::Stateid sid;
    x4::nfsstat4 st = do_lock(c, a, denied, sid);
    x4::LOCK4res r(st);
    if (st == x4::NFS4_OK) {
        r.resok4().lock_stateid = to_wire(sid);
        c.current_stateid = to_wire(sid);
    } else if (st == x4::NFS4ERR_DENIED) {
        r.denied() = denied_of(*denied);
    }
    x4::xdr_encode(res, r);
    return {st};
}

}  // namespace nfsrdmad::nfs::v4
