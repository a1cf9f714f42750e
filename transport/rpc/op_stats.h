// Per-operation counters of one protocol version: calls, a latency histogram, errors by
// the protocol's own status, and payload bytes read and written. The dispatcher keeps one
// table per (program, version) it serves, keyed by procedure; a program whose procedure
// carries operations of its own (NFSv4.1 COMPOUND) keeps another, keyed by operation.
// The metrics endpoint and the stats command read them (daemon/metrics.h).
//
// Cost on the call path: a few relaxed atomic increments, on the calling thread's stripe
// of each counter (stripes.h), so threads on other cores do not write the same lines; an
// error status also takes a mutex (the set of statuses seen is small and bounded by the
// protocol's enum). Memory is fixed when the table is made: it does not grow with clients
// or calls.
#pragma once

#include <array>
#include <atomic>
#include <cstdint>
#include <map>
#include <memory>
#include <mutex>
#include <string>
#include <vector>

#include "transport/rpc/stripes.h"

namespace nfsrdmad::rpc {

class OpStats {
  public:
    // Upper bounds of the latency buckets, in seconds (Prometheus histogram `le`); a
    // last, implicit bucket holds the rest.
    static constexpr std::array<double, 16> kBuckets{25e-6,  50e-6,  100e-6, 250e-6, 500e-6, 1e-3,
                                                     2.5e-3, 5e-3,   10e-3,  25e-3,  50e-3,  100e-3,
                                                     250e-3, 500e-3, 1.0,    5.0};

    // The name of a status value, nullptr when it has none (shown as its number).
    using StatusName = const char* (*)(uint32_t status);

    // `names[op]` names operation `op`; an empty name is no operation (not counted).
    // `payload`: file bytes are counted in this table (a procedure table: its calls
    // carry a CallReport), not in one of operations inside them.
    OpStats(std::string protocol, std::string version, std::vector<std::string> names,
            StatusName status_name = nullptr, bool payload = true);
    bool counts_payload() const { return payload_; }

    const std::string& protocol() const { return protocol_; }
    const std::string& version() const { return version_; }

    // One finished operation: its status (0 is success) and how long it ran. An operation
    // the table does not name is counted as "other" (a hostile op number is not a label).
    void record(uint32_t op, uint32_t status, uint64_t nanoseconds);
    // One that ended without a reply of its protocol (RFC 5531 §9 accept_stat or
    // auth_stat, or no reply at all): an error labelled with that outcome.
    enum class Failure : uint32_t { GarbageArgs, SystemErr, AuthError, Dropped };
    void record_failure(uint32_t op, Failure f, uint64_t nanoseconds);
    void add_bytes(uint64_t read, uint64_t written) {
        Bytes& b = bytes_[thread_stripe()];
        if (read) b.read.fetch_add(read, std::memory_order_relaxed);
        if (written) b.written.fetch_add(written, std::memory_order_relaxed);
    }

    struct OpSnapshot {
        std::string name;
        uint64_t calls = 0;
        double seconds = 0;                                   // sum of latencies
        std::array<uint64_t, kBuckets.size() + 1> buckets{};  // not cumulative
    };
    struct ErrorSnapshot {
        std::string op, status;
        uint64_t count = 0;
    };
    struct Snapshot {
        std::vector<OpSnapshot> ops;  // those called at least once
        std::vector<ErrorSnapshot> errors;
        uint64_t bytes_read = 0, bytes_written = 0;
    };
    Snapshot snapshot() const;

  private:
    // One stripe of an operation's counters: 19 words, three cache lines.
    struct alignas(64) Counts {
        std::atomic<uint64_t> calls{0}, nanoseconds{0};
        std::array<std::atomic<uint64_t>, kBuckets.size() + 1> buckets{};
    };
    struct Slot {
        std::string name;
        std::array<Counts, kStripes> stripes;
    };
    struct alignas(64) Bytes {
        std::atomic<uint64_t> read{0}, written{0};
    };
    size_t slot_of(uint32_t op) const;
    void count(size_t slot, uint64_t nanoseconds);
    std::string status_text(uint64_t key) const;

    std::string protocol_, version_;
    StatusName status_name_;
    bool payload_;
    std::vector<std::unique_ptr<Slot>> slots_;  // by op (null: none); the last is "other"
    std::array<Bytes, kStripes> bytes_;
    mutable std::mutex errors_mu_;
    // (slot, status) -> count; a Failure is kFailure + its value.
    static constexpr uint64_t kFailure = uint64_t(1) << 32, kUnknown = kFailure - 1;
    std::map<std::pair<size_t, uint64_t>, uint64_t> errors_;
};

// Calls per export, whatever the protocol: calls, errors (a non-zero status, or no reply
// of the protocol), a latency histogram and file bytes, labelled by the export's path.
// An export gets its slot by path when the daemon builds an export table (slot_for), and
// the same slot again after a reload, so its counters go on; at most kSlots paths ever
// (past them, new paths share the slot named "other"). A slot's counters are striped
// (stripes.h) and made when its path first gets it, so memory follows the exports the
// configuration names (about 3 KiB each), bounded by kSlots.
// A call counts under the export it was admitted to (a COMPOUND that crosses exports:
// the last one); calls that name no export (NULL, EXCHANGE_ID, MOUNT) count in none.
class ExportStats {
  public:
    static constexpr uint32_t kSlots = 1024;

    ExportStats();
    // 1..kSlots: the slot of `path` (kSlots is "other"). Takes a mutex: table builds only.
    uint32_t slot_for(const std::string& path);
    // The slot's export is served: it is listed from now on, called or not (a path whose
    // table was rejected is not, until a call counts under it).
    void publish(uint32_t slot);
    // `slot` 0 (no export) is not counted.
    void record(uint32_t slot, bool failed, uint64_t nanoseconds, uint64_t bytes_read,
                uint64_t bytes_written);

    struct ExportSnapshot {
        std::string path;
        uint64_t calls = 0, errors = 0, bytes_read = 0, bytes_written = 0;
        double seconds = 0;
        std::array<uint64_t, OpStats::kBuckets.size() + 1> buckets{};  // not cumulative
    };
    std::vector<ExportSnapshot> snapshot() const;  // published or called slots

  private:
    struct alignas(64) Counts {
        std::atomic<uint64_t> calls{0}, errors{0}, nanoseconds{0}, bytes_read{0}, bytes_written{0};
        std::array<std::atomic<uint64_t>, OpStats::kBuckets.size() + 1> buckets{};
    };
    struct Slot {
        std::atomic<bool> published{false};
        std::array<Counts, kStripes> stripes;
    };
    // Under mu_: slot `i`, made on first use.
    Slot& make_slot(uint32_t i);

    // [0] unused; [kSlots] is "other". Set once under mu_ (slot_for) before any call can
    // name the slot: a call learns it from an export table published after that.
    std::unique_ptr<std::atomic<Slot*>[]> slots_;
    std::vector<std::unique_ptr<Slot>> made_;  // owns what slots_ points to
    mutable std::mutex mu_;
    std::map<std::string, uint32_t> by_path_;
    bool other_used_ = false;
};

// What a call reports about itself beyond its reply, for the table of its program.
struct CallReport {
    uint64_t bytes_read = 0, bytes_written = 0;  // file payload moved
    uint32_t export_slot = 0;  // ExportStats slot of the export it was admitted to; 0: none
};

// The latency bucket (index into OpStats::kBuckets, or its size for the rest) of a call.
size_t latency_bucket(uint64_t nanoseconds);

}  // namespace nfsrdmad::rpc
