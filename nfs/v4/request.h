// request.h — one NFSv4.1 COMPOUND in progress: what its operations share beyond the
// Compound itself (the daemon's services, the export snapshot, the session SEQUENCE
// found, the caller) and the per-operation plumbing: turning the current filehandle
// into something to act on, mapping errno to nfsstat4.
//
// An operation reaches its Request through Compound::rq:
//
//     OpResult op_getattr(Compound& c, xdr::Decoder& args, xdr::Encoder& res) {
//         Request& rq = *c.rq;
//         Target* t;
//         if (auto st = rq.current(t); st != x4::NFS4_OK) ...
#pragma once

#include <cstdint>
#include <memory>
#include <optional>
#include <span>
#include <string>

#include "nfs/common/authorize.h"
#include "nfs/v4/compound.h"
#include "nfs/v4/services.h"
#include "nfs/vfs/node.h"
#include "transport/rpc/program.h"

namespace nfsrdmad::nfs::v4 {

// What a filehandle names, resolved: a directory of the pseudo file system (RFC 8881
// §7.3), or an object of an export together with the caller's rights there.
struct Target {
    bool pseudo = false;
    uint64_t pseudo_node = 0;  // pseudo: PseudoFs node id
    vfs::Node node;            // !pseudo: the object (node.exp is its export)
    Caller who;                // !pseudo: the rule that admitted the caller, its identity
    // !pseudo: the object's S_IFMT bits when they were read with it (0: not known). An
    // inode's type never changes, so they stay true for as long as `node` holds it.
    uint32_t type = 0;
};

// A current or saved filehandle as Request resolved it. At namespace scope, not nested
// in Request, so that std::optional's emplace() can build it in place.
struct ResolvedFh {
    // User-provided, so that emplace() does not zero-initialize the whole object before
    // the members' own initializers run: the 256-byte statx is no longer zeroed at all.
    // Of `attrs` only stx_mask is set here; the rest is read only where resolve() or
    // set_current() wrote it (attrs_op says where).
    ResolvedFh() { attrs.stx_mask = 0; }
    WireHandle fh;
    Target t;
    // Read in operation number `attrs_op` (see attrs_read_now()): when the handle was
    // resolved, or at the end of the operation that set it (`after_op`).
    std::optional<size_t> attrs_op;
    bool after_op = false;
    struct statx attrs;  // stx_mask 0: not read (ResolvedFh())
};

class Request {
  public:
    Request(rpc::CallContext& ctx, Services& svc);
    Request(const Request&) = delete;
    Request& operator=(const Request&) = delete;

    rpc::CallContext& ctx;
    Services& svc;

  private:
    vfs::ExportRegistry::Pin pin_;  // the table, for this COMPOUND (export_registry.h)

  public:
    const std::shared_ptr<const vfs::ExportTable>& table;  // this COMPOUND's export snapshot
    // The pseudo file system over `table`, built (or found) on first use: most COMPOUNDs
    // never touch it, and finding it takes the Services' mutex.
    const PseudoFs& pseudo();
    Compound compound;  // compound.rq == this

    // Set by SEQUENCE (§18.46): the session and client this COMPOUND runs in.
    std::shared_ptr<state::Session> session;
    state::ClientId clientid = 0;
    uint32_t slot = 0;  // the session's slot this COMPOUND holds
    // A nowait COMPOUND: the sequence ID it began the slot with, and the slot as it was
    // before, for SEQUENCE's on_abandon to put back (kept here, so that the callback holds
    // one pointer and std::function allocates nothing).
    uint32_t slot_seqid = 0;
    state::PriorSlot slot_prior;

    // §10.4.1: another client's delegation of `file` is in the way (the server starts its
    // recall). The operation answers NFS4ERR_DELAY before it changes anything, and the
    // COMPOUND may be put off and run again when the holder is likely done
    // (Compound::held_up).
    bool delegated(const vfs::FileHandle& file, bool write) {
        if (!svc.delegation_conflict(file, clientid, write)) return false;
        compound.held_up = true;
        return true;
    }

    // The current filehandle resolved and checked against its export's rules; cached
    // until the current filehandle changes. NFS4_OK, or the error for the operation:
    // NOFILEHANDLE (none set), BADHANDLE / STALE (not ours, or gone), WRONGSEC (the
    // export does not take this flavor, §2.6.3.1), ACCESS (the client is not listed),
    // PERM (a `secure` export and a call from port >= 1024).
    x4::nfsstat4 current(Target*& out);
    x4::nfsstat4 saved(Target*& out);
    // The same for the directory whose entries an operation changes (OPEN's create,
    // CREATE, REMOVE, RENAME, LINK): one the descriptor cache holds is taken without a
    // statx, since the change reads the directory's attributes under its lock just before
    // it runs (vfs::change_directory: change_info4's before, and STALE if it was removed).
    x4::nfsstat4 current_for_change(Target*& out);
    x4::nfsstat4 saved_for_change(Target*& out);
    // The current filehandle checked as current() checks it (its MAC, its export's rules),
    // without opening the object: for an operation that only matches it against a
    // stateid's file (CLOSE). `pseudo`: a pseudo-fs directory's handle. An object removed
    // since it was opened is found (its handle still names the open file), as with knfsd.
    x4::nfsstat4 current_handle(const WireHandle*& out, bool& pseudo);
    // Any handle, without touching the current one (PUTFH checks with this). `attrs`: see
    // vfs::ExportTable::open (not set for a pseudo-fs handle).
    // `for_change`: see current_for_change.
    x4::nfsstat4 resolve(std::span<const uint8_t> fh, Target& out, struct statx* attrs = nullptr,
                         bool for_change = false);
    // A nowait COMPOUND (Compound::nowait) that cannot go on without blocking: a handle the
    // descriptor cache does not hold, an export that is not local or names hosts, a page
    // not cached. The operation returns the status this gives (NFS4ERR_DELAY), and the
    // engine gives the COMPOUND up (Compound::would_block) before it is encoded or counted.
    x4::nfsstat4 block() {
        compound.would_block = true;
        return x4::NFS4ERR_DELAY;
    }
    // Whether a nowait COMPOUND leaves `ref`'s object to a worker before opening anything:
    // an export not on a local disk, or one whose rules need a name lookup.
    static bool leave_to_worker(const vfs::HandleRef& ref) {
        return !ref.exp->local() || may_look_up_names(*ref.exp);
    }
    // table->find_by_handle (the handle's MAC, its export), remembering the last handle
    // found: PUTFH checks the handle and the operation after it resolves the same one,
    // which then costs no second MAC, nor a copy. The pointer is good until a call for
    // other bytes.
    vfs::Result<const vfs::HandleRef*> find_by_handle(std::span<const uint8_t> fh);
    // A nowait pre-flight's look into the descriptor cache (PUTFH's, before a GETATTR,
    // ACCESS or LOOKUP of its object): whether the cache holds `ref`'s object. What it
    // found is kept for resolve(), which then takes it instead of looking it up again.
    bool held_in_cache(const vfs::HandleRef& ref) {
        held_ = svc.files.held(ref);
        return held_ != nullptr;
    }
    // The attributes of the current filehandle's object when no operation can have
    // changed them since they were read: current() resolved it during the operation
    // running now, or the operation that made it current read them last (set_current)
    // and only operations that change nothing (GETFH, GETATTR, ACCESS, VERIFY, NVERIFY)
    // ran since. GETATTR and ACCESS answer with them instead of another statx. nullptr
    // otherwise.
    const struct statx* attrs_read_now() const;
    // Makes `t` the current filehandle (LOOKUP, OPEN, PUTROOTFH ...), with its handle;
    // the current stateid is cleared (§16.2.3.1.2). `attrs`: the object's attributes,
    // read after everything this operation changed (see attrs_read_now()).
    void set_current(Target t, const struct statx* attrs = nullptr);
    // SAVEFH / RESTOREFH (§18.27, §18.31): the handles and their resolutions.
    void save_current();
    void restore_saved();

    // The wire handle of a target.
    WireHandle handle_of(const Target& t) const;
    // The caller's identity for acting on a pseudo directory (read-only): squashed
    // to nobody unless it is root.
    const rpc::Credential& cred() const { return ctx.header.cred; }
    // Who the client owner is for EXCHANGE_ID's principal check (§2.4.1):
    // "sys:<uid>" for AUTH_SYS, "krb5:<principal>" for RPCSEC_GSS, "none" for AUTH_NONE.
    std::string principal() const;
    // RPCSEC_GSS with integrity or privacy (krb5i, krb5p): what SP4_MACH_CRED requires of
    // EXCHANGE_ID (RFC 8881 §18.35.3).
    bool integrity_protected() const;
    state::ConnId conn() const { return ctx.header.peer ? ctx.header.peer->conn : 0; }

    // Decodes an operation's arguments (every byte of a COMPOUND is consumed by its
    // operations; the engine checks what is left at the end).
    template <class Args>
    bool decode(xdr::Decoder& d, Args& a) {
        return x4::xdr_decode(d, a);
    }

  private:
    using Cached = ResolvedFh;
    // resolve() into a Target as Target{} makes it (a ResolvedFh just emplaced).
    x4::nfsstat4 resolve_fresh(std::span<const uint8_t> fh, Target& out, struct statx* attrs,
                               bool for_change);
    x4::nfsstat4 resolve_cached(const std::optional<WireHandle>& fh, std::optional<Cached>& cache,
                                Target*& out, bool for_change = false);
    x4::nfsstat4 admit(const vfs::Export& exp, Caller& who);

    std::optional<Cached> current_, saved_;
    std::optional<vfs::HandleRef> found_;     // find_by_handle's last success
    std::shared_ptr<const vfs::OpenFile> held_;  // held_in_cache()'s, until resolve() takes it
    std::shared_ptr<const PseudoFs> pseudo_;  // pseudo(): null until first asked for
};

// errno (and vfs::kBadHandle) -> nfsstat4 (RFC 8881 §15.1).
x4::nfsstat4 to_nfsstat4(int err);

}  // namespace nfsrdmad::nfs::v4
