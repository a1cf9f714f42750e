// hosts.h — the NLM hosts this server knows. A host is a caller_name (XNFS nlm4_lock,
// the client's own name for itself) at the address it calls from, as the Linux server's
// lockd tells hosts apart (nlmsvc_lookup_host matches the address): two machines that
// give themselves one name (cloned VMs, containers named "localhost") are two hosts.
// Their lock owners (svid, oh "1@localhost") can be identical byte for byte; keyed by
// the name alone, each one's lock would be the other's, and neither would be kept out.
// Each host gets a 64-bit id, the ClientKey{Nlm, id} its locks and shares are held under
// in the tables shared with NFSv4.1 (nfs/vfs/state), so that FREE_ALL (and, with NSM,
// SM_NOTIFY from a rebooted client) can release all of it.
//
// Bounded: at most `max_hosts` hosts. When full, hosts that hold nothing any more (no
// lock, waiter or share: `idle` says) are forgotten to make room; if none is idle a new
// host is refused (NLM4_DENIED_NOLOCKS). Ids are never reused within a run.
//
// A call pins the host it acts for (id() until unpin()): a pinned host is never
// forgotten, so the lock that call is about to take cannot land under an id nobody
// knows any more. The host sweep (take_idle) forgets hosts that are idle, unpinned and
// unused for a while, as knfsd's lockd collects its hosts (NLM_HOST_EXPIRE).
//
// NSM watches addresses (the mon_name this server gives statd is the address, as lockd's
// default, nsm_use_hostnames=0): `monitored` is kept per host, and an address is watched
// while any host at it is.
//
// As with the Linux server, a client that calls from a new address (renumbered, NAT, a
// second interface) is a new host there: its UNLOCK from the new address does not find
// the locks it took from the old one, which stay until its reboot notice, FREE_ALL or
// the lease of nothing: the sweep forgets only hosts that hold nothing.
// Thread-safe.
#pragma once

#include <chrono>
#include <cstddef>
#include <cstdint>
#include <functional>
#include <mutex>
#include <optional>
#include <string>
#include <string_view>
#include <unordered_map>
#include <vector>

namespace nfsrdmad::nfs::nlm {

class HostTable {
  public:
    using Clock = std::chrono::steady_clock;
    using Idle = std::function<bool(uint64_t)>;

    explicit HostTable(size_t max_hosts) : max_(max_hosts) {}

    // The id of host `name` at `address` (the caller's, "10.0.0.7"), made if new, and
    // pinned (unpin() once the call is done). nullopt: the table is full of hosts
    // holding state (or pinned).
    std::optional<uint64_t> id(std::string_view name, std::string_view address, const Idle& idle,
                               Clock::time_point now = Clock::now());
    void unpin(uint64_t id, Clock::time_point now = Clock::now());
    // The id of a known host, without making one (or pinning it).
    std::optional<uint64_t> find(std::string_view name, std::string_view address) const;
    // FREE_ALL (after which its state is released): the host's id. The host is forgotten
    // unless a call has it pinned; then it keeps its id (what that call takes stays
    // releasable) but counts as not monitored again.
    std::optional<uint64_t> forget(std::string_view name, std::string_view address);
    struct Named {
        std::string name, address;
    };
    // The known hosts at `address` (a reboot notice), or of that name (FREE_ALL from this
    // host's own statd or an administrator).
    std::vector<Named> at(std::string_view address) const;
    std::vector<Named> named(std::string_view name) const;
    // What statd is asked to watch for a host (SM_MON's mon_name): its address, as lockd's
    // default (nsm_use_hostnames=0); its name when the address is not known.
    static std::string_view watch_of(std::string_view name, std::string_view address) {
        return address.empty() ? name : address;
    }
    // Marks the host monitored; true when statd watched its watch_of() for no host before:
    // ask statd to watch it.
    bool mark_monitored(std::string_view name, std::string_view address);
    // Whether any known host whose watch_of() is `mon_name` is monitored (statd should
    // watch it).
    bool watched(std::string_view mon_name) const;
    // The host's NSM state as its last monitored LOCK gave it (nlm4_lockargs.state), and
    // what it was: a reboot notice with this very state is about locks taken since.
    void set_state(std::string_view name, std::string_view address, int32_t state);
    std::optional<int32_t> state(std::string_view name, std::string_view address) const;

    // The hosts the sweep forgot: what it takes to stop monitoring them.
    struct Gone {
        std::string name, address;
        uint64_t id = 0;
        bool monitored = false;
    };
    // Forgets the hosts that are idle, unpinned and unused since before `unused_since`.
    std::vector<Gone> take_idle(const Idle& idle, Clock::time_point unused_since);
    // Whether a known host is at `address`.
    bool address_in_use(std::string_view address) const;
    size_t size() const;

  private:
    struct Host {
        uint64_t id = 0;
        bool monitored = false;
        std::string name, address;
        uint32_t pins = 0;
        Clock::time_point used;
        std::optional<int32_t> nsm_state;
    };
    // The address, a NUL, the name: an address has no NUL, so no two hosts share a key.
    static std::string key(std::string_view name, std::string_view address);
    using Map = std::unordered_map<std::string, Host>;
    void erase(Map::iterator it);
    std::vector<Named> matching(const std::function<bool(const Host&)>& pred) const;

    const size_t max_;
    mutable std::mutex mu_;
    Map hosts_;
    std::unordered_map<uint64_t, std::string> keys_;  // id -> key, for unpin()
    uint64_t next_ = 1;
};

}  // namespace nfsrdmad::nfs::nlm
