// GETATTR (RFC 8881 §18.7): the attributes asked for that this server supports; the
// reply's bitmap says which (§5.2). Write-only attributes are NFS4ERR_INVAL.
#include <algorithm>
#include <iterator>

#include "nfs/v4/attrs/object_attrs.h"
#include "nfs/v4/ops.h"
#include "nfs/v4/request.h"

namespace nfsrdmad::nfs::v4 {

OpResult op_getattr(Compound& c, xdr::Decoder& args, xdr::Encoder& res) {
    Request& rq = *c.rq;
    AttrMask want;  // GETATTR4args: attr_request, one bitmap4
    if (!AttrMask::decode(args, want)) return OpResult::bad_xdr();
    Target* t;
    x4::nfsstat4 st = rq.current(t);
    // §10.4.3: another client's write delegation may hide the file's size and times: its
    // holder is asked (CB_GETATTR) and this GETATTR told to come back (NFS4ERR_DELAY) until
    // the answer is in; a holder with changes gives the size, and the file's times move.
    // Only attributes the holder's writes move are worth asking for (as knfsd does).
    static constexpr uint32_t kMoved[] = {x4::FATTR4_CHANGE,        x4::FATTR4_SIZE,
                                          x4::FATTR4_SPACE_USED,    x4::FATTR4_TIME_ACCESS,
                                          x4::FATTR4_TIME_METADATA, x4::FATTR4_TIME_MODIFY};
    Services::DelegatedAttrs held;
    if (st == x4::NFS4_OK && !t->pseudo &&
        std::any_of(std::begin(kMoved), std::end(kMoved),
                    [&](uint32_t b) { return want.has(b); })) {
        // Nowait: a write delegation of the file (its holder's, or a CB_GETATTR to send) is
        // a worker's matter.
        if (rq.ctx.nowait && !rq.svc.delegations.empty() &&
            rq.svc.delegations.write_delegated(t->node.handle))
            return {rq.block()};
        held = rq.svc.delegated_attrs(t->node.handle, rq.clientid);
        if (held.delay) {  // CB_GETATTR out: put off, as a conflict (Compound::held_up)
            st = x4::NFS4ERR_DELAY;
            c.held_up = true;
        }
    }
    if (st == x4::NFS4_OK) {
        const size_t at = res.size();
        res.put_u32(x4::NFS4_OK);
        st = encode_attrs_of(rq, *t, want, res, held.size, rq.attrs_read_now());
        if (st != x4::NFS4_OK) res.truncate(at);
    }
    if (st != x4::NFS4_OK) encode_status_only(res, st);
    return {st};
}

}  // namespace nfsrdmad::nfs::v4
