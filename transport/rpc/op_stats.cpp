#include "transport/rpc/op_stats.h"

#include <algorithm>

namespace nfsrdmad::rpc {

OpStats::OpStats(std::string protocol, std::string version, std::vector<std::string> names,
                 StatusName status_name, bool payload)
    : protocol_(std::move(protocol)),
      version_(std::move(version)),
      status_name_(status_name),
      payload_(payload) {
    slots_.reserve(names.size() + 1);
    for (auto& n : names) {
        slots_.emplace_back();
        if (n.empty()) continue;
        slots_.back() = std::make_unique<Slot>();
        slots_.back()->name = std::move(n);
    }
    slots_.push_back(std::make_unique<Slot>());
    slots_.back()->name = "other";
}

size_t OpStats::slot_of(uint32_t op) const {
    return op < slots_.size() - 1 && slots_[op] ? op : slots_.size() - 1;
}

void OpStats::count(size_t i, uint64_t nanoseconds) {
    Slot& s = *slots_[i];
    s.calls.fetch_add(1, std::memory_order_relaxed);
    s.nanoseconds.fetch_add(nanoseconds, std::memory_order_relaxed);
    const double seconds = static_cast<double>(nanoseconds) * 1e-9;
    size_t b = static_cast<size_t>(std::lower_bound(kBuckets.begin(), kBuckets.end(), seconds) -
                                   kBuckets.begin());
    s.buckets[b].fetch_add(1, std::memory_order_relaxed);
}

void OpStats::record(uint32_t op, uint32_t status, uint64_t nanoseconds) {
    const size_t i = slot_of(op);
    count(i, nanoseconds);
    if (status == 0) return;
    // Bounded: statuses outside the protocol's enum count under one key.
    uint64_t key = status_name_ && !status_name_(status) ? kUnknown : status;
    std::lock_guard lock(errors_mu_);
    errors_[{i, key}]++;
}

void OpStats::record_failure(uint32_t op, Failure f, uint64_t nanoseconds) {
    const size_t i = slot_of(op);
    count(i, nanoseconds);
    std::lock_guard lock(errors_mu_);
    errors_[{i, kFailure + static_cast<uint32_t>(f)}]++;
}

std::string OpStats::status_text(uint64_t key) const {
    if (key == kUnknown) return "unknown";
    if (key >= kFailure) {
        switch (static_cast<Failure>(key - kFailure)) {
            case Failure::GarbageArgs:
                return "GARBAGE_ARGS";
            case Failure::SystemErr:
                return "SYSTEM_ERR";
            case Failure::AuthError:
                return "AUTH_ERROR";
            case Failure::Dropped:
                return "DROPPED";
        }
    }
    const auto status = static_cast<uint32_t>(key);
    const char* n = status_name_ ? status_name_(status) : nullptr;
    return n ? n : std::to_string(status);
}

OpStats::Snapshot OpStats::snapshot() const {
    Snapshot s;
    for (const auto& slot : slots_) {
        if (!slot) continue;
        uint64_t calls = slot->calls.load(std::memory_order_relaxed);
        if (calls == 0) continue;
        OpSnapshot o;
        o.name = slot->name;
        o.calls = calls;
        o.seconds = static_cast<double>(slot->nanoseconds.load(std::memory_order_relaxed)) * 1e-9;
        for (size_t b = 0; b < o.buckets.size(); ++b)
            o.buckets[b] = slot->buckets[b].load(std::memory_order_relaxed);
        s.ops.push_back(std::move(o));
    }
    {
        std::lock_guard lock(errors_mu_);
        for (const auto& [k, n] : errors_)
            s.errors.push_back({slots_[k.first]->name, status_text(k.second), n});
    }
    s.bytes_read = bytes_read_.load(std::memory_order_relaxed);
    s.bytes_written = bytes_written_.load(std::memory_order_relaxed);
    return s;
}

}  // namespace nfsrdmad::rpc
