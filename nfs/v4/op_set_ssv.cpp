// SET_SSV (RFC 8881 §18.47): only for a client ID made with SP4_SSV state protection,
// which this server never grants (EXCHANGE_ID answers SP4_SSV with
// NFS4ERR_HASH_ALG_UNSUPP, state/exchange_id.cpp). §18.47.3: "It MUST NOT be used if the
// client did not opt for SP4_SSV state protection ...; the server returns NFS4ERR_INVAL
// in that case."
#include "nfs/v4/ops.h"
#include "nfs/v4/request.h"

namespace nfsrdmad::nfs::v4 {

OpResult op_set_ssv(Compound& c, xdr::Decoder& args, xdr::Encoder& res) {
    x4::SET_SSV4args a;
    if (!c.rq->decode(args, a)) return OpResult::bad_xdr();
    encode_status_only(res, x4::NFS4ERR_INVAL);
    return {x4::NFS4ERR_INVAL};
}

}  // namespace nfsrdmad::nfs::v4
