// open_state.h — what an open stateid stands for (RFC 8881 §9: share reservations,
// §8.2 stateids): the client, the open owner, the file, the share access and deny
// bits, and the open file itself.
//
// Owner and lifetime: the table belongs to Services; an open lives from OPEN until
// CLOSE (or forget_client when the client's lease expired and it was reaped). Its
// stateid is the client table's (ClientTable::new_stateid / bump / release), whose
// bounds (per client and server-wide) bound this table too.
//
// The open file is a shared reference to a descriptor from the FdCache: it stays open
// while the stateid lives even when the cache evicts it, so a file unlinked after OPEN
// is still read and written through its stateid (§9.x: the last close removes it).
// Permission to open is checked at OPEN with the caller's identity.
#pragma once

#include <array>
#include <cstdint>
#include <map>
#include <memory>
#include <mutex>
#include <optional>
#include <span>
#include <string>
#include <unordered_map>
#include <vector>

#include "nfs/common/authorize.h"
#include "nfs/v4/state/stateid.h"
#include "nfs/v4/state/types.h"
#include "nfs/vfs/fd_cache.h"
#include "nfs/vfs/handle.h"

namespace nfsrdmad::nfs::v4 {

namespace x4 = xdr::nfs4;

// The OPEN4_SHARE_ACCESS_WANT_* bits of share_access (§18.16.3): what a client wants of a
// delegation, beside the access itself. OPEN reads them; OPEN_DOWNGRADE ignores them.
inline constexpr uint32_t kShareAccessWants =
    x4::OPEN4_SHARE_ACCESS_WANT_DELEG_MASK |
    x4::OPEN4_SHARE_ACCESS_WANT_SIGNAL_DELEG_WHEN_RESRC_AVAIL |
    x4::OPEN4_SHARE_ACCESS_WANT_PUSH_DELEG_WHEN_UNCONTENDED;

struct Open {
    state::ClientId client = 0;
    std::vector<uint8_t> owner;  // open_owner4.owner
    vfs::FileHandle file;
    uint32_t access = 0;  // OPEN4_SHARE_ACCESS_READ | _WRITE
    uint32_t deny = 0;    // OPEN4_SHARE_DENY_*
    // Each share_access (1..3) and share_deny (0..3) value an OPEN of this stateid asked
    // for, as bit 1 << value: OPEN_DOWNGRADE goes to one of them only (§18.18.3, as the
    // Linux server's st_access_bmap / st_deny_bmap).
    uint8_t access_modes = 0, deny_modes = 0;
    std::shared_ptr<const vfs::OpenFile> fd;
    Caller who;  // whose OPEN it was: I/O through the stateid runs as them
    state::Stateid stateid;
};

class OpenTable {
  public:
    using Other = std::array<uint8_t, 12>;

    // §9.7 share reservations: NFS4ERR_SHARE_DENIED when another owner's open of `file`
    // denies what is asked or asks what is denied. `self`: the owner's own open, which
    // does not conflict with itself.
    x4::nfsstat4 check_share(const vfs::FileHandle& file, uint32_t access, uint32_t deny,
                             const std::optional<Other>& self) const;
    // The clients whose opens check_share() finds in conflict, ascending, each once.
    std::vector<state::ClientId> conflicting_clients(const vfs::FileHandle& file, uint32_t access,
                                                     uint32_t deny,
                                                     const std::optional<Other>& self) const;
    // The share access (OPEN4_SHARE_ACCESS_*) and deny bits of the opens of `file` but
    // `self`, ORed, and how many they are (OPEN's offer of a delegation, §10.4.1).
    struct Shares {
        uint32_t access = 0, deny = 0;
        size_t count = 0;
    };
    Shares share_except(const vfs::FileHandle& file, const Other& self) const;
    // The open of (client, owner, file), if there is one (OPEN upgrades it, §18.16.3).
    std::optional<Open> find_owner(state::ClientId client, std::span<const uint8_t> owner,
                                   const vfs::FileHandle& file) const;
    std::optional<Open> find(const Other& other) const;
    void put(const Open& o);  // insert or replace, by o.stateid.other
    void erase(const Other& other);
    size_t forget_client(state::ClientId client);  // every open of a reaped client
    size_t size() const;

    // Held by OPEN from its share check to put(), so that two OPENs of one file cannot
    // both pass the check and then both be recorded (§9.7). One of a fixed set, by file.
    std::mutex& admission(const vfs::FileHandle& file);

  private:
    using FileKey = std::string;  // the handle's bytes
    static FileKey key_of(const vfs::FileHandle& f);
    // Calls fn(other, open) for each open of `file` (mu_ held).
    template <class Fn>
    void each_of_file(const vfs::FileHandle& file, Fn&& fn) const;
    void unindex(const Open& o);

    mutable std::mutex mu_;
    std::array<std::mutex, 64> admission_;
    std::map<Other, Open> opens_;
    // The opens of each file: OPEN's share checks look at one file's opens, never at all
    // of them (hundreds of clients, thousands of opens each).
    std::unordered_map<FileKey, std::vector<Other>> by_file_;
};

}  // namespace nfsrdmad::nfs::v4
