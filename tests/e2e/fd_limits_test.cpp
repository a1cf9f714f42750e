// Descriptors as a managed resource (issue 16), against the real daemon started with
// RLIMIT_NOFILE soft = hard = 64: the descriptor cache is sized below the limit, a create
// storm of thousands of files succeeds, and at the limit itself the daemon gives back
// idle cached descriptors, or answers NFS3ERR_JUKEBOX (RFC 1813 §2.6) when nothing can be
// freed, never NFS3ERR_IO. Descriptors are counted from /proc/<pid>/fd.
#include <atomic>
#include <chrono>
#include <fstream>
#include <memory>
#include <string>
#include <thread>
#include <vector>

#include <gtest/gtest.h>

#include "tests/e2e/daemon_fixture.h"
#include "tests/e2e/e2e_util.h"
#include "tests/e2e/raw_nfs.h"
#include "tests/e2e/rpc_wire.h"

namespace nfsrdmad::e2e {
namespace {

constexpr unsigned long kLimit = 64;

// The number after `key` in the first line of the log that contains it (0 if none).
uint64_t LogNumberAfter(const std::string& log, const std::string& key) {
    std::ifstream in(log);
    std::string line;
    while (std::getline(in, line)) {
        auto at = line.find(key);
        if (at != std::string::npos) return std::stoull(line.substr(at + key.size()));
    }
    return 0;
}

class FdLimitsTest : public DaemonTest {
  protected:
    DaemonOptions Options() override {
        DaemonOptions o;
        o.extra_args = {"--rdma", "off"};
        o.max_open_files = kLimit;
        return o;
    }

    std::unique_ptr<RpcConn> Connect() {
        std::string why;
        auto c = RpcConn::Connect(daemon_->nfs_port(), kNfsProgram, 3, &why);
        EXPECT_TRUE(c != nullptr) << why;
        return c;
    }

    uint64_t Stat(const std::string& name) {
        return daemon_->StatsCounter("fds", name).value_or(UINT64_MAX);
    }

    // Idle TCP connections until the daemon holds every descriptor its limit allows
    // (accepted connections only: one that is not accepted is closed again, so none
    // waits in the backlog to take a descriptor the daemon frees).
    void FillToLimit() {
        while (daemon_->OpenFdCount() < kLimit) {
            const size_t before = daemon_->OpenFdCount();
            std::string why;
            auto c = wire::Conn::Open(daemon_->nfs_port(), &why);
            ASSERT_TRUE(c) << why;
            if (!WaitFor([&] { return daemon_->OpenFdCount() > before; }, std::chrono::seconds(2)))
                break;
            fillers_.push_back(std::move(c));
        }
        ASSERT_EQ(daemon_->OpenFdCount(), kLimit);
    }
    void ReleaseFillers() {
        fillers_.clear();
        ASSERT_TRUE(
            WaitFor([&] { return daemon_->OpenFdCount() < kLimit - 8; }, std::chrono::seconds(10)));
    }

    std::vector<std::unique_ptr<wire::Conn>> fillers_;
};

TEST_F(FdLimitsTest, CacheIsSizedBelowTheLimit) {
    EXPECT_EQ(Stat("limit"), kLimit);
    const uint64_t capacity = Stat("cache_capacity");
    EXPECT_GT(capacity, 0u);
    EXPECT_LT(capacity, kLimit);
    EXPECT_EQ(LogNumberAfter(daemon_->log_path(), "descriptors: RLIMIT_NOFILE "), kLimit);
    EXPECT_EQ(LogNumberAfter(daemon_->log_path(), "descriptors: cache of "), capacity);
}

// 3000 CREATE + WRITE + COMMIT from 4 connections at once, 64 descriptors in all: every
// one succeeds (a JUKEBOX is retried, as a client does; an error is a failure) and every
// file holds what was written.
TEST_F(FdLimitsTest, CreateStormOfThousandsOfFilesSucceeds) {
    constexpr int kThreads = 4, kPerThread = 750;
    std::atomic<int> failures{0}, jukebox{0};
    std::vector<std::string> errors(kThreads);
    auto worker = [&](int t) {
        auto conn = Connect();
        if (!conn) {
            ++failures;
            return;
        }
        rpc_context* rpc = conn->get();
        // A call answered NFS3ERR_JUKEBOX is sent again a little later (RFC 1813 §2.6).
        auto retrying = [&](auto call) {
            for (int attempt = 0;; ++attempt) {
                auto r = call();
                if (r.rpc_error.empty() && r.status == NFS3ERR_JUKEBOX && attempt < 200) {
                    ++jukebox;
                    std::this_thread::sleep_for(std::chrono::milliseconds(10));
                    continue;
                }
                return r;
            }
        };
        for (int i = 0; i < kPerThread; ++i) {
            const std::string name = "s" + std::to_string(t) + "_" + std::to_string(i);
            auto c = retrying([&] { return Create(rpc, root_, name, GUARDED); });
            if (!NfsIs(c, NFS3_OK) || !c.has_fh) {
                ++failures;
                if (errors[t].empty()) errors[t] = "CREATE " + name + ": " + NfsStatName(c.status);
                continue;
            }
            auto w = retrying([&] { return Write(rpc, c.fh, 0, name, UNSTABLE); });
            auto m = retrying([&] { return Commit(rpc, c.fh, 0, 0); });
            if (!NfsIs(w, NFS3_OK) || !NfsIs(m, NFS3_OK)) {
                ++failures;
                if (errors[t].empty())
                    errors[t] = "WRITE/COMMIT " + name + ": " + NfsStatName(w.status) + "/" +
                                NfsStatName(m.status);
            }
        }
    };
    std::vector<std::thread> threads;
    for (int t = 0; t < kThreads; ++t) threads.emplace_back(worker, t);
    for (auto& th : threads) th.join();
    RecordProperty("jukebox_replies", jukebox.load());
    for (const auto& e : errors)
        if (!e.empty()) ADD_FAILURE() << "first error of a thread: " << e;
    ASSERT_EQ(failures.load(), 0);
    for (int t = 0; t < kThreads; ++t)
        for (int i = 0; i < kPerThread; ++i) {
            const std::string name = "s" + std::to_string(t) + "_" + std::to_string(i);
            std::string content;
            ASSERT_TRUE(ReadFile(disk(name), &content)) << name;
            ASSERT_EQ(content, name);
        }
    EXPECT_LE(daemon_->OpenFdCount(), kLimit);
    EXPECT_LE(Stat("cache_entries"), Stat("cache_capacity"));
    EXPECT_GT(Stat("cache_evictions"), 0u);  // the cache did cycle
}

// A GETATTR keeps the regular file it resolved open (O_PATH, fd_cache.h) so that the next
// one costs a statx; the daemon's sweep closes it a second or two after its last use, so a
// file removed meanwhile does not keep its blocks for longer.
TEST_F(FdLimitsTest, AFileHeldForGetattrIsClosedWhenIdle) {
    auto conn = Connect();
    ASSERT_TRUE(conn);
    rpc_context* rpc = conn->get();
    ASSERT_TRUE(WriteFile(disk("held"), "abc"));
    auto l = Lookup(rpc, root_, "held");
    ASSERT_TRUE(NfsIs(l, NFS3_OK));
    const uint64_t closed = Stat("cache_idle_closed");
    const size_t fds = daemon_->OpenFdCount();
    ASSERT_TRUE(NfsIs(Getattr(rpc, l.fh), NFS3_OK));
    EXPECT_EQ(daemon_->OpenFdCount(), fds + 1);
    EXPECT_EQ(Stat("cache_path_entries"), 1u);
    ASSERT_TRUE(NfsIs(Getattr(rpc, l.fh), NFS3_OK));
    EXPECT_EQ(daemon_->OpenFdCount(), fds + 1);  // the same descriptor
    ASSERT_TRUE(::unlink(disk("held").c_str()) == 0);
    EXPECT_TRUE(
        WaitFor([&] { return Stat("cache_idle_closed") > closed; }, std::chrono::seconds(10)));
    EXPECT_EQ(Stat("cache_path_entries"), 0u);
    EXPECT_EQ(daemon_->OpenFdCount(), fds);
}

// At the limit itself: first the cache gives back idle descriptors and the calls succeed;
// once it has nothing left, CREATE is answered NFS3ERR_JUKEBOX, leaves nothing behind,
// and the same GUARDED CREATE succeeds when descriptors are free again.
TEST_F(FdLimitsTest, AtTheLimitIdleCachedDescriptorsGoFirstThenJukebox) {
    auto conn = Connect();
    ASSERT_TRUE(conn);
    rpc_context* rpc = conn->get();
    const uint64_t capacity = Stat("cache_capacity");
    for (uint64_t i = 0; i < capacity; ++i) {  // fill the cache
        const std::string name = "warm" + std::to_string(i);
        auto c = Create(rpc, root_, name, GUARDED);
        ASSERT_TRUE(NfsIs(c, NFS3_OK)) << name;
        ASSERT_TRUE(NfsIs(Write(rpc, c.fh, 0, name, UNSTABLE), NFS3_OK)) << name;
    }
    ASSERT_NO_FATAL_FAILURE(FillToLimit());
    auto c = Create(rpc, root_, "at_limit", GUARDED);
    ASSERT_TRUE(NfsIs(c, NFS3_OK)) << "with idle descriptors in the cache";
    ASSERT_TRUE(NfsIs(Write(rpc, c.fh, 0, "x", FILE_SYNC), NFS3_OK));

    // Take the limit again and again until the cache has nothing left to give.
    std::string refused;
    for (int i = 0; i < 64 && refused.empty(); ++i) {
        ASSERT_NO_FATAL_FAILURE(FillToLimit());
        const std::string name = "j" + std::to_string(i);
        auto r = Create(rpc, root_, name, GUARDED);
        ASSERT_TRUE(NfsIsOneOf(r, {NFS3_OK, NFS3ERR_JUKEBOX})) << name;
        if (r.status == NFS3ERR_JUKEBOX) refused = name;
    }
    ASSERT_FALSE(refused.empty()) << "the daemon never ran out of descriptors";
    EXPECT_TRUE(Absent(disk(refused))) << "a refused CREATE left " << refused << " behind";
    // A refused CREATE may give back a descriptor it had got (the directory's, for its
    // commit, when the file's own open is what failed): at the limit again.
    ASSERT_NO_FATAL_FAILURE(FillToLimit());
    auto mk = Mkdir(rpc, root_, "dir_at_limit");
    ASSERT_TRUE(NfsIs(mk, NFS3ERR_JUKEBOX));
    EXPECT_TRUE(Absent(disk("dir_at_limit")));

    ASSERT_NO_FATAL_FAILURE(ReleaseFillers());
    EXPECT_TRUE(NfsIs(Create(rpc, root_, refused, GUARDED), NFS3_OK));
    EXPECT_TRUE(NfsIs(Mkdir(rpc, root_, "dir_at_limit"), NFS3_OK));
    EXPECT_GT(Stat("cache_reclaimed"), 0u);
    EXPECT_GT(Stat("emfile_retries"), 0u);
    EXPECT_GT(Stat("emfile_exhausted"), 0u);
}

}  // namespace
}  // namespace nfsrdmad::e2e
