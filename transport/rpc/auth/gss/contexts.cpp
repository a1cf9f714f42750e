#include "transport/rpc/auth/gss/contexts.h"

#include <sys/random.h>

#include <algorithm>
#include <cstring>

namespace nfsrdmad::rpc::gss {
namespace {

uint64_t random_u64() {
    uint64_t v = 0;
    if (::getrandom(&v, sizeof v, 0) != sizeof v)
        v = static_cast<uint64_t>(Clock::now().time_since_epoch().count());
    return v;
}

std::string key_of(std::span<const uint8_t> h) {
    return std::string(reinterpret_cast<const char*>(h.data()), h.size());
}

}  // namespace

ContextTable::ContextTable(size_t max_contexts)
    : max_(std::max<size_t>(max_contexts, 1)), boot_(random_u64()) {}

std::vector<uint8_t> ContextTable::insert(std::shared_ptr<Context> c, Clock::time_point expires) {
    std::lock_guard l(mu_);
    if (by_handle_.size() >= max_) {
        auto first = std::min_element(
            by_handle_.begin(), by_handle_.end(),
            [](const auto& a, const auto& b) { return a.second.expires < b.second.expires; });
        by_handle_.erase(first);
    }
    std::vector<uint8_t> h(16);
    const uint64_t n = next_++;
    std::memcpy(h.data(), &n, 8);
    std::memcpy(h.data() + 8, &boot_, 8);
    by_handle_[key_of(h)] = Entry{std::move(c), expires};
    return h;
}

std::shared_ptr<Context> ContextTable::find(std::span<const uint8_t> handle) {
    std::lock_guard l(mu_);
    auto it = by_handle_.find(key_of(handle));
    if (it == by_handle_.end()) return nullptr;
    if (it->second.expires <= Clock::now()) {
        by_handle_.erase(it);
        return nullptr;
    }
    return it->second.ctx;
}

void ContextTable::set_expiry(std::span<const uint8_t> handle, Clock::time_point expires) {
    std::lock_guard l(mu_);
    auto it = by_handle_.find(key_of(handle));
    if (it != by_handle_.end()) it->second.expires = expires;
}

void ContextTable::erase(std::span<const uint8_t> handle) {
    std::lock_guard l(mu_);
    by_handle_.erase(key_of(handle));
}

size_t ContextTable::size() const {
    std::lock_guard l(mu_);
    return by_handle_.size();
}

}  // namespace nfsrdmad::rpc::gss
