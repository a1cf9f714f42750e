#include "nfs/vfs/export_registry.h"

#include "nfs/vfs/export.h"

namespace nfsrdmad::vfs {

ExportRegistry::ExportRegistry() : ExportRegistry(nullptr) {}

ExportRegistry::ExportRegistry(std::shared_ptr<const ExportTable> table)
    : current_(new Holder(std::move(table))), seen_zero_(kSlots, false) {}

ExportRegistry::~ExportRegistry() {
    delete current_.load();
    for (const Holder* h : retired_) delete h;
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
