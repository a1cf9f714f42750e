// blocked.h — the LOCK requests NLM answered NLM4_BLOCKED: each is a waiter in the lock
// table (lock_table.h, its cookie = the record's id) and a record here, with what it takes
// to grant the lock later and tell the client (XNFS NLM4_GRANTED: the request's cookie and
// nlm4_lock, sent to the address the LOCK came from).
//
// One record per (file, owner, lock): the client's re-sends of a blocked LOCK (its lockd
// polls) find the same id, so the waiter keeps its place. A record goes when its waiter is woken
// (take), cancelled (CANCEL), granted on a re-send, or its host is freed (FREE_ALL).
// Bounded (max_records): past it a blocking LOCK is not queued (NLM4_DENIED_NOLOCKS), the
// lock table bounds waiters per host as well. Thread-safe.
#pragma once

#include <sys/socket.h>

#include <cstdint>
#include <map>
#include <mutex>
#include <optional>
#include <string>
#include <vector>

#include "nfs/vfs/state/lock_table.h"

namespace nfsrdmad::nfs::nlm {

namespace vs = vfs::state;

struct Blocked {
    uint64_t id = 0;  // set by put()
    sockaddr_storage peer{};
    socklen_t peer_len = 0;
    vs::FileKey file;
    vs::StateOwner owner;
    vs::Lock lock;
    // For NLM4_GRANTED (nlm4_testargs): the LOCK's cookie and nlm4_lock, as sent.
    std::string cookie, caller_name, oh;
    std::vector<uint8_t> fh;
    int32_t svid = 0;
    uint64_t offset = 0, length = 0;
    bool exclusive = false;
};

class BlockedTable {
  public:
    explicit BlockedTable(size_t max_records) : max_(max_records) {}

    // The id of this owner's record for this lock: the existing one (updated with `b`'s
    // cookie and address), or a new one. nullopt: full.
    std::optional<uint64_t> put(Blocked b);
    // Puts a taken record back under its own id (its waiter queued again).
    void put_back(Blocked b);
    // Removes and returns the record of a woken waiter.
    std::optional<Blocked> take(uint64_t id);
    void drop(const vs::FileKey& file, const vs::StateOwner& owner,
              const vs::Lock& lock);                // CANCEL, a granted LOCK
    void drop_client(const vs::ClientKey& client);  // FREE_ALL
    size_t size() const;

    // What identifies a request: file, owner and lock.
    static std::string key(const vs::FileKey& file, const vs::StateOwner& owner,
                           const vs::Lock& lock);

  private:
    const size_t max_;
    mutable std::mutex mu_;
    std::map<uint64_t, Blocked> by_id_;
    std::map<std::string, uint64_t> by_key_;
    uint64_t next_ = 1;
};

}  // namespace nfsrdmad::nfs::nlm
