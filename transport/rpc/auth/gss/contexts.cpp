#include "transport/rpc/auth/gss/contexts.h"

#include <sys/random.h>

#include <algorithm>
#include <cstring>

namespace nfsrdmad::rpc::gss {
namespace {

std::string key_of(std::span<const uint8_t> h) {
    return std::string(reinterpret_cast<const char*>(h.data()), h.size());
}

}  // namespace

ContextTable::ContextTable(Limits limits) : limits_(limits) {}

std::string ContextTable::fresh_handle() const {
    std::string h(16, '\0');
    for (;;) {
        size_t got = 0;
        while (got < h.size()) {
            const ssize_t n = ::getrandom(h.data() + got, h.size() - got, 0);
            if (n > 0) got += static_cast<size_t>(n);
        }
        if (!by_handle_.count(h)) return h;
    }
}

void ContextTable::index(const std::string& key, const Entry& e) {
    all_.emplace(e.expires, key);
    if (e.principal.empty())
        incomplete_.emplace(e.expires, key);
    else
        by_principal_[e.principal].emplace(e.expires, key);
}

void ContextTable::erase_locked(std::string key) {
    auto it = by_handle_.find(key);
    if (it == by_handle_.end()) return;
    const Entry& e = it->second;
    all_.erase({e.expires, key});
    if (e.principal.empty()) {
        incomplete_.erase({e.expires, key});
    } else if (auto p = by_principal_.find(e.principal); p != by_principal_.end()) {
        p->second.erase({e.expires, key});
        if (p->second.empty()) by_principal_.erase(p);
    }
    by_handle_.erase(it);
}

void ContextTable::make_room(const std::string& principal, bool complete) {
    if (!complete && incomplete_.size() >= limits_.incomplete)
        erase_locked(incomplete_.begin()->second);
    if (complete) {
        auto p = by_principal_.find(principal);
        if (p != by_principal_.end() && p->second.size() >= limits_.per_principal)
            erase_locked(p->second.begin()->second);
    }
    if (by_handle_.size() >= limits_.max && !all_.empty()) erase_locked(all_.begin()->second);
}

std::vector<uint8_t> ContextTable::insert(std::shared_ptr<Context> c, Clock::time_point expires,
                                          const std::string& principal, bool complete) {
    std::lock_guard l(mu_);
    make_room(principal, complete);
    const std::string key = fresh_handle();
    Entry e{std::move(c), expires, complete ? principal : std::string()};
    index(key, e);
    by_handle_.emplace(key, std::move(e));
    return std::vector<uint8_t>(key.begin(), key.end());
}

bool ContextTable::complete(std::span<const uint8_t> handle, Clock::time_point expires,
                            const std::string& principal) {
    std::lock_guard l(mu_);
    const std::string key = key_of(handle);
    auto it = by_handle_.find(key);
    if (it == by_handle_.end()) return false;
    Entry e = it->second;
    erase_locked(key);
    make_room(principal, true);
    e.expires = expires;
    e.principal = principal;
    index(key, e);
    by_handle_.emplace(key, std::move(e));
    return true;
}

std::shared_ptr<Context> ContextTable::find(std::span<const uint8_t> handle) {
    std::lock_guard l(mu_);
    const std::string key = key_of(handle);
    auto it = by_handle_.find(key);
    if (it == by_handle_.end()) return nullptr;
    if (it->second.expires <= Clock::now()) {
        erase_locked(key);
        return nullptr;
    }
    return it->second.ctx;
}

void ContextTable::erase(std::span<const uint8_t> handle) {
    std::lock_guard l(mu_);
    erase_locked(key_of(handle));
}

size_t ContextTable::size() const {
    std::lock_guard l(mu_);
    return by_handle_.size();
}

}  // namespace nfsrdmad::rpc::gss
