// Per-client bounds on the TCP side, against the real daemon over raw sockets: what a
// record mark alone costs, the connection cap, the idle timeout, running out of
// descriptors, and the pipes that hold spliced READ data. Memory, CPU time and
// descriptors are measured from /proc/<pid>, not assumed.
#include <unistd.h>

#include <chrono>
#include <cstdio>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <sstream>
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

using Clock = std::chrono::steady_clock;
using wire::Bytes;
using wire::Conn;

constexpr uint32_t kNfs = 100003, kNfsLookup = 3, kNfsRead = 6;

// A "VmRSS:" or "VmSize:" line of /proc/<pid>/status, in KiB (-1 if absent).
long StatusKiB(pid_t pid, const std::string& field) {
    std::ifstream f("/proc/" + std::to_string(pid) + "/status");
    std::string line;
    while (std::getline(f, line))
        if (line.rfind(field + ":", 0) == 0) return std::stol(line.substr(field.size() + 1));
    return -1;
}

// The address space the process can touch, in KiB: /proc/<pid>/maps without the
// inaccessible ("---p") mappings. VmSize counts those too, and glibc reserves 64 MiB of
// them for each malloc arena a thread first allocates in, which moves VmSize by 64 MiB
// whenever a thread the warm-up left idle serves its first call (timing, not a leak).
long AccessibleKiB(pid_t pid) {
    std::ifstream f("/proc/" + std::to_string(pid) + "/maps");
    std::string line;
    long kib = 0;
    while (std::getline(f, line)) {
        unsigned long lo = 0, hi = 0;
        char perms[5] = {};
        if (std::sscanf(line.c_str(), "%lx-%lx %4s", &lo, &hi, perms) != 3) continue;
        if (std::string(perms, 3) == "---") continue;
        kib += static_cast<long>((hi - lo) / 1024);
    }
    return kib;
}

// utime + stime of the process, in clock ticks (/proc/<pid>/stat fields 14 and 15).
long CpuTicks(pid_t pid) {
    std::ifstream f("/proc/" + std::to_string(pid) + "/stat");
    std::string all((std::istreambuf_iterator<char>(f)), std::istreambuf_iterator<char>());
    auto close_paren = all.rfind(')');
    if (close_paren == std::string::npos) return -1;
    std::istringstream rest(all.substr(close_paren + 2));
    std::string field;
    long utime = 0, stime = 0;
    for (int i = 3; i <= 15 && rest >> field; ++i) {
        if (i == 14) utime = std::stol(field);
        if (i == 15) stime = std::stol(field);
    }
    return utime + stime;
}

// Descriptors of the process that are pipe ends.
size_t PipeFds(pid_t pid) {
    size_t n = 0;
    std::error_code ec;
    for (const auto& e :
         std::filesystem::directory_iterator("/proc/" + std::to_string(pid) + "/fd", ec)) {
        auto target = std::filesystem::read_symlink(e.path(), ec);
        if (!ec && target.string().rfind("pipe:", 0) == 0) ++n;
    }
    return n;
}

size_t CountLines(const std::string& path, const std::string& needle) {
    std::ifstream f(path);
    std::string line;
    size_t n = 0;
    while (std::getline(f, line))
        if (line.find(needle) != std::string::npos) ++n;
    return n;
}

class TcpLimitsTest : public DaemonTest {
  protected:
    TcpLimitsTest() { mount_client_ = false; }
    DaemonOptions Options() override {
        DaemonOptions o;
        o.export_options = "rw,no_root_squash,insecure";
        o.extra_args = {"--rdma", "off"};
        o.config_yaml = yaml_;
        o.max_open_files = max_open_files_;
        return o;
    }

    std::unique_ptr<Conn> Open() {
        std::string why;
        auto c = Conn::Open(daemon_->nfs_port(), &why);
        EXPECT_TRUE(c != nullptr) << why;
        return c;
    }
    // A NULL call on `c`, answered.
    ::testing::AssertionResult Null(Conn& c, uint32_t xid) {
        std::string why;
        if (!c.SendRecord(wire::EncodeCall(wire::RootCall(xid, kNfs, 3, 0)), &why))
            return ::testing::AssertionFailure() << "send: " << why;
        Bytes rec;
        if (c.RecvRecord(&rec, 5000, &why) != Conn::Recv::kOk)
            return ::testing::AssertionFailure() << "no reply: " << why;
        auto r = wire::ParseReply(rec);
        if (!r.parse_error.empty() || r.xid != xid || r.accept_stat != wire::kSuccess)
            return ::testing::AssertionFailure() << r.Describe();
        return ::testing::AssertionSuccess();
    }
    ::testing::AssertionResult NullOnNewConnection(uint32_t xid) {
        auto r = wire::RoundTrip(daemon_->nfs_port(),
                                 wire::EncodeCall(wire::RootCall(xid, kNfs, 3, 0)), 5000);
        if (!r.parse_error.empty() || r.xid != xid || r.accept_stat != wire::kSuccess)
            return ::testing::AssertionFailure() << r.Describe();
        return ::testing::AssertionSuccess();
    }
    // LOOKUP of `name` in the export root over a raw connection: the object's handle.
    void LookupRaw(const std::string& name, Bytes* fh) {
        Fh root;
        ASSERT_NO_FATAL_FAILURE(FetchRootHandle(&root));
        Bytes args = wire::XdrOut().opaque(root.data.data(), root.data.size()).str(name).take();
        auto r = wire::RoundTrip(daemon_->nfs_port(),
                                 wire::EncodeCall(wire::RootCall(7, kNfs, 3, kNfsLookup, args)));
        ASSERT_TRUE(r.parse_error.empty()) << r.parse_error;
        wire::XdrIn in(r.results);
        uint32_t status = 1;
        ASSERT_TRUE(in.u32(&status) && status == 0) << "LOOKUP " << name << ": " << status;
        ASSERT_TRUE(in.opaque(fh, 64));
    }
    // `n` READs of `count` bytes at offset 0, each framed, back to back.
    static Bytes PipelinedReads(const Bytes& fh, uint32_t n, uint32_t count) {
        Bytes all;
        for (uint32_t i = 0; i < n; ++i) {
            Bytes args = wire::XdrOut().opaque(fh).u64(0).u32(count).take();
            Bytes one =
                wire::Frame(wire::EncodeCall(wire::RootCall(1000 + i, kNfs, 3, kNfsRead, args)));
            all.insert(all.end(), one.begin(), one.end());
        }
        return all;
    }
    uint64_t Stat(const std::string& group, const std::string& name) {
        return daemon_->StatsCounter(group, name).value_or(0);
    }

    std::string yaml_;
    unsigned long max_open_files_ = 0;
};

// ---- a record mark alone ------------------------------------------------------------------------

class RecordMarkMemoryTest : public TcpLimitsTest {
  protected:
    RecordMarkMemoryTest() { yaml_ = "listeners: {max_record_size: 67108864}"; }
};

TEST_F(RecordMarkMemoryTest, MarksClaimingHugeRecordsReserveNothing) {
    constexpr int kConns = 16;
    ASSERT_TRUE(NullOnNewConnection(1));  // the daemon has served once: its pools exist
    const pid_t pid = daemon_->pid();
    const long size0 = AccessibleKiB(pid), rss0 = StatusKiB(pid, "VmRSS");
    ASSERT_GT(size0, 0);
    const uint64_t in0 = Stat("tcp", "bytes_in");

    // Each connection claims the largest allowed record (64 MiB), sends 100 bytes of it and
    // stalls; one more claims 2 GiB, which is over the limit and closes its connection.
    std::vector<std::unique_ptr<Conn>> conns;
    for (int i = 0; i < kConns; ++i) {
        auto c = Open();
        ASSERT_TRUE(c);
        Bytes b = wire::RecordMark(64u << 20, true);
        b.resize(b.size() + 100, 0xab);
        ASSERT_TRUE(c->Send(b, nullptr));
        conns.push_back(std::move(c));
    }
    {
        auto c = Open();
        ASSERT_TRUE(c);
        c->Send(wire::RecordMark(0x7fffffffu, true), nullptr);
        EXPECT_TRUE(c->WaitForClose(5000)) << "a 2 GiB record is over the limit";
    }
    // Wait until the daemon has read every byte we sent.
    ASSERT_TRUE(WaitFor([&] { return Stat("tcp", "bytes_in") >= in0 + kConns * 104u + 4; },
                        std::chrono::seconds(10)));
    const long size1 = AccessibleKiB(pid), rss1 = StatusKiB(pid, "VmRSS");
    RecordProperty("accessible_growth_kib", std::to_string(size1 - size0));
    RecordProperty("vmrss_growth_kib", std::to_string(rss1 - rss0));
    // Before: 16 x 64 MiB reserved (1 GiB of address space). Now a first chunk each.
    EXPECT_LT(size1 - size0, 64 * 1024)
        << "accessible address space grew by " << (size1 - size0) << " KiB";
    EXPECT_LT(rss1 - rss0, 16 * 1024) << "VmRSS grew by " << (rss1 - rss0) << " KiB";
    for (int i = 0; i < 3; ++i) EXPECT_TRUE(NullOnNewConnection(10 + i));
}

// ---- connection cap -----------------------------------------------------------------------------

class MaxConnectionsTest : public TcpLimitsTest {
  protected:
    MaxConnectionsTest() { yaml_ = "tcp: {max_connections: 8}"; }
};

TEST_F(MaxConnectionsTest, ConnectionsOverTheCapAreClosedAndTheDaemonStillServes) {
    std::vector<std::unique_ptr<Conn>> held;
    for (uint32_t i = 0; i < 8; ++i) {
        auto c = Open();
        ASSERT_TRUE(c);
        ASSERT_TRUE(Null(*c, 100 + i)) << "connection " << i << " is within the cap";
        held.push_back(std::move(c));
    }
    for (int i = 0; i < 5; ++i) {
        auto c = Open();
        ASSERT_TRUE(c);
        EXPECT_TRUE(c->WaitForClose(5000)) << "connection " << 8 + i << " is over the cap";
    }
    EXPECT_EQ(Stat("tcp", "rejected"), 5u);
    // The held connections are still served.
    for (uint32_t i = 0; i < 8; ++i) EXPECT_TRUE(Null(*held[i], 200 + i));
    // Freeing one slot lets a new client in.
    held.pop_back();
    EXPECT_TRUE(WaitFor([&] { return NullOnNewConnection(300); }, std::chrono::seconds(5)));
    EXPECT_LE(CountLines(daemon_->log_path(), "tcp.max_connections"), 1u)
        << "the rejections are logged once per interval";
}

// ---- idle timeout -------------------------------------------------------------------------------

class IdleTimeoutTest : public TcpLimitsTest {
  protected:
    IdleTimeoutTest() { yaml_ = "tcp: {idle_timeout: 1}"; }
};

TEST_F(IdleTimeoutTest, IdleConnectionsAreClosedBusyOnesAreNot) {
    auto served = Open();
    ASSERT_TRUE(served);
    ASSERT_TRUE(Null(*served, 1));
    auto stalled = Open();  // halfway through a record
    ASSERT_TRUE(stalled);
    Bytes partial = wire::RecordMark(100, true);
    partial.resize(partial.size() + 20, 0);
    ASSERT_TRUE(stalled->Send(partial, nullptr));
    // Before the silent connection is accepted: it cannot be closed earlier than an idle
    // timeout after that, so the last close comes at least that long after t0.
    auto t0 = Clock::now();
    auto silent = Open();  // never sends anything
    ASSERT_TRUE(silent);

    EXPECT_TRUE(served->WaitForClose(10000)) << "idle after a reply";
    EXPECT_TRUE(stalled->WaitForClose(10000)) << "no complete call";
    EXPECT_TRUE(silent->WaitForClose(10000)) << "never sent a call";
    EXPECT_GE(Clock::now() - t0, std::chrono::milliseconds(900));
    EXPECT_GE(Stat("tcp", "idle_closed"), 3u);

    // Replies waiting for a client that does not read count as activity: pipelined 1 MiB
    // READs, left unread for over two idle timeouts, all arrive.
    constexpr uint32_t kMiB = 1u << 20, kCalls = 40;
    ASSERT_TRUE(WriteFile(disk("big.bin"), Pattern(kMiB, 5)));
    Bytes fh;
    ASSERT_NO_FATAL_FAILURE(LookupRaw("big.bin", &fh));
    auto c = Open();
    ASSERT_TRUE(c);
    ASSERT_TRUE(c->Send(PipelinedReads(fh, kCalls, kMiB), nullptr));
    // The daemon cannot send them all: the socket is full until we read. No condition to
    // wait on here: the point is that nothing happens for longer than the timeout.
    std::this_thread::sleep_for(std::chrono::milliseconds(2500));
    for (uint32_t i = 0; i < kCalls; ++i) {
        Bytes rec;
        std::string why;
        ASSERT_EQ(c->RecvRecord(&rec, 10000, &why), Conn::Recv::kOk)
            << "reply " << i << ": " << why;
        EXPECT_GT(rec.size(), kMiB);
    }
}

// ---- out of descriptors -------------------------------------------------------------------------

class OutOfDescriptorsTest : public TcpLimitsTest {
  protected:
    OutOfDescriptorsTest() { max_open_files_ = 96; }
};

TEST_F(OutOfDescriptorsTest, AcceptFailingForLackOfDescriptorsDoesNotSpin) {
    // More connections than the daemon has descriptors: the rest wait in the backlog and
    // accept() fails with EMFILE while they do.
    std::vector<std::unique_ptr<Conn>> conns;
    for (int i = 0; i < 150; ++i) {
        auto c = Open();
        ASSERT_TRUE(c);
        conns.push_back(std::move(c));
    }
    const pid_t pid = daemon_->pid();
    ASSERT_TRUE(WaitFor([&] { return CountLines(daemon_->log_path(), "tcp: accept:") > 0; },
                        std::chrono::seconds(5)))
        << "the daemon must run out of descriptors for this test to mean anything";
    const long cpu0 = CpuTicks(pid);
    const auto t0 = Clock::now();
    // A measurement window: CPU time used while nothing but the backlog happens.
    std::this_thread::sleep_for(std::chrono::seconds(2));
    const long cpu1 = CpuTicks(pid);
    const double secs = std::chrono::duration<double>(Clock::now() - t0).count();
    const double ticks_per_s = static_cast<double>(sysconf(_SC_CLK_TCK));
    const double used = (cpu1 - cpu0) / ticks_per_s;
    RecordProperty("cpu_seconds", std::to_string(used));
    EXPECT_LT(used, 0.2 * secs) << "the daemon used " << used << " s of CPU in " << secs
                                << " s with a full backlog";
    EXPECT_LE(CountLines(daemon_->log_path(), "tcp: accept:"), 2u)
        << "accept failures are logged once per interval";
    // Once clients go away, the waiting ones are accepted and served.
    conns.clear();
    EXPECT_TRUE(WaitFor([&] { return NullOnNewConnection(1); }, std::chrono::seconds(10)));
}

// ---- pipes for spliced READ data ----------------------------------------------------------------

class PipeBoundTest : public TcpLimitsTest {
  protected:
    PipeBoundTest() { yaml_ = "tcp: {max_pipes: 4}"; }
};

TEST_F(PipeBoundTest, QueuedReadsHoldAtMostMaxPipes) {
    constexpr uint32_t kMiB = 1u << 20, kCalls = 20, kConns = 3;
    const std::string data = Pattern(kMiB, 77);
    ASSERT_TRUE(WriteFile(disk("big.bin"), data));
    Bytes fh;
    ASSERT_NO_FATAL_FAILURE(LookupRaw("big.bin", &fh));
    const pid_t pid = daemon_->pid();
    const size_t base = PipeFds(pid);
    const uint64_t calls0 = Stat("rpc", "calls");

    // Pipelined READs nobody reads yet: their replies queue up in the daemon.
    std::vector<std::unique_ptr<Conn>> conns;
    for (uint32_t i = 0; i < kConns; ++i) {
        auto c = Open();
        ASSERT_TRUE(c);
        ASSERT_TRUE(c->Send(PipelinedReads(fh, kCalls, kMiB), nullptr));
        conns.push_back(std::move(c));
    }
    ASSERT_TRUE(WaitFor([&] { return Stat("rpc", "calls") >= calls0 + kConns * kCalls; },
                        std::chrono::seconds(20)));
    // Every call has started; watch the descriptors while the replies wait.
    size_t most = 0;
    WaitFor(
        [&] {
            most = std::max(most, PipeFds(pid));
            return false;
        },
        std::chrono::milliseconds(500));
    RecordProperty("most_pipe_fds", std::to_string(most));
    EXPECT_LE(most, base + 2 * 4) << "two descriptors per pipe, at most tcp.max_pipes pipes";

    // Every reply arrives, with the file's bytes, spliced or copied.
    for (auto& c : conns) {
        for (uint32_t i = 0; i < kCalls; ++i) {
            Bytes rec;
            std::string why;
            ASSERT_EQ(c->RecvRecord(&rec, 20000, &why), Conn::Recv::kOk) << why;
            ASSERT_GT(rec.size(), kMiB);
            // The data is the last 1 MiB before the reply's end (no padding: 1 MiB is aligned).
            EXPECT_EQ(std::memcmp(data.data(), rec.data() + rec.size() - kMiB, kMiB), 0)
                << "READ data of reply " << i;
        }
    }
}

}  // namespace
}  // namespace nfsrdmad::e2e
