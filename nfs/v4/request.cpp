#include "nfs/v4/request.h"

#include <cerrno>
#include <cstring>

#include "nfs/vfs/attrs.h"
#include "nfs/vfs/result.h"

namespace nfsrdmad::nfs::v4 {

namespace {
// CONN_BACK_CHAN is granted only when there is a backchannel to run it.
state::Limits with_backchannel(state::Limits l, bool backchannel) {
    l.fore.backchannel = backchannel;
    return l;
}
}  // namespace

Services::Services(std::shared_ptr<vfs::ExportRegistry> e, const Options& o)
    : options(o),
      exports(std::move(e)),
      file_cache(o.files ? o.files : std::make_shared<vfs::FdCache>()),
      files(*file_cache),
      clock(o.clock ? *o.clock : steady_clock),
      recovery(o.recovery_store, clock,
               o.grace_period.count() ? std::chrono::steady_clock::duration(o.grace_period)
                                      : std::chrono::steady_clock::duration(o.limits.lease),
               o.nlm_hosts),
      clients(clock,
              o.epoch            ? o.epoch
              : recovery.epoch() ? recovery.epoch()
                                 : static_cast<uint32_t>(::time(nullptr)),
              with_backchannel(o.limits, o.back_channels != nullptr)),
      ids(o.domain, system_name_service(), &clock),
      lock_table(o.lock_table ? o.lock_table : std::make_shared<vfs::state::LockTable>()),
      locks(*lock_table),
      callbacks(o.back_channels, o.callback_timeout),
      delegations(o.max_delegations) {}

std::shared_ptr<const PseudoFs> Services::pseudo_for(
    const std::shared_ptr<const vfs::ExportTable>& t) {
    std::lock_guard lock(mu_);
    if (pseudo_ && pseudo_table_.lock() == t) return pseudo_;
    std::vector<PseudoFs::ExportPoint> points;
    if (t)
        for (const auto& e : t->exports())
            points.push_back({vfs::normalize_path(e->spec().path), e->fsid()});
    pseudo_ = std::make_shared<const PseudoFs>(points);
    pseudo_table_ = t;
    return pseudo_;
}

const PseudoFs& Request::pseudo() {
    if (!pseudo_) pseudo_ = svc.pseudo_for(table);
    return *pseudo_;
}

Request::Request(rpc::CallContext& ctx, Services& svc)
    : ctx(ctx), svc(svc), pin_(*svc.exports), table(pin_.table()) {
    compound.rq = this;
}

x4::nfsstat4 Request::admit(const vfs::Export& exp, Caller& who) {
    ctx.report.export_slot = exp.spec().stats_slot;  // the COMPOUND counts under the last
    Verdict v = authorize(exp, ctx.header, who);
    // RFC 8881 §18.35.3: the operations of a client's spo_must_allow may be performed with
    // its machine credential. The Linux client does so with CLOSE, LOCKU, DELEGRETURN and
    // OPEN_DOWNGRADE (krb5i, whatever the mount's sec=), on files of exports that may not
    // list krb5i, in COMPOUNDs where other operations come first (PUTFH, GETATTR,
    // DELEGRETURN). As the Linux server (nfsd4_spo_must_allow), a COMPOUND with such an
    // operation here or further on passes the export's sec= list; its client rule, squash
    // and access still apply.
    const std::span<const uint32_t> rest = compound.op_index < compound.decoded_ops
                                               ? compound.opnums().subspan(compound.op_index)
                                               : std::span<const uint32_t>();
    if (v == Verdict::WeakAuth && clientid != 0 && integrity_protected() &&
        svc.clients.mach_allowed(clientid, rest, principal()))
        v = authorize(exp, ctx.header, who, /*any_flavor=*/true);
    switch (v) {
        case Verdict::Ok:
            return x4::NFS4_OK;
        case Verdict::NotAllowed:
            return x4::NFS4ERR_ACCESS;
        case Verdict::InsecurePort:
            return x4::NFS4ERR_PERM;  // as knfsd answers a `secure` export
        case Verdict::WeakAuth:
            // RFC 8881 §2.6.3.1: the client asks SECINFO(_NO_NAME) what to use.
            return x4::NFS4ERR_WRONGSEC;
    }
    return x4::NFS4ERR_ACCESS;
}

x4::nfsstat4 Request::resolve(std::span<const uint8_t> fh, Target& out, struct statx* attrs,
                              bool for_change) {
    out = Target{};
    return resolve_fresh(fh, out, attrs, for_change);
}

x4::nfsstat4 Request::resolve_fresh(std::span<const uint8_t> fh, Target& out, struct statx* attrs,
                                    bool for_change) {
    if (is_pseudo_handle(fh)) {
        auto node = decode_pseudo_handle(table->key(), fh);
        if (!node) return x4::NFS4ERR_BADHANDLE;
        // A pseudo directory no longer above any export (a reload took it away).
        if (!pseudo().has(*node)) return x4::NFS4ERR_STALE;
        out.pseudo = true;
        out.pseudo_node = *node;
        return x4::NFS4_OK;
    }
    auto found = find_by_handle(fh);
    if (!found) return to_nfsstat4(found.error());
    const vfs::HandleRef& ref = **found;
    if (ctx.nowait && leave_to_worker(ref)) return block();
    // Authorized before anything of the export is opened (as v3's Request::resolve).
    if (auto st = admit(*ref.exp, out.who); st != x4::NFS4_OK) return st;
    if (for_change && !ctx.nowait) {
        // A directory the cache holds, as it is (current_for_change): `attrs` is not
        // read (its stx_mask stays 0), and a regular file's type is read if asked for.
        if (auto held = svc.files.held_node(ref)) {
            out.type = held->fd.shared_directory() ? S_IFDIR : 0;
            out.node = std::move(*held);
            return x4::NFS4_OK;
        }
    }
    // Nowait, what the pre-flight found in the cache for this handle (held_in_cache) is
    // taken as it is, not looked up again.
    const bool preflight =
        ctx.nowait && held_ && held_->exp == ref.exp && held_->handle == ref.handle;
    auto node = !ctx.nowait ? svc.files.node(ref, attrs)
                : preflight ? svc.files.cached_node(ref, std::move(held_), attrs)
                            : svc.files.cached_node(ref, attrs);
    if (!node && ctx.nowait && node.error() == EWOULDBLOCK) return block();
    if (!node) return to_nfsstat4(node.error());
    out.node = std::move(*node);
    if (attrs) out.type = attrs->stx_mode & S_IFMT;
    return x4::NFS4_OK;
}

vfs::Result<const vfs::HandleRef*> Request::find_by_handle(std::span<const uint8_t> fh) {
    if (found_) {
        const auto have = found_->handle.data();
        if (have.size() == fh.size() && std::memcmp(have.data(), fh.data(), fh.size()) == 0)
            return &*found_;
    }
    auto ref = table->find_by_handle(fh);
    if (!ref) return ref.failure();
    found_ = std::move(*ref);
    return &*found_;
}

x4::nfsstat4 Request::resolve_cached(const std::optional<WireHandle>& fh,
                                     std::optional<Cached>& cache, Target*& out, bool for_change) {
    out = nullptr;
    if (!fh) return x4::NFS4ERR_NOFILEHANDLE;
    if (!cache || cache->fh != *fh) {
        // Resolved in place: no Target nor statx copied into the cache after.
        Cached& c = cache.emplace();
        c.fh = *fh;
        if (auto st = resolve_fresh(fh->data(), c.t, &c.attrs, for_change); st != x4::NFS4_OK) {
            cache.reset();
            return st;
        }
        // Read now, unless a pseudo-fs handle or a held directory (stx_mask 0).
        if (!c.t.pseudo && c.attrs.stx_mask != 0) c.attrs_op = compound.op_index;
    }
    out = &cache->t;
    return x4::NFS4_OK;
}

namespace {

// Operations that change no object's attributes (nor the current filehandle).
bool leaves_attributes(uint32_t opnum) {
    switch (opnum) {
        case x4::OP_GETFH:
        case x4::OP_GETATTR:
        case x4::OP_ACCESS:
        case x4::OP_VERIFY:
        case x4::OP_NVERIFY:
            return true;
        default:
            return false;
    }
}

}  // namespace

const struct statx* Request::attrs_read_now() const {
    if (!current_ || !current_->attrs_op) return nullptr;
    const size_t at = *current_->attrs_op;
    if (at == compound.op_index) return &current_->attrs;
    if (!current_->after_op || at > compound.op_index) return nullptr;
    for (size_t i = at + 1; i < compound.op_index; ++i)
        if (i >= compound.decoded_ops || !leaves_attributes(compound.opnum_at[i])) return nullptr;
    return &current_->attrs;
}

x4::nfsstat4 Request::current(Target*& out) {
    return resolve_cached(compound.current_fh, current_, out);
}

x4::nfsstat4 Request::current_for_change(Target*& out) {
    return resolve_cached(compound.current_fh, current_, out, /*for_change=*/true);
}

x4::nfsstat4 Request::saved_for_change(Target*& out) {
    return resolve_cached(compound.saved_fh, saved_, out, /*for_change=*/true);
}

x4::nfsstat4 Request::current_handle(const WireHandle*& out, bool& pseudo_fh) {
    out = nullptr;
    if (!compound.current_fh) return x4::NFS4ERR_NOFILEHANDLE;
    const WireHandle& fh = *compound.current_fh;
    pseudo_fh = is_pseudo_handle(fh.data());
    if (pseudo_fh) {
        auto node = decode_pseudo_handle(table->key(), fh.data());
        if (!node) return x4::NFS4ERR_BADHANDLE;
        if (!pseudo().has(*node)) return x4::NFS4ERR_STALE;
    } else if (!current_ || current_->fh != fh) {  // (current_: resolved and admitted)
        auto ref = find_by_handle(fh.data());
        if (!ref) return to_nfsstat4(ref.error());
        Caller who;
        if (auto st = admit(*(*ref)->exp, who); st != x4::NFS4_OK) return st;
    }
    out = &fh;
    return x4::NFS4_OK;
}

x4::nfsstat4 Request::saved(Target*& out) {
    return resolve_cached(compound.saved_fh, saved_, out);
}

WireHandle Request::handle_of(const Target& t) const {
    if (t.pseudo) return encode_pseudo_handle(table->key(), t.pseudo_node);
    return t.node.handle;
}

void Request::set_current(Target t, const struct statx* attrs) {
    WireHandle fh = handle_of(t);
    compound.current_fh = fh;
    // RFC 8881 §16.2.3.1.2: an operation that sets the current filehandle and no
    // stateid (LOOKUP, LOOKUPP, PUTROOTFH, CREATE ...) leaves no current stateid; OPEN
    // sets its own after this.
    compound.current_stateid.reset();
    Cached& c = current_.emplace();
    c.fh = std::move(fh);
    c.t = std::move(t);
    if (attrs && !current_->t.pseudo) {
        current_->attrs_op = compound.op_index;
        current_->after_op = true;
        current_->attrs = *attrs;
    }
}

void Request::save_current() {
    compound.saved_fh = compound.current_fh;
    compound.saved_stateid = compound.current_stateid;
    saved_.reset();  // resolved again when asked for (a Node is not copied)
}

void Request::restore_saved() {
    compound.current_fh = compound.saved_fh;
    compound.current_stateid = compound.saved_stateid;
    current_.reset();
}

std::string Request::principal() const {
    const auto& c = ctx.header.cred;
    if (c.flavor == vfs::kAuthSys) return "sys:" + std::to_string(c.sys.uid);
    if (!c.principal.empty()) return "krb5:" + c.principal;  // any of its services
    return "none";
}

bool Request::integrity_protected() const {
    const uint32_t f = ctx.header.cred.flavor;
    return f == rpc::kAuthGssKrb5i || f == rpc::kAuthGssKrb5p;
}

x4::nfsstat4 to_nfsstat4(int err) {
    switch (err) {
        case 0:
            return x4::NFS4_OK;
        case EPERM:
            return x4::NFS4ERR_PERM;
        case ENOENT:
            return x4::NFS4ERR_NOENT;
        case ENXIO:  // NFS4ERR_NXIO is obsolete in NFSv4.1 (§15.1.16.3: MUST NOT be generated)
            return x4::NFS4ERR_IO;
        case EACCES:
            return x4::NFS4ERR_ACCESS;
        case EEXIST:
            return x4::NFS4ERR_EXIST;
        case EXDEV:
            return x4::NFS4ERR_XDEV;
        case ENOTDIR:
            return x4::NFS4ERR_NOTDIR;
        case EISDIR:
            return x4::NFS4ERR_ISDIR;
        case EINVAL:
            return x4::NFS4ERR_INVAL;
        case EFBIG:
            return x4::NFS4ERR_FBIG;
        case ENOSPC:
            return x4::NFS4ERR_NOSPC;
        case EROFS:
            return x4::NFS4ERR_ROFS;
        case EMLINK:
            return x4::NFS4ERR_MLINK;
        case ENAMETOOLONG:
            return x4::NFS4ERR_NAMETOOLONG;
        case ENOTEMPTY:
            return x4::NFS4ERR_NOTEMPTY;
        case EDQUOT:
            return x4::NFS4ERR_DQUOT;
        case ESTALE:
            return x4::NFS4ERR_STALE;
        case ELOOP:
            return x4::NFS4ERR_SYMLINK;  // §18.16.3: a symlink where a dir was needed
        case EOPNOTSUPP:
            return x4::NFS4ERR_NOTSUPP;
        case ETXTBSY:
            return x4::NFS4ERR_FILE_OPEN;
        case EBADF:
            return x4::NFS4ERR_BAD_STATEID;
        // A shortage the client should wait out (fd_pressure.h; the kernel short of
        // memory for the call): NFS4ERR_DELAY, as the kernel nfsd answers -ENOMEM.
        case EAGAIN:
        case EMFILE:
        case ENFILE:
        case ENOMEM:
            return x4::NFS4ERR_DELAY;
        case vfs::kBadHandle:
            return x4::NFS4ERR_BADHANDLE;
        default:
            return x4::NFS4ERR_IO;
    }
}

}  // namespace nfsrdmad::nfs::v4
