// file_shards.h — per-file state spread over mutex-guarded shards.
//
// The state tables are called from many worker threads at once. One mutex per shard of
// files (chosen by a keyed hash of the FileKey) keeps requests on different files apart
// without a global lock, and is the only lock held across a mirror's system calls.
#pragma once

#include <array>
#include <cstddef>
#include <mutex>
#include <unordered_map>

#include "nfs/vfs/state/state_keys.h"

namespace nfsrdmad::vfs::state {

template <class State>
class FileShards {
  public:
    struct Shard {
        mutable std::mutex mu;
        std::unordered_map<FileKey, State, FileKeyHash> files;

        // Drops the file's entry once State::empty() says nothing is left.
        void erase_if_empty(const FileKey& file) {
            auto it = files.find(file);
            if (it != files.end() && it->second.empty()) files.erase(it);
        }
    };
    static constexpr size_t kShards = 64;

    Shard& of(const FileKey& file) const { return shards_[FileKeyHash{}(file) % kShards]; }
    std::array<Shard, kShards>& all() const { return shards_; }

    size_t file_count() const {
        size_t n = 0;
        for (const Shard& sh : shards_) {
            std::lock_guard guard(sh.mu);
            n += sh.files.size();
        }
        return n;
    }

  private:
    mutable std::array<Shard, kShards> shards_;
};

}  // namespace nfsrdmad::vfs::state
