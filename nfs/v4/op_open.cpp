// OPEN (RFC 8881 §18.16): a regular file by name (CLAIM_NULL, created if asked:
// UNCHECKED4, GUARDED4, EXCLUSIVE4, EXCLUSIVE4_1) or by filehandle (CLAIM_FH), with
// share access and deny (§9.7). The result's stateid becomes the current stateid and
// the file the current filehandle (§16.2.3.1.2).
//
// After a restart (recovery.h): CLAIM_PREVIOUS reclaims the open of the current
// filehandle during grace (§9.11), while new opens get NFS4ERR_GRACE (§8.4.2.1).
//
// Delegations (§10.2, delegation/recall.cpp): an OPEN that conflicts with another
// client's delegation starts its recall and gets NFS4ERR_DELAY; one that does not may be
// granted a read or write delegation. CLAIM_DELEGATE_CUR and CLAIM_DELEG_CUR_FH open
// through the client's own delegation (§10.2.1: what a holder does for its local opens
// when the delegation is recalled), also while the recall is under way.
//
// CLAIM_PREVIOUS with a delegate_type reclaims the delegation with the open after a
// server restart (§10.2.1); granted with `recall` set when the client's callback path is
// not set up yet.
//
// CLAIM_DELEGATE_PREV and CLAIM_DELEG_PREV_FH are NFS4ERR_NOTSUPP: they reclaim
// delegations across a *client* restart, which §10.2.1 lets a server support ("The server
// MAY support ...", and then it must keep a restarted client's delegations for a lease and
// support DELEGPURGE); this one, like the Linux server, drops a client's state when the
// client restarts.
#include <sys/stat.h>

#include <cerrno>

#include "nfs/v4/attrs/change.h"
#include "nfs/v4/attrs/fattr.h"
#include "nfs/v4/attrs/set_attrs.h"
#include "nfs/v4/lookup.h"
#include "nfs/v4/names.h"
#include "nfs/v4/ops.h"
#include "nfs/v4/request.h"
#include "nfs/v4/stateids.h"
#include "nfs/vfs/attrs.h"
#include "nfs/vfs/create.h"
#include "nfs/vfs/lease.h"
#include "nfs/vfs/lookup.h"

namespace nfsrdmad::nfs::v4 {

namespace {

struct Opening {
    Target file;
    bool created = false;
    bool reclaim = false;    // CLAIM_PREVIOUS
    bool delegated = false;  // CLAIM_DELEGATE_CUR, CLAIM_DELEG_CUR_FH
    struct statx attr {};    // of a created file, read when it was made
    bool attr_final = false;  // ... and nothing changed it after
    bool changed = false;     // made, or its attributes set (a truncate): not to run twice
    AttrMask attrset;
    x4::change_info4 cinfo{};
};

uint64_t verifier_of(const x4::verifier4& v) {
    uint64_t out = 0;
    for (uint8_t b : v) out = out << 8 | b;
    return out;
}

// CLAIM_NULL with OPEN4_CREATE (§18.16.3).
// `writing`: the OPEN asks for write access. The file, if this call makes it, is then opened
// for writing as it is made and handed to the descriptor cache (FdCache::adopt), where the
// open's descriptor is taken from below, instead of being opened again by its handle.
x4::nfsstat4 create(Request& rq, const Target& dir, std::string_view name, x4::createhow4& how,
                    bool writing, Opening& out) {
    if (dir.pseudo) return x4::NFS4ERR_ROFS;
    if (!dir.who.read_write) return x4::NFS4ERR_ROFS;
    vfs::SetAttrs attrs;
    AttrMask set;
    vfs::CreateHow mode = vfs::CreateHow::Unchecked;
    uint64_t verf = 0;
    x4::nfsstat4 st = x4::NFS4_OK;
    switch (how.mode()) {
        case x4::UNCHECKED4:
        case x4::GUARDED4:
            st = decode_set_attrs(how.createattrs(), rq.svc.ids, attrs, set);
            mode = how.mode() == x4::GUARDED4 ? vfs::CreateHow::Guarded : vfs::CreateHow::Unchecked;
            break;
        case x4::EXCLUSIVE4:
            mode = vfs::CreateHow::Exclusive;
            verf = verifier_of(how.createverf());
            break;
        case x4::EXCLUSIVE4_1:
            mode = vfs::CreateHow::Exclusive;
            verf = verifier_of(how.ch_createboth().cva_verf);
            st = decode_set_attrs(how.ch_createboth().cva_attrs, rq.svc.ids, attrs, set);
            // §18.16.3: only suppattr_exclcreat may come with the verifier.
            if (st == x4::NFS4_OK && !set.without(exclcreat_attrs()).empty())
                st = x4::NFS4ERR_INVAL;
            break;
        default:
            st = x4::NFS4ERR_INVAL;
    }
    if (st != x4::NFS4_OK) return st;
    // Whether this OPEN makes the file: only then is the caller let in whatever the
    // mode says. UNCHECKED4 (and an EXCLUSIVE retry) may find it there already.
    const uint32_t perm = attrs.mode.value_or(0666);
    bool made = false;
    vfs::DirChange change;
    auto e = vfs::create(dir.node, name, perm, mode, verf, dir.who.id, &made, &change, writing);
    if (!e) return to_nfsstat4(e.error());
    if (made && writing) rq.svc.files.adopt(e->node);
    const bool existed = !made;
    if (!S_ISREG(e->attr.stx_mode)) {
        // UNCHECKED4 found something else under the name.
        if (S_ISDIR(e->attr.stx_mode)) return x4::NFS4ERR_ISDIR;
        if (S_ISLNK(e->attr.stx_mode)) return x4::NFS4ERR_SYMLINK;
        return x4::NFS4ERR_WRONG_TYPE;
    }
    // The rest of the attributes (the mode went with the create).
    vfs::SetAttrs rest = attrs;
    rest.mode.reset();
    // §18.16.3: "When an UNCHECKED4 create encounters an existing file, the attributes
    // specified by createattrs are not used, except that when createattrs specifies the
    // size attribute with a size of zero, the existing file is truncated" (pynfs OPEN2).
    if (existed && mode == vfs::CreateHow::Unchecked) {
        const bool truncate = rest.size && *rest.size == 0;
        rest = vfs::SetAttrs{};
        set = AttrMask{};
        if (truncate) {
            rest.size = 0;
            set = AttrMask{x4::FATTR4_SIZE};
        }
    }
    // A file this call made is empty: a size of 0 (the Linux client's O_TRUNC) would only
    // truncate it to what it is, and commit that, for nothing. It is still reported set.
    if (made && rest.size && *rest.size == 0) rest.size.reset();
    const bool any = rest.size || rest.uid || rest.gid || rest.atime.how != vfs::TimeChange::Keep ||
                     rest.mtime.how != vfs::TimeChange::Keep;
    // Over an existing file (a truncate, an owner change): another client's delegation of it
    // is recalled first (§10.4.1).
    if (any && existed && rq.delegated(e->node.handle, true)) return x4::NFS4ERR_DELAY;
    if (any)
        if (auto r = vfs::setattr(e->node, rest, dir.who.id); !r) return to_nfsstat4(r.error());
    out.cinfo = change_info_of(change);
    out.created = !existed;
    out.changed = made || any;
    out.attr = e->attr;
    out.attr_final = !any;
    out.attrset = set;
    // A created file's node holds the descriptor it was made with, which would keep a
    // write delegation's lease from being taken (vfs/lease.h). Where it fails, the file
    // only gets no write delegation. (Not when the cache adopted it: that description is
    // the one the open, and a write lease, will use.)
    if (rq.svc.options.write_delegations && !e->node.fd.shared()) (void)vfs::pin_by_path(e->node);
    out.file = Target{};
    out.file.node = std::move(e->node);
    out.file.who = dir.who;
    return x4::NFS4_OK;
}

// CLAIM_FH and CLAIM_PREVIOUS: the current filehandle is the file (never created).
x4::nfsstat4 by_handle(const Target& cur, const x4::openflag4& how, Opening& out) {
    if (how.opentype() == x4::OPEN4_CREATE) return x4::NFS4ERR_INVAL;
    if (cur.pseudo) return x4::NFS4ERR_ISDIR;
    auto n = vfs::clone(cur.node);
    if (!n) return to_nfsstat4(n.error());
    out.file.node = std::move(*n);
    out.file.who = cur.who;
    return x4::NFS4_OK;
}

// The client's own delegation of the file the claim names (§18.16.3).
x4::nfsstat4 through_delegation(Request& rq, const x4::stateid4& wire, Opening& out) {
    const state::Stateid sid{wire.seqid, wire.other};
    if (state::classify(sid) != state::Special::None) return x4::NFS4ERR_BAD_STATEID;
    auto r = rq.svc.clients.check_stateid(rq.clientid, sid,
                                          state::mask_of(state::StateKind::Delegation));
    if (r.status != x4::NFS4_OK) return r.status;
    auto d = rq.svc.delegations.find(sid.other);
    if (!d || d->client != rq.clientid || !(d->file == out.file.node.handle))
        return x4::NFS4ERR_BAD_STATEID;
    out.delegated = true;
    return x4::NFS4_OK;
}

x4::nfsstat4 check_regular(const Target& t, struct statx& st) {
    if (t.pseudo) return x4::NFS4ERR_ISDIR;
    auto a = vfs::getattr(t.node);
    if (!a) return to_nfsstat4(a.error());
    st = *a;
    if (S_ISDIR(st.stx_mode)) return x4::NFS4ERR_ISDIR;
    if (S_ISLNK(st.stx_mode)) return x4::NFS4ERR_SYMLINK;
    if (!S_ISREG(st.stx_mode)) return x4::NFS4ERR_WRONG_TYPE;
    return x4::NFS4_OK;
}

x4::nfsstat4 encode_fail(xdr::Encoder& res, x4::nfsstat4 st) {
    encode_status_only(res, st);
    return st;
}

}  // namespace

OpResult op_open(Compound& c, xdr::Decoder& args, xdr::Encoder& res) {
    Request& rq = *c.rq;
    x4::OPEN4args a;
    if (!rq.decode(args, a)) return OpResult::bad_xdr();

    const uint32_t access = a.share_access & x4::OPEN4_SHARE_ACCESS_BOTH;
    if (access == 0 || (a.share_access & ~(x4::OPEN4_SHARE_ACCESS_BOTH | kShareAccessWants)) ||
        a.share_deny > x4::OPEN4_SHARE_DENY_BOTH)
        return {encode_fail(res, x4::NFS4ERR_INVAL)};
    // §18.16.3: OPEN4_CREATE names a file to create, so only CLAIM_NULL may carry it (the
    // Linux server answers INVAL for any other claim, "required by spec").
    if (a.openhow.opentype() == x4::OPEN4_CREATE && a.claim.claim() != x4::CLAIM_NULL)
        return {encode_fail(res, x4::NFS4ERR_INVAL)};
    // §18.51.3: "If non-reclaim locking operations are done before the RECLAIM_COMPLETE, an
    // NFS4ERR_GRACE error will be returned": a client sends RECLAIM_COMPLETE after a new
    // client ID, "even if there are no locks to reclaim", before its first non-reclaim OPEN.
    if (a.claim.claim() != x4::CLAIM_PREVIOUS && !rq.svc.clients.reclaim_done(rq.clientid))
        return {encode_fail(res, x4::NFS4ERR_GRACE)};
    Target* cur;
    // OPEN of a new name changes the directory (Request::current_for_change).
    const bool creating =
        a.claim.claim() == x4::CLAIM_NULL && a.openhow.opentype() == x4::OPEN4_CREATE;
    if (auto st = creating ? rq.current_for_change(cur) : rq.current(cur); st != x4::NFS4_OK)
        return {encode_fail(res, st)};

    Opening o;
    x4::nfsstat4 st = x4::NFS4_OK;
    switch (a.claim.claim()) {
        case x4::CLAIM_NULL: {
            std::string_view name;
            st = must_be_dir(*cur);
            if (st == x4::NFS4_OK) st = check_name(a.claim.file(), name);
            if (st != x4::NFS4_OK) break;
            if (a.openhow.opentype() == x4::OPEN4_CREATE) {
                st = create(rq, *cur, name, a.openhow.how(),
                            (access & x4::OPEN4_SHARE_ACCESS_WRITE) != 0, o);
            } else {
                st = lookup_entry(rq, *cur, name, o.file);
                if (st == x4::NFS4_OK) {
                    auto d = vfs::getattr(cur->node);
                    uint64_t ch = cur->pseudo || !d ? 0 : change_of(*d);
                    o.cinfo = {false, ch, ch};
                }
            }
            break;
        }
        case x4::CLAIM_FH:
            st = by_handle(*cur, a.openhow, o);
            break;
        case x4::CLAIM_PREVIOUS: {
            // §9.11 / §18.16.3: the client's open of the current filehandle before the
            // restart; only in grace, only once per client (RECLAIM_COMPLETE ends it).
            auto owner = rq.svc.clients.ownerid(rq.clientid);
            st = owner ? rq.svc.recovery.may_reclaim(*owner,
                                                      rq.svc.clients.reclaim_done(rq.clientid))
                       : x4::NFS4ERR_NO_GRACE;
            if (st != x4::NFS4_OK) break;
            st = by_handle(*cur, a.openhow, o);
            o.reclaim = true;
            break;
        }
        case x4::CLAIM_DELEGATE_CUR: {
            // §18.16.3: the file by name in the current directory, through the delegation.
            std::string_view name;
            st = must_be_dir(*cur);
            if (st == x4::NFS4_OK) st = check_name(a.claim.delegate_cur_info().file, name);
            if (st == x4::NFS4_OK) st = lookup_entry(rq, *cur, name, o.file);
            if (st == x4::NFS4_OK)
                st = through_delegation(rq, a.claim.delegate_cur_info().delegate_stateid, o);
            break;
        }
        case x4::CLAIM_DELEG_CUR_FH:
            st = by_handle(*cur, a.openhow, o);
            if (st == x4::NFS4_OK)
                st = through_delegation(rq, a.claim.oc_delegate_stateid(), o);
            break;
        default:  // CLAIM_DELEGATE_PREV, CLAIM_DELEG_PREV_FH
            st = x4::NFS4ERR_NOTSUPP;
    }
    // §8.4.2.1: no new open while returning clients may still reclaim theirs.
    if (st == x4::NFS4_OK && !o.reclaim && !o.delegated) st = rq.svc.recovery.may_change();
    if (st != x4::NFS4_OK) return {encode_fail(res, st)};

    // A file this OPEN created is a regular file (create() checked) that its creator may
    // open whatever its mode: no statx for either.
    struct statx attr {};
    if (!o.created)
        if (st = check_regular(o.file, attr); st != x4::NFS4_OK) return {encode_fail(res, st)};
    const Caller& who = o.file.who;
    if ((access & x4::OPEN4_SHARE_ACCESS_WRITE) && !who.read_write)
        return {encode_fail(res, x4::NFS4ERR_ROFS)};
    // The creator may open what it just created whatever its mode says (§18.16.3).
    if (!o.created) {
        uint32_t need = 0;
        if (access & x4::OPEN4_SHARE_ACCESS_READ) need |= vfs::kAccessRead;
        if (access & x4::OPEN4_SHARE_ACCESS_WRITE) need |= vfs::kAccessModify;
        // POSIX ACLs count (vfs::access_of), as the kernel's open would have them.
        auto granted = vfs::access_of(o.file.node.fd.get(), attr, who.id, need,
                                      /*may_switch=*/true, /*together=*/true);
        if (!granted) return {encode_fail(res, to_nfsstat4(granted.error()))};
        if ((*granted & need) != need) return {encode_fail(res, x4::NFS4ERR_ACCESS)};
    }

    const vfs::FileHandle& fh = o.file.node.handle;
    // From the owner's open and the share check to the record: one OPEN of this file at a time
    // (and no delegation granted between this conflict check and the record).
    std::lock_guard admission(rq.svc.opens.admission(fh));
    // §10.4.1: another client's delegation in the way is recalled first. A writer (or a
    // deny) conflicts with any delegation, a reader with write delegations. An OPEN that
    // already made or truncated the file (a delegation granted meanwhile) is not put off:
    // run again, a GUARDED4 create would find its own file (Request::delegated).
    const bool conflicts = (access & x4::OPEN4_SHARE_ACCESS_WRITE) || a.share_deny;
    if (o.changed ? rq.svc.delegation_conflict(fh, rq.clientid, conflicts)
                  : rq.delegated(fh, conflicts))
        return {encode_fail(res, x4::NFS4ERR_DELAY)};
    auto mine = rq.svc.opens.find_owner(rq.clientid, a.owner.owner, fh);
    Open open;
    if (mine) {
        open = *mine;
    } else {
        open.client = rq.clientid;
        open.owner.assign(a.owner.owner.begin(), a.owner.owner.end());
        open.file = fh;
    }
    const uint32_t want_access = open.access | access, want_deny = open.deny | a.share_deny;
    // A conflict only with courtesy clients reaps them (Services::check_share, §8.4.3).
    if (st = rq.svc.check_share(fh, want_access, want_deny,
                                mine ? std::optional(mine->stateid.other) : std::nullopt);
        st != x4::NFS4_OK)
        return {encode_fail(res, st)};
    const vfs::OpenFor need =
        (want_access & x4::OPEN4_SHARE_ACCESS_WRITE) ? vfs::OpenFor::Write : vfs::OpenFor::Read;
    if (!open.fd || (need == vfs::OpenFor::Write && !open.fd->writable)) {
        // The attributes read above (or at the creation) stand in for the cache's own statx.
        auto f = rq.svc.open_file(o.file.node, need, o.created ? &o.attr : &attr);
        if (!f) return {encode_fail(res, to_nfsstat4(f.error()))};
        open.fd = std::move(*f);
    }
    // A read-only open of a file the cache holds open for writing (it was written through
    // it lately, e.g. created, written and closed) gets a read-only descriptor instead, when
    // it may be delegated and no other open writes: the kernel refuses a read lease, so a
    // read delegation, beside a writable description (pynfs DELEG26, DELEG28).
    if (need == vfs::OpenFor::Read && open.fd->writable && !vfs::leased_file(fh) &&
        rq.svc.may_offer_delegation(rq.clientid, a.share_access) &&
        !(rq.svc.opens.share_except(fh, open.stateid.other).access &
          x4::OPEN4_SHARE_ACCESS_WRITE)) {
        rq.svc.files.forget(fh);
        auto f = rq.svc.open_file(o.file.node, need, o.created ? &o.attr : &attr);
        if (f) open.fd = std::move(*f);
    }
    auto sid = mine ? rq.svc.clients.bump_stateid(rq.clientid, mine->stateid)
                    : rq.svc.clients.new_stateid(rq.clientid, state::StateKind::Open);
    if (sid.status != x4::NFS4_OK) return {encode_fail(res, sid.status)};
    open.access = want_access;
    open.access_modes |= uint8_t(1u << access);
    open.deny_modes |= uint8_t(1u << a.share_deny);
    open.deny = want_deny;
    open.who = who;
    open.stateid = sid.stateid;
    rq.svc.opens.put(open);

    x4::OPEN4res r(x4::NFS4_OK);
    auto& ok = r.resok4();
    ok.stateid = to_wire(sid.stateid);
    ok.cinfo = o.cinfo;
    ok.rflags = x4::OPEN4_RESULT_LOCKTYPE_POSIX;
    ok.attrset = o.attrset.to_wire();
    const uint32_t want = a.share_access & x4::OPEN4_SHARE_ACCESS_WANT_DELEG_MASK;
    std::optional<Delegation> deleg;
    if (o.reclaim && a.claim.delegate_type() != x4::OPEN_DELEGATE_NONE)
        deleg = rq.svc.reclaim_delegation(open, o.file, a.claim.delegate_type());
    else if (!o.reclaim && !o.delegated)
        deleg = rq.svc.offer_delegation(open, o.file, a.share_access);
    if (deleg) {
        // §18.16.4: the permissions ACE names nobody: the client asks ACCESS of the
        // server before it opens locally for another user.
        x4::nfsace4 perms{x4::ACE4_ACCESS_ALLOWED_ACE_TYPE, 0, 0, {}};
        if (deleg->write) {
            ok.delegation.set_delegation_type(x4::OPEN_DELEGATE_WRITE);
            auto& w = ok.delegation.write();
            w.stateid = to_wire(deleg->stateid);
            w.recall = deleg->recalled.has_value();  // a reclaim granted and recalled
            w.space_limit.set_limitby(x4::NFS_LIMIT_SIZE);
            w.space_limit.filesize() = ~uint64_t{0};
            w.permissions = perms;
        } else {
            ok.delegation.set_delegation_type(x4::OPEN_DELEGATE_READ);
            auto& r = ok.delegation.read();
            r.stateid = to_wire(deleg->stateid);
            r.recall = deleg->recalled.has_value();
            r.permissions = perms;
        }
    } else if (want == 0) {
        ok.delegation.set_delegation_type(x4::OPEN_DELEGATE_NONE);
    } else {
        ok.delegation.set_delegation_type(x4::OPEN_DELEGATE_NONE_EXT);
        auto& why = ok.delegation.od_whynone();
        if (want == x4::OPEN4_SHARE_ACCESS_WANT_NO_DELEG) {
            why.set_ond_why(x4::WND4_NOT_WANTED);
        } else if (want == x4::OPEN4_SHARE_ACCESS_WANT_CANCEL) {
            why.set_ond_why(x4::WND4_CANCELLED);
        } else {
            // §18.16.3: "If the server does not support atomic delegation upgrade or
            // downgrade, then ond_why will be set to WND4_NOT_SUPP_UPGRADE or
            // WND4_NOT_SUPP_DOWNGRADE": the client holds a delegation of the file, of the
            // other type than the one it asks for (one per client and file here).
            const std::optional<bool> held = rq.svc.delegations.held_by(fh, rq.clientid);
            if (held && *held && want == x4::OPEN4_SHARE_ACCESS_WANT_READ_DELEG) {
                why.set_ond_why(x4::WND4_NOT_SUPP_DOWNGRADE);
            } else if (held && !*held && want == x4::OPEN4_SHARE_ACCESS_WANT_WRITE_DELEG) {
                why.set_ond_why(x4::WND4_NOT_SUPP_UPGRADE);
            } else if (rq.svc.options.delegations) {
                // Refused for now; turned off (Options::delegations, below): as short of
                // resources, for good.
                why.set_ond_why(x4::WND4_CONTENTION);
                why.ond_server_will_push_deleg() = false;
            } else {
                why.set_ond_why(x4::WND4_RESOURCE);
                why.ond_server_will_signal_avail() = false;
            }
        }
    }
    x4::xdr_encode(res, r);
    // The attributes read above: GETATTR and ACCESS after it (GETFH between) answer with
    // them. A created file's, unless attributes were set after they were read.
    const struct statx* final_attrs =
        o.created ? (o.attr_final ? &o.attr : nullptr) : (o.file.pseudo ? nullptr : &attr);
    rq.set_current(std::move(o.file), final_attrs);
    c.current_stateid = ok.stateid;
    return {};
}

}  // namespace nfsrdmad::nfs::v4
