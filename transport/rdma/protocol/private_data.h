// RDMA-CM private data for RPC-over-RDMA version 1 (RFC 8797 §4):
//
//    0               1               2               3
//   +---------------+---------------+---------------+---------------+
//   |                Format Identifier 0xf6ab0e18                   |
//   +---------------+-------------+-+---------------+---------------+
//   |   Version 1   |  Reserved   |R|   Send Size   | Receive Size  |
//   +---------------+-------------+-+---------------+---------------+
//
//   R: the sender accepts Send With Invalidate. Sizes: (value + 1) * 1024 bytes.
#pragma once

#include <cstddef>
#include <cstdint>
#include <optional>
#include <span>
#include <vector>

namespace nfsrdmad::rdma {

inline constexpr uint32_t kPrivateDataMagic = 0xf6ab0e18;
inline constexpr size_t kDefaultInline = 1024;  // RFC 8166 §3.3.3, when there is no private data

struct PrivateData {
    size_t send_size = kDefaultInline;     // the largest message its sender will Send
    size_t receive_size = kDefaultInline;  // the largest message its sender can receive
    bool remote_invalidate = false;
};

// Searches `bytes` for the format identifier at any offset (RFC 8797 §5.1). nullopt: no
// valid version-1 private data; use the 1024-byte defaults.
std::optional<PrivateData> parse_private_data(std::span<const uint8_t> bytes);

// Our 8 bytes. Sizes are rounded down to a multiple of 1024, between 1 KiB and 256 KiB.
std::vector<uint8_t> encode_private_data(const PrivateData& pd);

}  // namespace nfsrdmad::rdma
