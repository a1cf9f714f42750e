// SECINFO (RFC 8881 §18.29) and SECINFO_NO_NAME (§18.45): the security flavors the
// export's rule for this client accepts, in its order. Both consume the current
// filehandle (§2.6.3.1.1.8): after them there is none.
//
// Kerberos flavors go as RPCSEC_GSS with the krb5 mechanism's OID and the service
// (rpcsec_gss_info); AUTH_SYS and AUTH_NONE as themselves. Pseudo directories take
// AUTH_SYS.
#include "nfs/common/authorize.h"
#include "nfs/v4/lookup.h"
#include "nfs/v4/names.h"
#include "nfs/v4/ops.h"
#include "nfs/v4/request.h"

namespace nfsrdmad::nfs::v4 {

namespace {

// 1.2.840.113554.1.2.2, the Kerberos V5 mechanism (RFC 4121 §1), its DER contents
// without tag and length, as the Linux client compares them.
constexpr uint8_t kKrb5Oid[] = {0x2a, 0x86, 0x48, 0x86, 0xf7, 0x12, 0x01, 0x02, 0x02};

void add_flavor(x4::SECINFO4resok& out, uint32_t f) {
    x4::rpc_gss_svc_t svc;
    switch (f) {
        case vfs::kAuthSys:
        case vfs::kAuthNone:
            out.emplace_back(f);
            return;
        case vfs::kAuthKrb5:
            svc = x4::RPC_GSS_SVC_NONE;
            break;
        case vfs::kAuthKrb5i:
            svc = x4::RPC_GSS_SVC_INTEGRITY;
            break;
        case vfs::kAuthKrb5p:
            svc = x4::RPC_GSS_SVC_PRIVACY;
            break;
        default:
            return;
    }
    x4::secinfo4& s = out.emplace_back(x4::RPCSEC_GSS);
    s.flavor_info().oid = kKrb5Oid;
    s.flavor_info().qop = 0;
    s.flavor_info().service = svc;
}

x4::nfsstat4 flavors_of(Request& rq, const Target& t, x4::SECINFO4resok& out) {
    out.clear();
    if (t.pseudo) {
        out.emplace_back(vfs::kAuthSys);
        return x4::NFS4_OK;
    }
    const rpc::Peer* peer = rq.ctx.header.peer;
    const vfs::ClientRule* rule = peer ? client_rule(*t.node.exp, *peer) : nullptr;
    if (!rule) return x4::NFS4ERR_ACCESS;
    if (rule->flavors.empty()) out.emplace_back(vfs::kAuthSys);
    for (uint32_t f : rule->flavors) add_flavor(out, f);
    return out.empty() ? x4::NFS4ERR_ACCESS : x4::NFS4_OK;
}

OpResult reply(Compound& c, xdr::Encoder& res, x4::nfsstat4 st, const x4::SECINFO4resok& l) {
    x4::SECINFO4res r(st);
    if (st == x4::NFS4_OK) {
        r.resok4() = l;
        c.current_fh.reset();
        c.current_stateid.reset();
    }
    x4::xdr_encode(res, r);
    return {st};
}

}  // namespace

OpResult op_secinfo_no_name(Compound& c, xdr::Decoder& args, xdr::Encoder& res) {
    Request& rq = *c.rq;
    x4::SECINFO_NO_NAME4args style;
    if (!rq.decode(args, style)) return OpResult::bad_xdr();
    x4::SECINFO4resok l;
    Target* t;
    x4::nfsstat4 st = rq.current(t);
    Target parent;
    if (st == x4::NFS4_OK && style == x4::SECINFO_STYLE4_PARENT) {
        // The parent's flavors: LOOKUPP's answer (NOENT at the pseudo root, the pseudo
        // directory above an export's root).
        st = parent_of(rq, *t, parent);
        t = &parent;
    }
    if (st == x4::NFS4_OK) st = flavors_of(rq, *t, l);
    return reply(c, res, st, l);
}

OpResult op_secinfo(Compound& c, xdr::Decoder& args, xdr::Encoder& res) {
    Request& rq = *c.rq;
    x4::SECINFO4args a;
    if (!rq.decode(args, a)) return OpResult::bad_xdr();
    x4::SECINFO4resok l;
    Target* dir;
    x4::nfsstat4 st = rq.current(dir);
    std::string_view name;
    if (st == x4::NFS4_OK) st = check_name(a.name, name);
    Target found;
    if (st == x4::NFS4_OK) st = lookup_name(rq, *dir, name, found);
    if (st == x4::NFS4_OK) st = flavors_of(rq, found, l);
    return reply(c, res, st, l);
}

}  // namespace nfsrdmad::nfs::v4
