#include "nfs/v4/stateids.h"

#include <algorithm>

#include "nfs/v4/lock_state.h"

namespace nfsrdmad::nfs::v4 {

x4::nfsstat4 effective_stateid(const Compound& c, const x4::stateid4& in, state::Stateid& out) {
    out = from_wire(in);
    switch (state::classify(out)) {
        case state::Special::Current:
            if (!c.current_stateid) return x4::NFS4ERR_BAD_STATEID;
            out = from_wire(*c.current_stateid);
            return x4::NFS4_OK;
        case state::Special::Invalid:
        case state::Special::Reserved:
            return x4::NFS4ERR_BAD_STATEID;
        default:
            return x4::NFS4_OK;
    }
}

x4::nfsstat4 find_open(Request& rq, const state::Stateid& sid, const Target& cur, Open& out) {
    if (cur.pseudo) return x4::NFS4ERR_BAD_STATEID;
    return find_open_of(rq, sid, cur.node.handle, out);
}

x4::nfsstat4 find_open_of(Request& rq, const state::Stateid& sid, const WireHandle& fh, Open& out) {
    if (state::classify(sid) != state::Special::None) return x4::NFS4ERR_BAD_STATEID;
    auto r = rq.svc.clients.check_stateid(rq.clientid, sid, state::mask_of(state::StateKind::Open));
    if (r.status != x4::NFS4_OK) return r.status;
    auto o = rq.svc.opens.find(sid.other);
    if (!o || o->client != rq.clientid) return x4::NFS4ERR_BAD_STATEID;
    if (o->file != fh) return x4::NFS4ERR_BAD_STATEID;
    out = std::move(*o);
    out.stateid = r.stateid;
    return x4::NFS4_OK;
}

x4::nfsstat4 find_io_open_of(Request& rq, const state::Stateid& sid, const WireHandle& fh,
                             Open& out) {
    if (state::classify(sid) != state::Special::None) return x4::NFS4ERR_BAD_STATEID;
    auto r = rq.svc.clients.check_stateid(rq.clientid, sid, state::kAnyKind);
    if (r.status != x4::NFS4_OK) return r.status;
    if (r.kind == state::StateKind::Delegation) {
        // §10.2: the holder's I/O through its delegation, whatever it opened locally.
        auto d = rq.svc.delegations.find(sid.other);
        if (!d || d->client != rq.clientid) return x4::NFS4ERR_BAD_STATEID;
        if (d->file != fh) return x4::NFS4ERR_BAD_STATEID;
        out = Open{};
        out.client = d->client;
        out.file = d->file;
        out.access = d->write ? x4::OPEN4_SHARE_ACCESS_BOTH : x4::OPEN4_SHARE_ACCESS_READ;
        out.fd = d->fd;
        out.who = d->who;
        out.stateid = r.stateid;
        return x4::NFS4_OK;
    }
    if (r.kind != state::StateKind::Lock) return find_open_of(rq, sid, fh, out);
    auto ls = rq.svc.lock_states.find(sid.other);
    if (!ls || ls->client != rq.clientid) return x4::NFS4ERR_BAD_STATEID;
    auto o = rq.svc.opens.find(ls->open);
    if (!o || o->client != rq.clientid) return x4::NFS4ERR_BAD_STATEID;
    if (o->file != fh) return x4::NFS4ERR_BAD_STATEID;
    out = std::move(*o);
    return x4::NFS4_OK;
}

}  // namespace nfsrdmad::nfs::v4
