// Per-call plumbing shared by the procedures: decoding arguments, turning a file
// handle into a node the caller may use, and encoding the result.
#pragma once

#include <optional>

#include "nfs/common/authorize.h"
#include "nfs/v3/attrs.h"
#include "nfs/v3/nfs3_program.h"
#include "nfs/vfs/attrs.h"
#include "nfs/vfs/fd_cache.h"
#include "transport/rpc/program.h"
#include "xdr/nfs3_prot.h"

namespace nfsrdmad::nfs::v3 {

// A node plus who is acting on it and how.
struct Target {
    vfs::Node node;
    Caller who;
};

class Request {
  public:
    Request(rpc::CallContext& ctx, Services& svc)
        : ctx(ctx), svc(svc), pin_(*svc.exports), table(pin_.table()) {}

    rpc::CallContext& ctx;
    Services& svc;

  private:
    vfs::ExportRegistry::Pin pin_;  // the table, for this call (export_registry.h)

  public:
    const std::shared_ptr<const vfs::ExportTable>& table;

    // Every byte of the arguments, and every read chunk (RFC 8166 §4.5.2), must be used.
    template <class Args>
    bool decode(Args& a) {
        return x::xdr_decode(ctx.args, a) && ctx.args.remaining() == 0 &&
               ctx.args.unconsumed_chunks() == 0;
    }

    // Handle -> its export -> the export's rules -> node: nothing is opened for a caller
    // the export refuses. NFS3_OK, or the status to reply with. A flavor the export does
    // not accept makes the whole call an AUTH_TOOWEAK reject.
    // `attrs`: see vfs::ExportTable::open.
    // `for_change`: see resolve_for_change.
    x::nfsstat3 resolve(const x::nfs_fh3& fh, Target& out, struct statx* attrs = nullptr,
                        bool for_change = false);
    // The same for the directory of CREATE, MKDIR, SYMLINK, MKNOD, REMOVE, RMDIR, RENAME
    // and LINK (never nowait), without the statx resolve() makes of a directory the cache
    // holds: the change reads the directory's attributes under its lock just before it
    // runs (vfs::change_directory: its wcc pre-op attributes, and ESTALE if it was
    // removed), one system call per such call fewer. A failure before the change then
    // has no pre-op attributes (RFC 1813 §2.6: pre_op_attr is optional).
    x::nfsstat3 resolve_for_change(const x::nfs_fh3& fh, Target& out) {
        return resolve(fh, out, nullptr, /*for_change=*/true);
    }
    // The same for READ/WRITE/COMMIT, through the descriptor cache. OpenFor::Write opens
    // the file for writing only if the caller's rule allows writing (else it is opened
    // read-only, and the procedure answers NFS3ERR_ROFS). `read_now`: as FdCache::get's.
    x::nfsstat3 open(const x::nfs_fh3& fh, vfs::OpenFor need,
                     std::shared_ptr<const vfs::OpenFile>& file, Caller& who,
                     std::optional<struct statx>* read_now = nullptr);

    // An NFSv4.1 client's delegation of `file` stands in the way of this access (RFC 8881
    // §10.4.1): its recall is under way and the call answers NFS3ERR_JUKEBOX, before it
    // changed anything (held_up()).
    bool delegated(const vfs::FileHandle& file, bool write) {
        if (!svc.delegations || !svc.delegations->any() || !svc.delegations->conflict(file, write))
            return false;
        held_up_ = true;
        return true;
    }
    // The call answers NFS3ERR_JUKEBOX for a delegation's holder (a recall, a CB_GETATTR)
    // and has done nothing else: reply() lets the dispatcher run it again a little later
    // instead (rpc::Outcome::Later), so that the client does not wait out the 5 s it waits
    // after a JUKEBOX (Linux's NFS_JUKEBOX_RETRY_TIME) for what takes the holder
    // milliseconds. The kernel nfsd parks its thread up to 30 ms for a DELEGRETURN
    // (nfsd_wait_for_delegreturn); here no thread waits.
    x::nfsstat3 held_up() {
        held_up_ = true;
        return x::NFS3ERR_JUKEBOX;
    }
    bool any_delegations() const { return svc.delegations && svc.delegations->any(); }
    // Attributes of `file` sent in passing would be stale (a write delegation is out).
    bool stale_attributes(const vfs::FileHandle& file) const {
        return any_delegations() && svc.delegations->write_delegated(file);
    }

    // A nowait call (rpc::CallContext::nowait) that cannot go on without blocking: a handle
    // the descriptor cache does not hold, or a write delegation of the file (its recall or
    // CB_GETATTR is a worker's). Returns a status for the procedure to carry to reply(),
    // which then answers Outcome::would_block() instead; nothing may be done in between.
    // decline(): the same, said from the arguments alone, before any of the call's work.
    x::nfsstat3 block() {
        would_block_ = true;
        return x::NFS3ERR_JUKEBOX;
    }
    x::nfsstat3 decline() {
        declined_ = true;
        return block();
    }
    bool would_block() const { return would_block_; }
    // Whether a nowait call leaves `ref` to a worker before touching it: an export not on a
    // local disk, one whose rules need a name lookup, or a file an NFSv4.1 client holds a
    // write delegation of. A read delegation conflicts with none of the nowait procedures
    // (GETATTR, ACCESS, LOOKUP, READ: RFC 8881 §10.4.1, §10.4.3).
    bool leave_to_worker(const vfs::HandleRef& ref) const {
        return !ref.exp->local() || may_look_up_names(*ref.exp) ||
               (any_delegations() && svc.delegations->write_delegated(ref.handle));
    }

    template <class Res>
    rpc::Outcome reply(const Res& res) {
        if (would_block_) return rpc::Outcome::would_block(!declined_);
        if (rejected_) return *rejected_;
        x::xdr_encode(ctx.res, res);
        if (held_up_ && res.status() == x::NFS3ERR_JUKEBOX) return rpc::Outcome::later();
        return rpc::Outcome::ok();
    }

  private:
    x::nfsstat3 admit(const vfs::Export& exp, Caller& who);
    std::optional<rpc::Outcome> rejected_;
    bool held_up_ = false;
    bool would_block_ = false;
    bool declined_ = false;
};

// The procedures (RFC 1813 §3.3.x).
rpc::Outcome proc_getattr(Request& rq);
rpc::Outcome proc_setattr(Request& rq);
rpc::Outcome proc_lookup(Request& rq);
rpc::Outcome proc_access(Request& rq);
rpc::Outcome proc_readlink(Request& rq);
rpc::Outcome proc_read(Request& rq);
rpc::Outcome proc_write(Request& rq);
rpc::Outcome proc_create(Request& rq);
rpc::Outcome proc_mkdir(Request& rq);
rpc::Outcome proc_symlink(Request& rq);
rpc::Outcome proc_mknod(Request& rq);
rpc::Outcome proc_remove(Request& rq);
rpc::Outcome proc_rmdir(Request& rq);
rpc::Outcome proc_rename(Request& rq);
rpc::Outcome proc_link(Request& rq);
rpc::Outcome proc_readdir(Request& rq);
rpc::Outcome proc_readdirplus(Request& rq);
rpc::Outcome proc_fsstat(Request& rq);
rpc::Outcome proc_fsinfo(Request& rq);
rpc::Outcome proc_pathconf(Request& rq);
rpc::Outcome proc_commit(Request& rq);

// Transfer sizes FSINFO advertises (RFC 1813 §3.3.19), and the most the server sends.
inline constexpr uint32_t kMaxTransfer = 1u << 20;   // rtmax, rtpref, wtmax, wtpref
inline constexpr uint32_t kDirTransfer = 64u << 10;  // dtpref: one READDIR(PLUS) reply

// writeverf3 of this daemon run (RFC 1813 §3.3.7, §3.3.21).
void put_write_verifier(x::writeverf3& v);

// cookieverf3 <-> the directory's 64-bit verifier (RFC 1813 §3.3.16).
x::cookieverf3 to_cookieverf(uint64_t v);
uint64_t from_cookieverf(const x::cookieverf3& v);

// sattr3 -> vfs::SetAttrs (RFC 1813 §2.6).
vfs::SetAttrs to_set_attrs(const x::sattr3& s);

}  // namespace nfsrdmad::nfs::v3
