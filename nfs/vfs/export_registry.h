// export_registry.h — the export table as it stands, read by every call, replaced by a
// reload (SIGHUP).
//
// Every call of every program reads the table once, so the read must not write anything
// another core writes. std::atomic<std::shared_ptr> did: its load takes a lock bit and a
// reference on the one control block, and its release drops it, three read-modify-writes
// on two lines all threads share. On two cores, two threads making NFSv3 GETATTR calls
// made fewer calls together than one alone (bench/host/README.md, "calls on two threads").
//
// A reader here pins the table instead: it counts itself in its thread's own slot (a line
// no other thread writes, while there are no more threads than slots), then reads the
// current pointer. A reload swaps the pointer and retires the old table; the table is freed
// once every slot has been seen at zero after the swap, since a reader that could still hold
// it counted itself before the swap and stays counted until it is done. Slots are looked at
// again by the reload and by every pin that ends while a table waits, so an old table (and
// the export roots it holds open) lives as long as the calls that began under it, not longer:
// an idle thread's slot is zero.
#pragma once

#include <atomic>
#include <cstdint>
#include <memory>
#include <mutex>
#include <vector>

#include "transport/rpc/stripes.h"

namespace nfsrdmad::vfs {

class ExportTable;

class ExportRegistry {
  public:
    ExportRegistry();
    explicit ExportRegistry(std::shared_ptr<const ExportTable> table);
    ~ExportRegistry();
    ExportRegistry(const ExportRegistry&) = delete;
    ExportRegistry& operator=(const ExportRegistry&) = delete;

    // An owning copy, for what keeps the table past one call (or off the per-call path).
    std::shared_ptr<const ExportTable> snapshot() const;
    // Publishes `table`; the one it replaces goes when no call still pins it.
    void replace(std::shared_ptr<const ExportTable> table);

    // The table for as long as this lives: one call's Request. Copying table() gives an
    // owning reference like snapshot()'s.
    class Pin {
      public:
        // The count goes up before the pointer is read, and a reload swaps the pointer
        // before it looks at the counts (all sequentially consistent): a reader that got
        // the old pointer is counted when the reload's look comes, so a slot seen at zero
        // after the swap holds no reader of the old table.
        explicit Pin(const ExportRegistry& registry)
            : registry_(registry), count_(registry.my_slot().pins) {
            count_.fetch_add(1, std::memory_order_seq_cst);
            table_ = registry.current_.load(std::memory_order_seq_cst);
        }
        ~Pin() {
            count_.fetch_sub(1, std::memory_order_release);  // after this call's reads
            if (registry_.waiting_.load(std::memory_order_acquire)) registry_.reclaim();
        }
        Pin(const Pin&) = delete;
        Pin& operator=(const Pin&) = delete;
        const std::shared_ptr<const ExportTable>& table() const { return *table_; }

      private:
        const ExportRegistry& registry_;
        std::atomic<uint64_t>& count_;
        const std::shared_ptr<const ExportTable>* table_;
    };

    // Tables replaced and not yet freed (tests).
    size_t retired() const;

  private:
    static constexpr size_t kSlots = 64;
    struct alignas(64) Slot {
        std::atomic<uint64_t> pins{0};
    };
    using Holder = std::shared_ptr<const ExportTable>;

    // Each thread's slot, the same in every registry.
    Slot& my_slot() const { return slots_[rpc::thread_number() % kSlots]; }
    // Frees the retired tables when every slot has been seen at zero since the last swap.
    void reclaim() const;

    mutable Slot slots_[kSlots];
    std::atomic<const Holder*> current_;
    mutable std::atomic<bool> waiting_{false};  // retired tables wait for the slots
    mutable std::mutex mu_;                     // reclaim and replace
    mutable std::vector<const Holder*> retired_;
    mutable std::vector<bool> seen_zero_;  // per slot, since the last swap
};

}  // namespace nfsrdmad::vfs
