// Duplicate request cache for non-idempotent calls (RFC 5531 §8.3 leaves it to the
// server; RFC 1813 §4.5 explains why NFSv3 needs one). A retransmitted CREATE,
// REMOVE, RENAME... gets the reply of the first execution instead of running twice.
#pragma once

#include <cstdint>
#include <list>
#include <mutex>
#include <optional>
#include <string>
#include <unordered_map>
#include <vector>

namespace nfsrdmad::rpc {

class ReplyCache {
public:
    explicit ReplyCache(size_t capacity = 4096) : capacity_(capacity) {}

    struct Key {
        std::string peer;  // client address and port, as the Linux server keys it
        uint32_t xid, prog, vers, proc;
        uint64_t args_hash;
        bool operator==(const Key&) const = default;
    };

    enum class Lookup { New, InProgress, Done };
    // New: the caller runs the call and must finish() it. InProgress: a retransmission
    // of a call still running: drop it. Done: `reply` holds the cached reply bytes.
    Lookup begin(const Key& k, std::vector<uint8_t>& reply);
    void finish(const Key& k, const std::vector<uint8_t>& reply);
    // Forgets an in-progress entry whose call produced no reply.
    void abandon(const Key& k);

    size_t size() const;

private:
    struct KeyHash {
        size_t operator()(const Key& k) const;
    };
    struct Entry {
        bool done = false;
        std::vector<uint8_t> reply;
        std::list<Key>::iterator lru;
    };
    void evict_locked();

    size_t capacity_;
    mutable std::mutex mu_;
    std::list<Key> lru_;  // front = most recent
    std::unordered_map<Key, Entry, KeyHash> map_;
};

uint64_t hash_bytes(const uint8_t* p, size_t n);

}  // namespace nfsrdmad::rpc
