// state_keys.h — who and what the state tables are keyed by, protocol-neutral.
//
// NFSv4.1 (RFC 8881) and NLM v4 (XNFS) share one lock table and one share table, so a
// lock taken over NLM conflicts with one taken over NFSv4.1 on the same bytes. Both
// protocols name a file by its handle, a client by some id and an owner by opaque bytes:
//   FileKey     fsid + kernel file handle (handle.h): stable across restarts and the
//               same object whichever protocol's handle it came from.
//   ClientKey   protocol + 64-bit id. NFSv4.1: the clientid4 (RFC 8881 §2.4). NLM: an
//               id the NLM layer assigns per caller (the monitored host, so that
//               SM_NOTIFY / FREE_ALL can release everything of it).
//   StateOwner  client + opaque owner bytes, at most kMaxOwnerBytes. NFSv4.1:
//               lock_owner4 / open_owner4 = clientid + owner<NFS4_OPAQUE_LIMIT>
//               (RFC 8881 §3.3.10, §18.10); NLM: svid (4 bytes) + oh (netobj, <= 1024
//               bytes, XNFS nlm4_lock).
#pragma once

#include <cstddef>
#include <cstdint>
#include <span>
#include <string>

#include "nfs/vfs/handle.h"
#include "nfs/vfs/result.h"

namespace nfsrdmad::vfs::state {

enum class Protocol : uint8_t { Nfs4 = 4, Nlm = 1 };

// NFS4_OPAQUE_LIMIT (1024) for NFSv4; NLM's svid + MAXNETOBJ_SZ (4 + 1024).
inline constexpr size_t kMaxOwnerBytes = 4 + 1024;

struct FileKey {
    uint32_t fsid = 0;
    KernelHandle kernel;

    static FileKey of(const DecodedHandle& h) { return FileKey{h.fsid, h.kernel}; }
    bool operator==(const FileKey& o) const { return fsid == o.fsid && kernel == o.kernel; }
};

struct ClientKey {
    Protocol protocol = Protocol::Nfs4;
    uint64_t id = 0;

    bool operator==(const ClientKey&) const = default;
};

class StateOwner {
  public:
    StateOwner() = default;
    // EINVAL if bytes is longer than kMaxOwnerBytes.
    static Result<StateOwner> make(ClientKey client, std::span<const uint8_t> bytes);
    // NLM owner: svid (big-endian) followed by the oh netobj.
    static Result<StateOwner> nlm(uint64_t client_id, uint32_t svid, std::span<const uint8_t> oh);

    const ClientKey& client() const { return client_; }
    const std::string& bytes() const { return bytes_; }
    bool operator==(const StateOwner&) const = default;

  private:
    ClientKey client_;
    std::string bytes_;
};

// Keyed hashes (SipHash-2-4 under a per-process random key): owner bytes are chosen by
// clients, so an unkeyed hash would let one client flood a bucket.
struct FileKeyHash {
    size_t operator()(const FileKey& k) const;
};
struct ClientKeyHash {
    size_t operator()(const ClientKey& k) const;
};
struct StateOwnerHash {
    size_t operator()(const StateOwner& o) const;
};

}  // namespace nfsrdmad::vfs::state
