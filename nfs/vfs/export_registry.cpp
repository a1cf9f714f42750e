#include "nfs/vfs/export_registry.h"

#include "nfs/vfs/export.h"

namespace nfsrdmad::vfs {

namespace {

// Each thread's slot, the same in every registry: threads are numbered as they first pin.
std::atomic<size_t> next_thread{0};
thread_local size_t thread_slot = SIZE_MAX;

}  // namespace

ExportRegistry::ExportRegistry() : ExportRegistry(nullptr) {}

ExportRegistry::ExportRegistry(std::shared_ptr<const ExportTable> table)
    : current_(new Holder(std::move(table))), seen_zero_(kSlots, false) {}

ExportRegistry::~ExportRegistry() {
    delete current_.load();
    for (const Holder* h : retired_) delete h;
}

ExportRegistry::Slot& ExportRegistry::my_slot() const {
    if (thread_slot == SIZE_MAX) thread_slot = next_thread.fetch_add(1, std::memory_order_relaxed);
    return slots_[thread_slot % kSlots];
}

// The count goes up before the pointer is read, and a reload swaps the pointer before it
// looks at the counts (all sequentially consistent): a reader that got the old pointer is
// counted when the reload's look comes, so a slot seen at zero after the swap holds no
// reader of the old table.
ExportRegistry::Pin::Pin(const ExportRegistry& registry)
    : registry_(registry), count_(registry.my_slot().pins) {
    count_.fetch_add(1, std::memory_order_seq_cst);
    table_ = registry.current_.load(std::memory_order_seq_cst);
}

ExportRegistry::Pin::~Pin() {
    count_.fetch_sub(1, std::memory_order_release);  // what this call did with the table first
    if (registry_.waiting_.load(std::memory_order_acquire)) registry_.reclaim();
}

std::shared_ptr<const ExportTable> ExportRegistry::snapshot() const {
    Pin pin(*this);
    return pin.table();
}

void ExportRegistry::replace(std::shared_ptr<const ExportTable> table) {
    {
        std::lock_guard lock(mu_);
        const Holder* old = current_.exchange(new Holder(std::move(table)));
        retired_.push_back(old);
        seen_zero_.assign(kSlots, false);  // after this swap, every slot again
        waiting_.store(true, std::memory_order_release);
    }
    reclaim();
}

void ExportRegistry::reclaim() const {
    std::vector<const Holder*> done;
    {
        std::lock_guard lock(mu_);
        if (retired_.empty()) return;
        bool all = true;
        for (size_t i = 0; i < kSlots; ++i) {
            if (seen_zero_[i]) continue;
            if (slots_[i].pins.load(std::memory_order_seq_cst) == 0)
                seen_zero_[i] = true;
            else
                all = false;
        }
        if (!all) return;
        done.swap(retired_);
        waiting_.store(false, std::memory_order_relaxed);
    }
    for (const Holder* h : done) delete h;  // outside the lock: a table closes its roots
}

size_t ExportRegistry::retired() const {
    std::lock_guard lock(mu_);
    return retired_.size();
}

}  // namespace nfsrdmad::vfs
