#include "nfs/v4/attrs/set_attrs.h"

#include <string_view>
#include <vector>

#include "nfs/v4/attrs/acl.h"
#include "nfs/v4/attrs/fattr.h"

namespace nfsrdmad::nfs::v4 {

namespace {

// Attributes RFC 8881 §5.6/§5.7 marks writable that this server does not set.
const AttrMask kWritableUnsupported{
    x4::FATTR4_ARCHIVE,
    x4::FATTR4_HIDDEN,
    x4::FATTR4_MIMETYPE,
    x4::FATTR4_SYSTEM,
    x4::FATTR4_TIME_BACKUP,
    x4::FATTR4_TIME_CREATE,
    x4::FATTR4_DACL,
    x4::FATTR4_SACL,
    x4::FATTR4_LAYOUT_HINT,
    x4::FATTR4_RETENTION_SET,
    x4::FATTR4_RETENTEVT_SET,
    x4::FATTR4_RETENTION_HOLD,
    x4::FATTR4_MODE_SET_MASKED,
};

// settime4 (§3.3.1 nfstime4: nseconds below one billion).
bool decode_time(xdr::Decoder& d, vfs::TimeChange& out, x4::nfsstat4& st) {
    x4::settime4 t;
    if (!x4::xdr_decode(d, t)) return false;
    if (t.set_it() == x4::SET_TO_SERVER_TIME4) {
        out = vfs::TimeChange::server();
        return true;
    }
    const x4::nfstime4& ct = t.time();
    if (ct.nseconds >= 1000000000u) st = x4::NFS4ERR_INVAL;
    out =
        vfs::TimeChange::client({static_cast<time_t>(ct.seconds), static_cast<long>(ct.nseconds)});
    return true;
}

std::string_view text(std::span<const uint8_t> s) {
    return {reinterpret_cast<const char*>(s.data()), s.size()};
}

}  // namespace

AttrMask settable_attrs() {
    return {x4::FATTR4_ACL,
            x4::FATTR4_SIZE,
            x4::FATTR4_MODE,
            x4::FATTR4_OWNER,
            x4::FATTR4_OWNER_GROUP,
            x4::FATTR4_TIME_ACCESS_SET,
            x4::FATTR4_TIME_MODIFY_SET};
}

x4::nfsstat4 decode_set_attrs(const x4::fattr4& in, const IdMap& ids, vfs::SetAttrs& out,
                              AttrMask& set) {
    bool beyond = false;
    AttrMask m = AttrMask::from_wire(in.attrmask, &beyond);
    set = AttrMask{};
    // §18.30.3, in the Linux server's order (check_attr_support): an attribute this server
    // does not support (one no RFC defines, one it does not offer) is ATTRNOTSUPP, then one
    // it supports but cannot set (read-only) is INVAL.
    if (beyond || !(m & kWritableUnsupported).empty() || !m.without(supported_attrs()).empty())
        return x4::NFS4ERR_ATTRNOTSUPP;
    if (!m.without(settable_attrs()).empty()) return x4::NFS4ERR_INVAL;

    // Every value is read even after one is refused: the first refusal (BADOWNER, INVAL,
    // ATTRNOTSUPP) is the answer, BADXDR only for values that do not decode.
    xdr::Decoder d(in.attr_vals);
    x4::nfsstat4 st = x4::NFS4_OK;
    bool ok = true;
    m.for_each([&](uint32_t a) {
        if (!ok) return;
        x4::nfsstat4 one = x4::NFS4_OK;
        switch (a) {
            case x4::FATTR4_SIZE: {
                uint64_t v = d.get_u64();
                ok = d.ok();
                out.size = v;
                break;
            }
            case x4::FATTR4_ACL: {
                // nfsace4<>: each ACE takes at least 16 bytes, which bounds the count.
                const uint32_t n = d.get_u32();
                ok = d.ok() && n <= d.remaining() / 16;
                std::vector<x4::nfsace4> acl(ok ? n : 0);
                for (auto& ace : acl) ok = ok && x4::xdr_decode(d, ace);
                uint32_t bits = 0;
                if (ok) one = mode_bits_of_acl(acl, bits);
                out.mode = bits;  // the caller keeps the high bits (acl.h)
                break;
            }
            case x4::FATTR4_MODE: {
                uint32_t v = d.get_u32();
                ok = d.ok();
                out.mode = v & 07777;
                break;
            }
            case x4::FATTR4_OWNER:
            case x4::FATTR4_OWNER_GROUP: {
                auto s = d.get_opaque(UINT32_MAX);
                ok = d.ok();
                if (!ok) break;
                auto p = a == x4::FATTR4_OWNER ? ids.uid_of(text(s)) : ids.gid_of(text(s));
                if (p.status != x4::NFS4_OK) {
                    one = p.status;
                    break;
                }
                (a == x4::FATTR4_OWNER ? out.uid : out.gid) = p.id;
                break;
            }
            case x4::FATTR4_TIME_ACCESS_SET:
                ok = decode_time(d, out.atime, one);
                break;
            case x4::FATTR4_TIME_MODIFY_SET:
                ok = decode_time(d, out.mtime, one);
                break;
        }
        if (st == x4::NFS4_OK) st = one;
    });
    if (!ok || d.remaining() != 0) return x4::NFS4ERR_BADXDR;
    if (st != x4::NFS4_OK) return st;
    set = m;
    return x4::NFS4_OK;
}

}  // namespace nfsrdmad::nfs::v4
