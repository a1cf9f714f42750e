#include "nfs/vfs/state/state_keys.h"

#include <cerrno>
#include <cstring>

#include "nfs/vfs/secret.h"
#include "nfs/vfs/siphash.h"

namespace nfsrdmad::vfs::state {
namespace {

const SipKey& hash_key() {
    static const SipKey key = [] {
        SipKey k{};
        // Without getrandom the hash is still correct, only predictable.
        if (!random_bytes(k.data(), k.size())) k.fill(0x5a);
        return k;
    }();
    return key;
}

uint64_t hash_bytes(std::span<const uint8_t> data) {
    return siphash24(hash_key(), data);
}

// fixed-width little-endian prefix: protocol (1 byte) + id (8 bytes)
size_t put_client(uint8_t* out, const ClientKey& c) {
    out[0] = static_cast<uint8_t>(c.protocol);
    std::memcpy(out + 1, &c.id, sizeof c.id);
    return 1 + sizeof c.id;
}

}  // namespace

Result<StateOwner> StateOwner::make(ClientKey client, std::span<const uint8_t> bytes) {
    if (bytes.size() > kMaxOwnerBytes) return fail(EINVAL);
    StateOwner o;
    o.client_ = client;
    o.bytes_.assign(reinterpret_cast<const char*>(bytes.data()), bytes.size());
    return o;
}

Result<StateOwner> StateOwner::nlm(uint64_t client_id, uint32_t svid, std::span<const uint8_t> oh) {
    if (oh.size() > kMaxOwnerBytes - 4) return fail(EINVAL);
    uint8_t buf[kMaxOwnerBytes];
    buf[0] = static_cast<uint8_t>(svid >> 24);
    buf[1] = static_cast<uint8_t>(svid >> 16);
    buf[2] = static_cast<uint8_t>(svid >> 8);
    buf[3] = static_cast<uint8_t>(svid);
    if (!oh.empty()) std::memcpy(buf + 4, oh.data(), oh.size());
    return make(ClientKey{Protocol::Nlm, client_id}, {buf, 4 + oh.size()});
}

size_t FileKeyHash::operator()(const FileKey& k) const {
    uint8_t buf[4 + 1 + kMaxKernelHandleBytes];
    std::memcpy(buf, &k.fsid, 4);
    buf[4] = k.kernel.type;
    std::memcpy(buf + 5, k.kernel.bytes.data(), k.kernel.size);
    return static_cast<size_t>(hash_bytes({buf, 5u + k.kernel.size}));
}

size_t ClientKeyHash::operator()(const ClientKey& k) const {
    uint8_t buf[16];
    return static_cast<size_t>(hash_bytes({buf, put_client(buf, k)}));
}

size_t StateOwnerHash::operator()(const StateOwner& o) const {
    uint8_t buf[16 + kMaxOwnerBytes];
    size_t n = put_client(buf, o.client());
    std::memcpy(buf + n, o.bytes().data(), o.bytes().size());
    return static_cast<size_t>(hash_bytes({buf, n + o.bytes().size()}));
}

}  // namespace nfsrdmad::vfs::state
