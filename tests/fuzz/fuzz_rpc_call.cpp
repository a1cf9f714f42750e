// libFuzzer target: an ONC RPC call header with its credential and verifier
// (RFC 5531 §9, AUTH_NONE and AUTH_SYS: §8.2 and appendix A), then every reply
// header the server could send for it.
#include <cstdint>
#include <cstdlib>
#include <vector>

#include "transport/rpc/auth/flavor.h"
#include "transport/rpc/message.h"

using namespace nfsrdmad;

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
    std::span<const uint8_t> msg(data, size);
    rpc::DecodedCall c = rpc::decode_call(msg);
    static const rpc::AuthStage stage;
    if (c.status == rpc::DecodedCall::Ok) {
        if (c.args_offset > size) abort();
        if (c.auth.header.size() > c.args_offset) abort();
        rpc::CallAuth auth;
        const rpc::AuthFlavor* flavor = nullptr;
        auto verdict = stage.accept(c.auth, auth, &flavor);
        if (verdict.verdict == rpc::AuthFlavor::Verdict::Accept) {
            if (!flavor) abort();
            // The AUTH_SYS identity the procedures will see: at most 16 groups (appendix A).
            if (auth.cred.sys.gids.size() > 16) abort();
        }
    }
    std::vector<uint8_t> out;
    rpc::encode_accepted(out, c.header.xid, 4 /* GARBAGE_ARGS */);
    rpc::encode_prog_mismatch(out, c.header.xid, 3, 3);
    rpc::encode_rpc_mismatch(out, c.header.xid);
    rpc::encode_auth_error(out, c.header.xid, c.auth_stat);
    return 0;
}
