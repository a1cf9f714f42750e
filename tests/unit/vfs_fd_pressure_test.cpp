// Unit tests of running out of descriptors (fd_pressure.h): the descriptor cache gives
// back idle entries, least recently used first, when an open fails with EMFILE; entries
// in use are never closed; a create that cannot get its descriptors changes nothing, so
// the client's retry after NFS3ERR_JUKEBOX starts from the same state; and the cache's
// capacity is sized below RLIMIT_NOFILE.
#include <dirent.h>
#include <sys/resource.h>
#include <unistd.h>

#include <cstdlib>
#include <vector>

#include "nfs/vfs/fd_pressure.h"
#include "tests/unit/vfs_test_util.h"

namespace nfsrdmad::vfs::testing {
namespace {

int highest_open_fd() {
    int top = 2;
    DIR* d = ::opendir("/proc/self/fd");
    if (!d) return 1023;
    while (const dirent* e = ::readdir(d))
        if (e->d_name[0] != '.') top = std::max(top, std::atoi(e->d_name));
    ::closedir(d);
    return top;
}

// Lowers the soft RLIMIT_NOFILE just above the highest descriptor in use and fills every
// free number below it: the next open anywhere in the process fails with EMFILE. Undone
// on destruction.
class Exhausted {
  public:
    Exhausted() {
        EXPECT_EQ(::getrlimit(RLIMIT_NOFILE, &saved_), 0);
        struct rlimit low = saved_;
        low.rlim_cur = static_cast<rlim_t>(highest_open_fd() + 8);
        EXPECT_EQ(::setrlimit(RLIMIT_NOFILE, &low), 0);
        for (;;) {
            int fd = ::dup(0);
            if (fd < 0) {
                EXPECT_EQ(errno, EMFILE);
                break;
            }
            held_.push_back(fd);
        }
    }
    ~Exhausted() {
        release(held_.size());
        ::setrlimit(RLIMIT_NOFILE, &saved_);
    }
    Exhausted(const Exhausted&) = delete;
    Exhausted& operator=(const Exhausted&) = delete;

    void release(size_t n) {
        for (; n > 0 && !held_.empty(); --n) {
            ::close(held_.back());
            held_.pop_back();
        }
    }

  private:
    struct rlimit saved_ {};
    std::vector<int> held_;
};

class FdPressureTest : public VfsFixture {
  protected:
    // Files f0..f<n-1>, resolved now (resolving needs descriptors too).
    std::vector<Node> make_files(int n) {
        std::vector<Node> nodes;
        for (int i = 0; i < n; ++i) {
            write_file("f" + std::to_string(i), "x");
            nodes.push_back(node("f" + std::to_string(i)));
        }
        return nodes;
    }
};

TEST_F(FdPressureTest, CacheGivesBackLeastRecentlyUsedIdleEntriesOnEmfile) {
    FdCache cache(12);
    auto files = make_files(13);
    for (int i = 0; i < 12; ++i) ASSERT_TRUE(cache.get(files[i], OpenFor::Read).ok());
    ASSERT_TRUE(cache.get(files[0], OpenFor::Read).ok());  // f0 is now the most recent
    ASSERT_EQ(cache.size(), 12u);
    const auto before = fd_pressure_stats();
    {
        Exhausted ex;
        ASSERT_EQ(::dup(0), -1);  // really out of descriptors
        auto f = cache.get(files[12], OpenFor::Read);
        ASSERT_TRUE(f.ok()) << describe_error(f.error());
    }
    const auto after = fd_pressure_stats();
    EXPECT_GE(after.retries, before.retries + 1);
    EXPECT_EQ(after.exhausted, before.exhausted);
    // One batch, not the whole cache, and the least recently used first: f1, f2, ...
    ASSERT_GE(cache.reclaimed(), 1u);
    EXPECT_LT(cache.reclaimed(), 12u);
    EXPECT_EQ(cache.size(), 12u - cache.reclaimed() + 1);
    EXPECT_FALSE(cache.contains(files[1].handle));
    EXPECT_TRUE(cache.contains(files[0].handle));
    EXPECT_TRUE(cache.contains(files[11].handle));
    EXPECT_TRUE(cache.contains(files[12].handle));
}

TEST_F(FdPressureTest, EntriesInUseAreNeverClosed) {
    FdCache cache(4);
    auto files = make_files(5);
    std::vector<std::shared_ptr<const OpenFile>> held;
    for (int i = 0; i < 4; ++i) {
        auto f = cache.get(files[i], OpenFor::Read);
        ASSERT_TRUE(f.ok());
        held.push_back(*f);
    }
    const auto before = fd_pressure_stats();
    {
        Exhausted ex;
        auto f = cache.get(files[4], OpenFor::Read);
        EXPECT_EQ(f.error(), EMFILE);  // nothing to free: the NFS layer answers JUKEBOX
    }
    EXPECT_EQ(cache.reclaimed(), 0u);
    EXPECT_EQ(cache.size(), 4u);
    EXPECT_EQ(fd_pressure_stats().exhausted, before.exhausted + 1);
    for (auto& f : held) {  // every descriptor still open and usable
        char c;
        EXPECT_EQ(read(*f, 0, 1, &c, kRoot)->count, 1u);
    }
    // Once they are idle, they can go.
    held.clear();
    EXPECT_EQ(cache.reclaim_fds(3), 3u);
    EXPECT_EQ(cache.size(), 1u);
}

TEST_F(FdPressureTest, CreateWithoutDescriptorsChangesNothing) {
    {
        Exhausted ex;
        EXPECT_EQ(create(root_, "g", 0644, CreateHow::Guarded, 0, kRoot).error(), EMFILE);
        EXPECT_EQ(create(root_, "x", 0644, CreateHow::Exclusive, 42, kRoot).error(), EMFILE);
        EXPECT_EQ(mkdir(root_, "d", 0755, kRoot).error(), EMFILE);
        EXPECT_EQ(symlink(root_, "l", "target", 0777, kRoot).error(), EMFILE);
    }
    struct stat st;
    for (const char* name : {"g", "x", "d", "l"})
        EXPECT_NE(::lstat(path(name).c_str(), &st), 0) << name << " was left behind";
    // The client's retry (after NFS3ERR_JUKEBOX) succeeds, GUARDED and EXCLUSIVE included.
    EXPECT_TRUE(create(root_, "g", 0644, CreateHow::Guarded, 0, kRoot).ok());
    EXPECT_TRUE(create(root_, "x", 0644, CreateHow::Exclusive, 42, kRoot).ok());
    EXPECT_TRUE(mkdir(root_, "d", 0755, kRoot).ok());
    EXPECT_TRUE(symlink(root_, "l", "target", 0777, kRoot).ok());
}

TEST_F(FdPressureTest, CreateReclaimsFromTheCacheAndSucceeds) {
    FdCache cache(8);
    auto files = make_files(8);
    for (auto& f : files) ASSERT_TRUE(cache.get(f, OpenFor::Read).ok());
    {
        Exhausted ex;
        auto e = create(root_, "new", 0644, CreateHow::Guarded, 0, kRoot);
        EXPECT_TRUE(e.ok()) << describe_error(e.error());
        auto d = mkdir(root_, "newdir", 0755, kRoot);
        EXPECT_TRUE(d.ok()) << describe_error(d.error());
    }
    EXPECT_GE(cache.reclaimed(), 1u);
}

TEST(FdCacheCapacity, SizedFromWhatTheLimitLeaves) {
    FdReserve daemon_defaults;  // tcp.max_connections, tcp.max_pipes, workers, 1 export
    daemon_defaults.connections = 1024;
    daemon_defaults.pipes = 256;
    daemon_defaults.workers = 16;
    daemon_defaults.exports = 1;
    daemon_defaults.other = 42;
    const uint64_t reserved = daemon_defaults.total();
    EXPECT_GT(reserved, 1024u + 512u);
    // Plenty: what is left, up to the ceiling.
    EXPECT_EQ(fd_cache_capacity(1048576, daemon_defaults), kMaxFdCache);
    EXPECT_EQ(fd_cache_capacity(reserved + 5000, daemon_defaults), 5000u);
    // The reserve alone exceeds the limit: a quarter of it, never the whole.
    EXPECT_EQ(fd_cache_capacity(1024, daemon_defaults), 256u);
    EXPECT_EQ(fd_cache_capacity(64, daemon_defaults), 16u);
    for (uint64_t limit : std::vector<uint64_t>{2, 64, 1024, reserved, reserved + 1, 1u << 20})
        EXPECT_LT(fd_cache_capacity(limit, daemon_defaults), limit) << limit;
    EXPECT_GE(fd_cache_capacity(1, daemon_defaults), 1u);
    // Lock descriptions (state/ofd_mirror.h) are held, not reclaimable: reserved too.
    FdReserve with_locks = daemon_defaults;
    with_locks.lock_descriptions = 1000;
    EXPECT_EQ(with_locks.total(), reserved + 1000);
    EXPECT_EQ(fd_cache_capacity(reserved + 6000, with_locks), 5000u);
}

}  // namespace
}  // namespace nfsrdmad::vfs::testing
