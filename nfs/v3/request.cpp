#include "nfs/v3/request.h"

#include <cerrno>

#include "nfs/vfs/secret.h"
#include "xdr/rpc_prot.h"

namespace nfsrdmad::nfs::v3 {

x::nfsstat3 Request::admit(const vfs::Export& exp, Caller& who) {
    ctx.report.export_slot = exp.spec().stats_slot;  // counted under it, refused or not
    switch (authorize(exp, ctx.header, who)) {
        case Verdict::Ok:
            return x::NFS3_OK;
        case Verdict::NotAllowed:
            return x::NFS3ERR_ACCES;
        case Verdict::InsecurePort:
            // knfsd (nfsd_setuser_and_check_port) answers nfserr_perm.
            return x::NFS3ERR_PERM;
        case Verdict::WeakAuth:
            rejected_ = rpc::Outcome::auth(xdr::rpc::AUTH_TOOWEAK);
            return x::NFS3ERR_ACCES;
    }
    return x::NFS3ERR_ACCES;
}

// The caller is authorized against the export the handle names before anything of
// that export is opened: a refused client costs a MAC check and no filesystem access.
x::nfsstat3 Request::resolve(const x::nfs_fh3& fh, Target& out, struct statx* attrs,
                             bool for_change) {
    auto ref = table->find_by_handle(fh.data);
    if (!ref) return to_nfsstat3(ref.error());
    if (ctx.nowait && leave_to_worker(*ref)) return block();
    if (x::nfsstat3 s = admit(*ref->exp, out.who); s != x::NFS3_OK) return s;
    auto node = ctx.nowait   ? svc.files.cached_node(*ref, attrs)
                : for_change ? svc.files.node_for_change(*ref)
                             : svc.files.node(*ref, attrs);
    if (!node && ctx.nowait && node.error() == EWOULDBLOCK) return block();
    if (!node) return to_nfsstat3(node.error());
    out.node = std::move(*node);
    return x::NFS3_OK;
}

x::nfsstat3 Request::open(const x::nfs_fh3& fh, vfs::OpenFor need,
                          std::shared_ptr<const vfs::OpenFile>& file, Caller& who,
                          std::optional<struct statx>* read_now) {
    auto ref = table->find_by_handle(fh.data);
    if (!ref) return to_nfsstat3(ref.error());
    if (ctx.nowait && leave_to_worker(*ref)) return block();
    if (x::nfsstat3 s = admit(*ref->exp, who); s != x::NFS3_OK) return s;
    // A caller without write access gets NFS3ERR_ROFS from WRITE, with the file's wcc
    // data: a read-only descriptor serves that (RFC 1813 §3.3.7).
    if (!who.read_write) need = vfs::OpenFor::Read;
    auto f = ctx.nowait ? svc.files.cached(*ref, need) : svc.files.get(*ref, need, read_now);
    if (!f && ctx.nowait && f.error() == EWOULDBLOCK) return block();
    // A file lease being broken (an NFSv4.1 read delegation's, whose recall the break
    // starts, or a local process's): an open for writing would have to wait for it.
    if (!f && f.error() == EWOULDBLOCK) return held_up();
    if (!f) return to_nfsstat3(f.error());
    // READ beside a write delegation, WRITE beside any (RFC 8881 §10.4.1). Nowait, one
    // granted since leave_to_worker() looked is a worker's: the recall starts there.
    if (ctx.nowait && any_delegations() && svc.delegations->write_delegated((*f)->handle))
        return block();
    if (delegated((*f)->handle, need == vfs::OpenFor::Write)) return x::NFS3ERR_JUKEBOX;
    file = std::move(*f);
    return x::NFS3_OK;
}

void put_write_verifier(x::writeverf3& v) {
    v = to_cookieverf(vfs::write_verifier());
}

x::cookieverf3 to_cookieverf(uint64_t v) {
    x::cookieverf3 out;
    for (int i = 7; i >= 0; --i, v >>= 8) out[i] = uint8_t(v);
    return out;
}

uint64_t from_cookieverf(const x::cookieverf3& v) {
    uint64_t out = 0;
    for (uint8_t b : v) out = out << 8 | b;
    return out;
}

vfs::SetAttrs to_set_attrs(const x::sattr3& s) {
    vfs::SetAttrs a;
    if (s.mode.set_it()) a.mode = s.mode.mode() & 07777;
    if (s.uid.set_it()) a.uid = s.uid.uid();
    if (s.gid.set_it()) a.gid = s.gid.gid();
    if (s.size.set_it()) a.size = s.size.size();
    auto client = [](const x::nfstime3& t) {
        return vfs::TimeChange::client(
            {static_cast<time_t>(t.seconds), static_cast<long>(t.nseconds)});
    };
    auto time = [](x::time_how how) {
        return how == x::SET_TO_SERVER_TIME ? vfs::TimeChange::server() : vfs::TimeChange{};
    };
    a.atime = s.atime.set_it() == x::SET_TO_CLIENT_TIME ? client(s.atime.atime())
                                                        : time(s.atime.set_it());
    a.mtime = s.mtime.set_it() == x::SET_TO_CLIENT_TIME ? client(s.mtime.mtime())
                                                        : time(s.mtime.set_it());
    return a;
}

}  // namespace nfsrdmad::nfs::v3
