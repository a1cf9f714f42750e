// EXCHANGE_ID (RFC 8881 §18.35): the record-matching rules of the IMPLEMENTATION subsection
// (§18.35.4 in RFC 8881's numbering), each case cited where it is decided.
#include "nfs/v4/state/client_table.h"

namespace nfsrdmad::nfs::v4::state {

namespace {

// The eia_flags bits §18.35.1 defines for the arguments. Any other bit, CONFIRMED_R included
// ("always off in eia_flags"), is NFS4ERR_INVAL (§18.35.3: "Bits not defined above cannot be set
// in the eia_flags field. If they are, the server MUST reject the operation with
// NFS4ERR_INVAL").
constexpr uint32_t kArgFlags = x4::EXCHGID4_FLAG_SUPP_MOVED_REFER |
                               x4::EXCHGID4_FLAG_SUPP_MOVED_MIGR |
                               x4::EXCHGID4_FLAG_BIND_PRINC_STATEID | x4::EXCHGID4_FLAG_MASK_PNFS |
                               x4::EXCHGID4_FLAG_UPD_CONFIRMED_REC_A;

}  // namespace

ExchangeIdResult ClientTable::exchange_id(const ExchangeIdArgs& a) {
    ExchangeIdResult out;
    if ((a.flags & ~kArgFlags) != 0) {
        out.status = x4::NFS4ERR_INVAL;
        return out;
    }
    switch (a.how) {
        case x4::SP4_NONE:
            break;
        case x4::SP4_MACH_CRED:
            // §18.35.3: "the client MUST send the EXCHANGE_ID request with RPCSEC_GSS as the
            // security flavor, and with a service of RPC_GSS_SVC_INTEGRITY or
            // RPC_GSS_SVC_PRIVACY".
            if (!a.integrity_protected) {
                out.status = x4::NFS4ERR_INVAL;
                return out;
            }
            break;
        default:
            // SP4_SSV: this server supports none of the SSV algorithms (§18.35.3: "If the
            // server does not support any of the offered algorithms, it returns
            // NFS4ERR_HASH_ALG_UNSUPP").
            out.status = x4::NFS4ERR_HASH_ALG_UNSUPP;
            return out;
    }

    std::lock_guard lock(mu_);
    const Time now = clock_.now();
    auto owner = owners_.find(a.ownerid);
    Record* conf = nullptr;
    Record* unconf = nullptr;
    if (owner != owners_.end()) {
        if (owner->second.confirmed) conf = find(*owner->second.confirmed);
        unconf = live_unconfirmed(owner->second.unconfirmed, now);
    }

    if (a.flags & x4::EXCHGID4_FLAG_UPD_CONFIRMED_REC_A) {
        // Case 7, Update but No Confirmed Record: NFS4ERR_NOENT, any unconfirmed record intact.
        if (!conf) {
            out.status = x4::NFS4ERR_NOENT;
            return out;
        }
        // Case 8, Update but Wrong Verifier: NFS4ERR_NOT_SAME, the record intact.
        if (conf->verifier != a.verifier) {
            out.status = x4::NFS4ERR_NOT_SAME;
            return out;
        }
        // Case 9, Update but Wrong Principal: NFS4ERR_PERM, the record intact.
        if (conf->principal != a.principal) {
            out.status = x4::NFS4ERR_PERM;
            return out;
        }
        // Case 6, Update: allowed, the record is left intact. The properties that may change
        // are the capability bits this server never grants; the state protection may not
        // change once confirmed (§18.35.3), so the reply is the record's.
        return result_of(*conf);
    }

    if (conf) {
        if (conf->principal != a.principal) {
            // Case 3, Client Collision: a confirmed record of another principal. With unexpired
            // state it is NFS4ERR_CLID_INUSE and nothing changes...
            if (has_state(*conf) && !expired(*conf, now)) {
                out.status = x4::NFS4ERR_CLID_INUSE;
                return out;
            }
            // ...otherwise it is case 1: the confirmed record and its state are deleted.
            out.purged = conf->id;
            remove_record(conf->id);
            conf = nullptr;
        } else if (conf->verifier == a.verifier) {
            // Case 2, Non-Update on Existing Client ID: a retry or a trunking probe; the same
            // result as when the record was created, CONFIRMED_R set, the record unchanged.
            return result_of(*conf);
        } else {
            // Case 5, Client Restart: a new incarnation. A new unconfirmed record is added and
            // the confirmed one stays until CREATE_SESSION confirms the new one (then it and
            // its state go, see create_session()). An older unconfirmed record of the owner is
            // replaced first (the "one strategy" the case describes).
            if (unconf) remove_record(unconf->id);
            if (!make_room(now)) {
                out.status = kTooManyClients;
                return out;
            }
            return result_of(add_record(a, now));
        }
    }

    // Case 4, Replacement of Unconfirmed Record: whatever its properties, the unconfirmed
    // record is deleted and a new client ID is generated.
    if (unconf) remove_record(unconf->id);
    // Case 1, New Owner ID (and case 3 without live state, case 4): a new unconfirmed record.
    if (!make_room(now)) {
        out.status = kTooManyClients;
        return out;
    }
    ExchangeIdResult r = result_of(add_record(a, now));
    r.purged = out.purged;
    return r;
}

}  // namespace nfsrdmad::nfs::v4::state
