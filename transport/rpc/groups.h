// Supplementary group ids: as a call's credential carries them (AUTH_SYS: at most 16,
// RFC 5531 appendix A) and as a request runs with them (vfs::Identity). Up to kInline are
// kept in place, so that decoding a credential and authorizing its call allocate nothing
// (issue 13: two allocations per call were these); more (a Kerberos principal's groups
// from the group database) go to the heap.
#pragma once

#include <algorithm>
#include <array>
#include <cstddef>
#include <cstdint>
#include <initializer_list>
#include <span>
#include <vector>

namespace nfsrdmad::rpc {

class Groups {
  public:
    static constexpr size_t kInline = 16;

    // Not `= default`: a value-initialized holder (`Target{}`) would zero all kInline
    // slots first; only [0, size()) is ever read.
    Groups() noexcept {}
    Groups(std::initializer_list<uint32_t> l) { assign(l.begin(), l.end()); }
    Groups(const Groups& o) { assign(o.begin(), o.end()); }
    Groups(Groups&& o) noexcept { take(o); }
    Groups& operator=(const Groups& o) {
        if (this != &o) assign(o.begin(), o.end());
        return *this;
    }
    Groups& operator=(Groups&& o) noexcept {
        if (this != &o) take(o);
        return *this;
    }

    template <class It>
    void assign(It first, It last) {
        const auto n = static_cast<size_t>(std::distance(first, last));
        if (n <= kInline) {
            heap_.clear();
            std::copy(first, last, inline_.begin());
        } else {
            heap_.assign(first, last);
        }
        size_ = n;
    }
    void push_back(uint32_t g) {
        if (size_ < kInline) {
            inline_[size_++] = g;
            return;
        }
        if (size_ == kInline) heap_.assign(inline_.begin(), inline_.end());
        heap_.push_back(g);
        ++size_;
    }
    void clear() {
        heap_.clear();
        size_ = 0;
    }

    size_t size() const { return size_; }
    bool empty() const { return size_ == 0; }
    uint32_t* data() { return size_ <= kInline ? inline_.data() : heap_.data(); }
    const uint32_t* data() const { return size_ <= kInline ? inline_.data() : heap_.data(); }
    uint32_t* begin() { return data(); }
    uint32_t* end() { return data() + size_; }
    const uint32_t* begin() const { return data(); }
    const uint32_t* end() const { return data() + size_; }
    uint32_t operator[](size_t i) const { return data()[i]; }
    uint32_t& operator[](size_t i) { return data()[i]; }
    operator std::span<const uint32_t>() const { return {data(), size_}; }

    bool operator==(const Groups& o) const {
        return std::equal(begin(), end(), o.begin(), o.end());
    }

  private:
    // heap_ holds the groups when there are more than kInline, and is empty otherwise.
    void take(Groups& o) {
        size_ = o.size_;
        if (size_ <= kInline) {
            std::copy(o.inline_.begin(), o.inline_.begin() + size_, inline_.begin());
            heap_.clear();
        } else {
            heap_ = std::move(o.heap_);
        }
        o.clear();
    }

    size_t size_ = 0;
    std::array<uint32_t, kInline> inline_;
    std::vector<uint32_t> heap_;
};

}  // namespace nfsrdmad::rpc
