// hosts.h — the NLM hosts this server knows: each caller_name (XNFS nlm4_lock, the
// client's own name for itself) gets a 64-bit id, the ClientKey{Nlm, id} its locks and
// shares are held under in the tables shared with NFSv4.1 (nfs/vfs/state), so that
// FREE_ALL (and, with NSM, SM_NOTIFY from a rebooted client) can release all of it.
//
// Bounded: at most `max_hosts` names. When full, names that hold nothing any more (no
// lock, waiter or share: `idle` says) are forgotten to make room; if none is idle a new
// host is refused (NLM4_DENIED_NOLOCKS). Ids are never reused within a run.
// Thread-safe.
#pragma once

#include <cstddef>
#include <cstdint>
#include <functional>
#include <mutex>
#include <optional>
#include <string>
#include <string_view>
#include <unordered_map>

namespace nfsrdmad::nfs::nlm {

class HostTable {
  public:
    explicit HostTable(size_t max_hosts) : max_(max_hosts) {}

    // The id of `name`, made if new; `address` (the caller's, "10.0.0.7") is remembered
    // with it. nullopt: the table is full of hosts holding state.
    std::optional<uint64_t> id(std::string_view name, const std::function<bool(uint64_t)>& idle,
                               std::string_view address = {});
    // The address `name` last called from ("" if unknown).
    std::string address(std::string_view name) const;
    // The id of a known name, without making one.
    std::optional<uint64_t> find(std::string_view name) const;
    // Forgets `name` (FREE_ALL, after its state was released); its id.
    std::optional<uint64_t> forget(std::string_view name);
    // True the first time for a known name (until it is forgotten): ask statd to watch it.
    bool mark_monitored(std::string_view name);
    size_t size() const;

  private:
    const size_t max_;
    mutable std::mutex mu_;
    struct Host {
        uint64_t id = 0;
        bool monitored = false;
        std::string address;
    };
    std::unordered_map<std::string, Host> ids_;
    uint64_t next_ = 1;
};

}  // namespace nfsrdmad::nfs::nlm
