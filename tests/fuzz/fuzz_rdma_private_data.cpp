// libFuzzer target: RDMA-CM private data for RPC-over-RDMA version 1 (RFC 8797 §4, §5.1).
#include <cstdint>
#include <cstdlib>

#include "transport/rdma/protocol/private_data.h"

using namespace nfsrdmad::rdma;

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
    auto pd = parse_private_data({data, size});
    if (!pd) return 0;
    // Sizes are (value + 1) KiB: 1 KiB .. 256 KiB.
    if (pd->send_size < 1024 || pd->send_size > 256 * 1024) abort();
    if (pd->receive_size < 1024 || pd->receive_size > 256 * 1024) abort();
    // What we parse, we encode back unchanged.
    auto again = parse_private_data(encode_private_data(*pd));
    if (!again || again->send_size != pd->send_size || again->receive_size != pd->receive_size ||
        again->remote_invalidate != pd->remote_invalidate)
        abort();
    return 0;
}
