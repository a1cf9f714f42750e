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

namespace {

// OpStats::kBuckets in nanoseconds: a bucket is found with integer compares, not by
// converting every call's time to seconds.
constexpr std::array<uint64_t, OpStats::kBuckets.size()> kBucketNs = [] {
    std::array<uint64_t, OpStats::kBuckets.size()> ns{};
    for (size_t i = 0; i < ns.size(); ++i)
        ns[i] = static_cast<uint64_t>(OpStats::kBuckets[i] * 1e9 + 0.5);
    return ns;
}();

}  // namespace

size_t latency_bucket(uint64_t nanoseconds) {
    // From the smallest bound up, not a binary search: most calls land in the first few
    // buckets (tens of microseconds), so this takes one to four compares where a binary
    // search takes five.
    size_t i = 0;
    while (i < kBucketNs.size() && nanoseconds > kBucketNs[i]) ++i;
    return i;
}

void OpStats::count(size_t i, uint64_t nanoseconds) {
    Counts& s = slots_[i]->stripes[thread_stripe()];
    s.calls.fetch_add(1, std::memory_order_relaxed);
    s.nanoseconds.fetch_add(nanoseconds, std::memory_order_relaxed);
    s.buckets[latency_bucket(nanoseconds)].fetch_add(1, std::memory_order_relaxed);
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
        OpSnapshot o;
        uint64_t ns = 0;
        for (const Counts& c : slot->stripes) {
            o.calls += c.calls.load(std::memory_order_relaxed);
            ns += c.nanoseconds.load(std::memory_order_relaxed);
            for (size_t b = 0; b < o.buckets.size(); ++b)
                o.buckets[b] += c.buckets[b].load(std::memory_order_relaxed);
        }
        if (o.calls == 0) continue;
        o.name = slot->name;
        o.seconds = static_cast<double>(ns) * 1e-9;
        s.ops.push_back(std::move(o));
    }
    {
        std::lock_guard lock(errors_mu_);
        for (const auto& [k, n] : errors_)
            s.errors.push_back({slots_[k.first]->name, status_text(k.second), n});
    }
    for (const Bytes& b : bytes_) {
        s.bytes_read += b.read.load(std::memory_order_relaxed);
        s.bytes_written += b.written.load(std::memory_order_relaxed);
    }
    return s;
}

ExportStats::ExportStats() : slots_(std::make_unique<std::atomic<Slot*>[]>(kSlots + 1)) {}

ExportStats::Slot& ExportStats::make_slot(uint32_t i) {
    if (Slot* s = slots_[i].load(std::memory_order_relaxed)) return *s;
    made_.push_back(std::make_unique<Slot>());
    slots_[i].store(made_.back().get(), std::memory_order_release);
    return *made_.back();
}

uint32_t ExportStats::slot_for(const std::string& path) {
    std::lock_guard lock(mu_);
    if (auto it = by_path_.find(path); it != by_path_.end()) return it->second;
    if (by_path_.size() + 1 < kSlots) {
        const auto slot = static_cast<uint32_t>(by_path_.size() + 1);
        by_path_.emplace(path, slot);
        make_slot(slot);
        return slot;
    }
    other_used_ = true;
    make_slot(kSlots);
    return kSlots;
}

void ExportStats::publish(uint32_t slot) {
    if (slot == 0 || slot > kSlots) return;
    if (Slot* s = slots_[slot].load(std::memory_order_acquire))
        s->published.store(true, std::memory_order_relaxed);
}

void ExportStats::record(uint32_t slot, bool failed, uint64_t nanoseconds, uint64_t bytes_read,
                         uint64_t bytes_written) {
    if (slot == 0 || slot > kSlots) return;
    Slot* made = slots_[slot].load(std::memory_order_acquire);
    if (!made) return;  // a number slot_for never gave
    Counts& s = made->stripes[thread_stripe()];
    s.calls.fetch_add(1, std::memory_order_relaxed);
    if (failed) s.errors.fetch_add(1, std::memory_order_relaxed);
    s.nanoseconds.fetch_add(nanoseconds, std::memory_order_relaxed);
    s.buckets[latency_bucket(nanoseconds)].fetch_add(1, std::memory_order_relaxed);
    if (bytes_read) s.bytes_read.fetch_add(bytes_read, std::memory_order_relaxed);
    if (bytes_written) s.bytes_written.fetch_add(bytes_written, std::memory_order_relaxed);
}

std::vector<ExportStats::ExportSnapshot> ExportStats::snapshot() const {
    std::vector<std::pair<std::string, uint32_t>> named;
    {
        std::lock_guard lock(mu_);
        named.assign(by_path_.begin(), by_path_.end());
        if (other_used_) named.emplace_back("other", kSlots);
    }
    std::vector<ExportSnapshot> out;
    out.reserve(named.size());
    for (const auto& [path, slot] : named) {
        const Slot* made = slots_[slot].load(std::memory_order_acquire);
        if (!made) continue;
        ExportSnapshot e;
        uint64_t ns = 0;
        for (const Counts& c : made->stripes) {
            e.calls += c.calls.load(std::memory_order_relaxed);
            e.errors += c.errors.load(std::memory_order_relaxed);
            e.bytes_read += c.bytes_read.load(std::memory_order_relaxed);
            e.bytes_written += c.bytes_written.load(std::memory_order_relaxed);
            ns += c.nanoseconds.load(std::memory_order_relaxed);
            for (size_t b = 0; b < e.buckets.size(); ++b)
                e.buckets[b] += c.buckets[b].load(std::memory_order_relaxed);
        }
        if (!made->published.load(std::memory_order_relaxed) && e.calls == 0) continue;
        e.path = path;
        e.seconds = static_cast<double>(ns) * 1e-9;
        out.push_back(std::move(e));
    }
    return out;
}

}  // namespace nfsrdmad::rpc
