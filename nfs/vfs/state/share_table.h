// share_table.h — share reservations (OPEN share_access/share_deny, NLM SHARE).
//
// RFC 8881 §9.7 and §18.16.3 (OPEN), §18.18.3 (OPEN_DOWNGRADE), §18.2 (CLOSE); XNFS
// NLM4_SHARE / NLM4_UNSHARE (fsh4_access, fsh4_mode), which use the same model. Per file
// and per open owner the table holds access bits (READ, WRITE) and deny bits (READ,
// WRITE). An open conflicts with another owner's share when its access meets their
// deny, or its deny meets their access. A re-open by the same owner ORs the bits (an
// upgrade, checked against the others); a downgrade must be a subset of what is held;
// close removes the owner's share. Owners of both protocols share one table.
//
// Share reservations are not mirrored onto the file system: Linux has no deny modes
// for local opens (like the kernel nfsd, they bind NFS clients only).
//
// Bound: shares (file, owner pairs) per client; past it open() fails with ENOLCK
// (NFSv4: NFS4ERR_RESOURCE / NFS4ERR_DELAY; NLM: nlm4_denied_nolocks).
// Thread-safe, sharded by file like the lock table.
#pragma once

#include <cstddef>
#include <cstdint>
#include <mutex>
#include <optional>
#include <unordered_map>
#include <vector>

#include "nfs/vfs/result.h"
#include "nfs/vfs/state/file_shards.h"
#include "nfs/vfs/state/state_keys.h"

namespace nfsrdmad::vfs::state {

// OPEN4_SHARE_ACCESS_READ/WRITE/BOTH and OPEN4_SHARE_DENY_NONE/READ/WRITE/BOTH
// (RFC 8881 §18.16.1) have exactly these values, as do NLM's fsa_R/fsa_W and fsm_DR/fsm_DW.
inline constexpr uint8_t kShareNone = 0;
inline constexpr uint8_t kShareRead = 1;
inline constexpr uint8_t kShareWrite = 2;
inline constexpr uint8_t kShareBoth = 3;

struct ShareBits {
    uint8_t access = kShareNone;
    uint8_t deny = kShareNone;
    bool operator==(const ShareBits&) const = default;
};

struct ShareConflict {
    enum Kind : uint8_t {
        AccessDenied,   // our access meets their deny
        DenyConflicts,  // our deny meets their access
    };
    Kind kind;
    StateOwner owner;  // the other open owner
    ShareBits held;    // what it holds
};

struct ShareReply {
    std::optional<ShareConflict> denied;  // set: nothing changed (NFS4ERR_SHARE_DENIED)
    ShareBits held;                       // the owner's bits now
};

class ShareTable {
  public:
    explicit ShareTable(size_t shares_per_client = 4096) : shares_per_client_(shares_per_client) {}
    ShareTable(const ShareTable&) = delete;
    ShareTable& operator=(const ShareTable&) = delete;

    // OPEN / NLM4_SHARE. EINVAL for bits above kShareBoth (a zero access is the
    // protocol's to refuse: NFSv4 must, NLM's fsa_NONE is legal); ENOLCK (bound).
    Result<ShareReply> open(const FileKey& file, const StateOwner& owner, ShareBits want);
    // What open() would report against the other owners; changes nothing.
    std::optional<ShareConflict> check(const FileKey& file, const StateOwner& owner,
                                       ShareBits want) const;
    // OPEN_DOWNGRADE: the new bits must be a subset of the held ones, with access not
    // zero (RFC 8881 §18.18.3: NFS4ERR_INVAL); ENOENT if the owner holds no share here.
    Result<void> downgrade(const FileKey& file, const StateOwner& owner, ShareBits to);
    // CLOSE / NLM4_UNSHARE. False if nothing was held.
    bool close(const FileKey& file, const StateOwner& owner);

    size_t release_client(const ClientKey& client);  // returns shares dropped
    size_t release_file(const FileKey& file);

    std::optional<ShareBits> held(const FileKey& file, const StateOwner& owner) const;
    size_t share_count(const ClientKey& client) const;
    size_t file_count() const { return shards_.file_count(); }

  private:
    struct Entry {
        StateOwner owner;
        ShareBits bits;
    };
    struct FileState {
        std::vector<Entry> owners;
        bool empty() const { return owners.empty(); }
    };
    static std::optional<ShareConflict> conflict(const FileState& fs, const StateOwner& owner,
                                                 ShareBits want);
    bool adjust(const ClientKey& client, ptrdiff_t delta);

    const size_t shares_per_client_;
    FileShards<FileState> shards_;
    mutable std::mutex count_mu_;  // after a shard's mutex, never before
    std::unordered_map<ClientKey, size_t, ClientKeyHash> per_client_;
};

}  // namespace nfsrdmad::vfs::state
