#include "transport/rdma/protocol/private_data.h"

#include <algorithm>

namespace nfsrdmad::rdma {

namespace {

size_t decode_size(uint8_t v) { return (size_t(v) + 1) * 1024; }

uint8_t encode_size(size_t bytes) {
    size_t kib = std::clamp<size_t>(bytes / 1024, 1, 256);
    return static_cast<uint8_t>(kib - 1);
}

}  // namespace

std::optional<PrivateData> parse_private_data(std::span<const uint8_t> b) {
    for (size_t i = 0; i + 8 <= b.size(); ++i) {
        uint32_t magic = uint32_t(b[i]) << 24 | uint32_t(b[i + 1]) << 16 |
                         uint32_t(b[i + 2]) << 8 | b[i + 3];
        if (magic != kPrivateDataMagic) continue;
        if (b[i + 4] != 1) return std::nullopt;  // a version we do not know
        PrivateData pd;
        pd.remote_invalidate = b[i + 5] & 1;
        pd.send_size = decode_size(b[i + 6]);
        pd.receive_size = decode_size(b[i + 7]);
        return pd;
    }
    return std::nullopt;
}

std::vector<uint8_t> encode_private_data(const PrivateData& pd) {
    return {0xf6,
            0xab,
            0x0e,
            0x18,
            1,
            static_cast<uint8_t>(pd.remote_invalidate ? 1 : 0),
            encode_size(pd.send_size),
            encode_size(pd.receive_size)};
}

}  // namespace nfsrdmad::rdma
