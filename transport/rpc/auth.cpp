#include "transport/rpc/auth.h"

#include "xdr/rpc_prot.h"

namespace nfsrdmad::rpc {

namespace x = xdr::rpc;

uint32_t parse_credential(uint32_t flavor, std::span<const uint8_t> body, uint32_t verf_flavor,
                          Credential& out) {
    out.flavor = flavor;
    switch (flavor) {
        case x::AUTH_NONE:
            return verf_flavor == x::AUTH_NONE ? x::AUTH_OK : x::AUTH_BADVERF;
        case x::AUTH_SYS: {
            // The body must hold exactly one authsys_parms (at most 16 groups).
            xdr::Decoder d(body);
            x::authsys_parms p;
            if (!x::xdr_decode(d, p) || d.remaining() != 0) return x::AUTH_BADCRED;
            if (verf_flavor != x::AUTH_NONE) return x::AUTH_BADVERF;
            out.sys.stamp = p.stamp;
            out.sys.machinename.assign(p.machinename);
            out.sys.uid = p.uid;
            out.sys.gid = p.gid;
            out.sys.gids.assign(p.gids.begin(), p.gids.end());
            return x::AUTH_OK;
        }
        default:
            // RPCSEC_GSS and the rest are not offered (yet). Like the Linux server,
            // answer an unknown flavor with AUTH_BADCRED.
            return x::AUTH_BADCRED;
    }
}

}  // namespace nfsrdmad::rpc
