// Calls answered on a thread that must not block (rpc::Dispatcher::dispatch_nowait, the
// RDMA reactor's): which calls are tried, that one which would block leaves nothing done
// or counted for the worker that runs it next, and NFSv3 GETATTR, ACCESS and READ from
// what the descriptor and page caches hold, and LOOKUP from the dentry cache.
#include <fcntl.h>
#include <ftw.h>
#include <gtest/gtest.h>
#include <netinet/in.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cstring>

#include "nfs/v3/nfs3_program.h"
#include "nfs/vfs/export.h"
#include "nfs/vfs/fd_cache.h"
#include "nfs/vfs/handle.h"
#include "nfs/vfs/secret.h"
#include "transport/rpc/dispatcher.h"
#include "xdr/rpc_prot.h"

using namespace nfsrdmad;
namespace x = xdr::rpc;

namespace {

void put(std::vector<uint8_t>& b, uint32_t w) {
    for (int s = 24; s >= 0; s -= 8) b.push_back(uint8_t(w >> s));
}

void put_opaque(std::vector<uint8_t>& b, std::span<const uint8_t> data) {
    put(b, uint32_t(data.size()));
    b.insert(b.end(), data.begin(), data.end());
    while (b.size() % 4) b.push_back(0);
}

// A call with an AUTH_SYS credential for uid/gid 1000 (flavor 1), or `flavor` with an
// empty body; the arguments follow.
std::vector<uint8_t> call(uint32_t xid, uint32_t prog, uint32_t vers, uint32_t proc,
                          const std::vector<uint8_t>& args, uint32_t flavor = 1) {
    std::vector<uint8_t> b;
    for (uint32_t w : {xid, 0u, 2u, prog, vers, proc, flavor}) put(b, w);
    if (flavor == 1) {
        put(b, 20);
        for (uint32_t w : {0u, 0u, 1000u, 1000u, 0u}) put(b, w);  // stamp, "", uid, gid, gids
    } else {
        put(b, 0);
    }
    put(b, 0);  // verifier: AUTH_NONE
    put(b, 0);
    b.insert(b.end(), args.begin(), args.end());
    return b;
}

uint32_t word_at(const std::vector<uint8_t>& b, size_t off) {
    return uint32_t(b.at(off)) << 24 | uint32_t(b.at(off + 1)) << 16 |
           uint32_t(b.at(off + 2)) << 8 | b.at(off + 3);
}

// accept_stat of an accepted reply with an AUTH_NONE verifier.
uint32_t accept_stat(const rpc::Reply& r) {
    return word_at(r.bytes, 20);
}

class HeapBuffer : public rpc::PayloadBuffer {
  public:
    HeapBuffer(size_t n, int pipe) : bytes_(n), pipe_(pipe) {}
    uint8_t* data() override { return bytes_.data(); }
    size_t capacity() const override { return bytes_.size(); }
    int splice_fd() override { return pipe_; }

  private:
    std::vector<uint8_t> bytes_;
    int pipe_;
};

class HeapAlloc : public rpc::PayloadAllocator {
  public:
    std::unique_ptr<rpc::PayloadBuffer> allocate(size_t bytes) override {
        if (none) return nullptr;
        return std::make_unique<HeapBuffer>(bytes, pipe);
    }
    int pipe = -1;      // >= 0: buffers offer a pipe to splice into (as TCP's)
    bool none = false;  // none free (RDMA's registered pool, all in flight)
};

// Program 400200: proc 0 answers at once, proc 1 would block in a nowait call, proc 2 is
// not idempotent, proc 3 does not honour nowait, proc 4 answers WouldBlock always, proc 5
// declines a nowait call before any work (Outcome::would_block(false)).
class Program : public rpc::Program {
  public:
    uint32_t number() const override { return 400200; }
    std::vector<uint32_t> versions() const override { return {1}; }
    rpc::ProcedureInfo procedure(uint32_t, uint32_t proc) const override {
        rpc::ProcedureInfo i{proc <= 5, proc != 2, "p"};
        i.nowait = proc != 3;
        return i;
    }
    rpc::Outcome call(rpc::CallContext& ctx) override {
        ++calls;
        if (ctx.nowait) ++nowait_calls;
        if ((ctx.header.proc == 1 && ctx.nowait) || ctx.header.proc == 4)
            return rpc::Outcome::would_block();
        if (ctx.header.proc == 5 && ctx.nowait) return rpc::Outcome::would_block(false);
        ctx.res.put_u32(7);
        return rpc::Outcome::ok();
    }
    int calls = 0, nowait_calls = 0;
};

struct Dispatch : ::testing::Test {
    Dispatch() {
        prog = std::make_shared<Program>();
        d.add(prog);
        peer.text = "192.0.2.1:800";
    }
    bool nowait(uint32_t proc, std::optional<rpc::Reply>& out, uint32_t flavor = 1) {
        auto bytes = call(++xid, 400200, 1, proc, {}, flavor);
        rpc::Message m;
        m.bytes = bytes;
        return d.dispatch_nowait(m, peer, alloc, out);
    }
    std::optional<rpc::Reply> normal(uint32_t proc) {
        auto bytes = call(++xid, 400200, 1, proc, {});
        rpc::Message m;
        m.bytes = bytes;
        return d.dispatch(m, peer, alloc);
    }
    uint64_t recorded() {
        uint64_t n = 0;
        for (const auto& s : d.registry().stats())
            for (const auto& op : s->snapshot().ops) n += op.calls;
        return n;
    }
    std::shared_ptr<Program> prog;
    rpc::Dispatcher d;
    rpc::Peer peer;
    HeapAlloc alloc;
    uint32_t xid = 0;
};

}  // namespace

TEST_F(Dispatch, ACallThatNeedsNothingIsAnsweredAndCounted) {
    std::optional<rpc::Reply> r;
    ASSERT_TRUE(nowait(0, r));
    ASSERT_TRUE(r);
    EXPECT_EQ(accept_stat(*r), uint32_t(x::SUCCESS));
    EXPECT_EQ(word_at(r->bytes, 24), 7u);
    EXPECT_EQ(prog->nowait_calls, 1);
    EXPECT_EQ(d.counters().calls.load(), 1u);
    EXPECT_EQ(d.counters().nowait_answered.load(), 1u);
    EXPECT_EQ(recorded(), 1u);
}

TEST_F(Dispatch, ACallThatWouldBlockLeavesNothingDoneOrCounted) {
    std::optional<rpc::Reply> r;
    EXPECT_FALSE(nowait(1, r));
    EXPECT_FALSE(r);
    EXPECT_EQ(prog->nowait_calls, 1);
    EXPECT_EQ(d.counters().calls.load(), 0u);
    EXPECT_EQ(d.counters().nowait_given_up.load(), 1u);
    EXPECT_EQ(recorded(), 0u);
    // The worker's run of it then counts it once.
    auto w = normal(1);
    ASSERT_TRUE(w);
    EXPECT_EQ(word_at(w->bytes, 24), 7u);
    EXPECT_EQ(d.counters().calls.load(), 1u);
    EXPECT_EQ(recorded(), 1u);
}

TEST_F(Dispatch, OnlyIdempotentProceduresThatSaySoAreTried) {
    std::optional<rpc::Reply> r;
    EXPECT_FALSE(nowait(2, r));  // not idempotent: the duplicate request cache is a worker's
    EXPECT_FALSE(nowait(3, r));  // does not honour nowait
    EXPECT_EQ(prog->calls, 0);
    EXPECT_EQ(d.counters().calls.load(), 0u);
    EXPECT_EQ(d.counters().nowait_given_up.load(), 0u);  // never begun
    EXPECT_EQ(d.counters().nowait_declined.load(), 2u);
}

TEST_F(Dispatch, ACallDeclinedBeforeAnyWorkIsCountedApart) {
    std::optional<rpc::Reply> r;
    EXPECT_FALSE(nowait(5, r));
    EXPECT_FALSE(r);
    EXPECT_EQ(prog->nowait_calls, 1);
    EXPECT_EQ(d.counters().calls.load(), 0u);
    EXPECT_EQ(d.counters().nowait_given_up.load(), 0u);
    EXPECT_EQ(d.counters().nowait_declined.load(), 1u);
    EXPECT_EQ(recorded(), 0u);
    auto w = normal(5);
    ASSERT_TRUE(w);
    EXPECT_EQ(word_at(w->bytes, 24), 7u);
    EXPECT_EQ(d.counters().calls.load(), 1u);
}

TEST_F(Dispatch, OnlyStatelessFlavorsAreTried) {
    std::optional<rpc::Reply> r;
    EXPECT_TRUE(nowait(0, r, 0));   // AUTH_NONE
    EXPECT_FALSE(nowait(0, r, 6));  // RPCSEC_GSS: left before its auth stage runs
    EXPECT_EQ(prog->calls, 1);
    EXPECT_EQ(d.counters().auth_errors.load(), 0u);
}

TEST_F(Dispatch, WouldBlockOutsideANowaitCallIsASystemError) {
    auto r = normal(4);
    ASSERT_TRUE(r);
    EXPECT_EQ(accept_stat(*r), uint32_t(x::SYSTEM_ERR));
    EXPECT_EQ(d.counters().system_errors.load(), 1u);
}

TEST_F(Dispatch, ACallOfNoProcedureToTryGoesToAWorker) {
    std::optional<rpc::Reply> r;
    auto bytes = call(9, 400201, 1, 0, {});  // no such program: a worker answers PROG_UNAVAIL
    rpc::Message m;
    m.bytes = bytes;
    EXPECT_FALSE(d.dispatch_nowait(m, peer, alloc, r));
    EXPECT_FALSE(nowait(7, r));  // no such procedure
    EXPECT_EQ(d.counters().calls.load(), 0u);
    EXPECT_EQ(d.counters().prog_unavail.load(), 0u);
}

namespace {

constexpr uint32_t kNfs = 100003;
constexpr uint32_t kGetattr = 1, kLookup = 3, kAccess = 4, kRead = 6;
constexpr size_t kFileSize = 64 << 10;

// NFSv3 over an export in a temporary directory on the test's file system, which must be a
// local one (Export::local): the test says so loudly otherwise.
struct Nfs3 : ::testing::Test {
    Nfs3() {
        char tmpl[] = "/var/tmp/nfsrdmad_nowait.XXXXXX";
        if (!::mkdtemp(tmpl)) throw std::runtime_error("mkdtemp");
        base = tmpl;
        ::mkdir((base + "/export").c_str(), 0777);
        ::chmod((base + "/export").c_str(), 0777);
        ::mkdir((base + "/state").c_str(), 0700);
        const std::string file = base + "/export/file";
        int fd = ::open(file.c_str(), O_CREAT | O_WRONLY, 0644);
        std::vector<uint8_t> data(kFileSize);
        for (size_t i = 0; i < data.size(); ++i) data[i] = uint8_t(i * 7);
        EXPECT_EQ(::write(fd, data.data(), data.size()), ssize_t(data.size()));
        ::fsync(fd);
        ::close(fd);
        std::string why;
        auto key = vfs::load_or_create_handle_key(base + "/state", &why);
        if (!key) throw std::runtime_error(why);
        vfs::ClientRule rule;
        rule.read_write = true;
        rule.secure = false;
        auto table =
            vfs::ExportTable::create({vfs::ExportSpec{base + "/export", 0, {rule}}}, *key, &why);
        if (!table) throw std::runtime_error(why);
        local = (*table)->exports().at(0)->local();
        registry = std::make_shared<vfs::ExportRegistry>(*table);
        files = std::make_shared<vfs::FdCache>();
        v3 = std::make_shared<nfs::v3::Nfs3Program>(registry, files);
        d.add(v3);
        peer.text = "127.0.0.1:700";
        peer.addr.ss_family = AF_INET;
        auto* in = reinterpret_cast<sockaddr_in*>(&peer.addr);
        in->sin_port = htons(700);
        in->sin_addr.s_addr = htonl(INADDR_LOOPBACK);
        peer.len = sizeof(sockaddr_in);
    }
    ~Nfs3() override {
        ::nftw(
            base.c_str(), [](const char* p, const struct stat*, int, FTW*) { return ::remove(p); },
            16, FTW_DEPTH | FTW_PHYS);
    }
    std::vector<uint8_t> handle(const std::string& name) {
        int fd = ::open((base + "/export/" + name).c_str(), O_RDONLY | O_CLOEXEC);
        auto kernel = vfs::kernel_handle_of(fd);
        ::close(fd);
        if (!kernel) throw std::runtime_error("no handle");
        auto h = registry->snapshot()->exports().at(0)->encode(*kernel);
        return {h.data().begin(), h.data().end()};
    }
    std::vector<uint8_t> fh_args(const std::string& name) {
        std::vector<uint8_t> a;
        put_opaque(a, handle(name));
        return a;
    }
    std::vector<uint8_t> lookup_args(const std::string& dir, const std::string& name) {
        auto a = fh_args(dir);
        put_opaque(a, {reinterpret_cast<const uint8_t*>(name.data()), name.size()});
        return a;
    }
    std::vector<uint8_t> read_args(const std::string& name, uint64_t offset, uint32_t count) {
        auto a = fh_args(name);
        put(a, uint32_t(offset >> 32));
        put(a, uint32_t(offset));
        put(a, count);
        return a;
    }
    // nowait: true when answered; `out` the reply. Otherwise the call as a worker runs it.
    bool run(uint32_t proc, const std::vector<uint8_t>& args, bool nowait,
             std::optional<rpc::Reply>& out) {
        auto bytes = call(++xid, kNfs, 3, proc, args);
        rpc::Message m;
        m.bytes = bytes;
        if (nowait) return d.dispatch_nowait(m, peer, alloc, out, payloads);
        out = d.dispatch(m, peer, alloc);
        return true;
    }
    static uint32_t nfsstat(const rpc::Reply& r) { return word_at(r.bytes, 24); }

    std::string base;
    bool local = false;
    std::shared_ptr<vfs::ExportRegistry> registry;
    std::shared_ptr<vfs::FdCache> files;
    std::shared_ptr<nfs::v3::Nfs3Program> v3;
    rpc::Dispatcher d;
    rpc::Peer peer;
    HeapAlloc alloc;
    bool payloads = true;  // dispatch_nowait's: the transport lends payload buffers
    uint32_t xid = 0;
};

}  // namespace

TEST_F(Nfs3, TheTestExportIsOnALocalFileSystem) {
    // Every test below needs it; /var/tmp on tmpfs, ext4, XFS or btrfs.
    ASSERT_TRUE(local) << base << " is not on a local file system (Export::local)";
}

TEST_F(Nfs3, GetattrOfADirectoryTheCacheHoldsIsAnsweredInPlace) {
    ASSERT_TRUE(local);
    std::optional<rpc::Reply> r;
    // Never resolved: it would have to be opened, which is a worker's job.
    EXPECT_FALSE(run(kGetattr, fh_args("."), true, r));
    EXPECT_EQ(d.counters().calls.load(), 0u);
    ASSERT_TRUE(run(kGetattr, fh_args("."), false, r));  // a worker's: now it is kept
    ASSERT_TRUE(r);
    const std::vector<uint8_t> worker(r->bytes.begin() + 24, r->bytes.end());
    ASSERT_TRUE(run(kGetattr, fh_args("."), true, r));
    ASSERT_TRUE(r);
    EXPECT_EQ(nfsstat(*r), 0u);
    EXPECT_EQ(word_at(r->bytes, 28), 2u);  // NF3DIR
    // The same attributes a worker answered (the directory did not change in between).
    EXPECT_EQ(std::vector<uint8_t>(r->bytes.begin() + 24, r->bytes.end()), worker);
    EXPECT_EQ(d.counters().calls.load(), 2u);
}

TEST_F(Nfs3, GetattrOfAFileNobodyOpenedGoesToAWorker) {
    ASSERT_TRUE(local);
    std::optional<rpc::Reply> r;
    EXPECT_FALSE(run(kGetattr, fh_args("file"), true, r));
    // A GETATTR does not keep a regular file open (fd_cache.h): still a worker's.
    ASSERT_TRUE(run(kGetattr, fh_args("file"), false, r));
    EXPECT_FALSE(run(kGetattr, fh_args("file"), true, r));
    // Once a READ has it open, GETATTR shares that descriptor.
    ASSERT_TRUE(run(kRead, read_args("file", 0, 16), false, r));
    ASSERT_TRUE(run(kGetattr, fh_args("file"), true, r));
    EXPECT_EQ(nfsstat(*r), 0u);
    EXPECT_EQ(word_at(r->bytes, 28), 1u);  // NF3REG
}

TEST_F(Nfs3, AccessIsAnsweredFromTheModeInPlace) {
    ASSERT_TRUE(local);
    std::optional<rpc::Reply> r;
    auto args = fh_args(".");
    put(args, 0x3f);
    ASSERT_TRUE(run(kAccess, args, false, r));
    ASSERT_TRUE(r);
    const std::vector<uint8_t> worker(r->bytes.begin() + 24, r->bytes.end());
    ASSERT_TRUE(run(kAccess, args, true, r));
    EXPECT_EQ(std::vector<uint8_t>(r->bytes.begin() + 24, r->bytes.end()), worker);
}

TEST_F(Nfs3, ReadComesFromThePageCacheOrFromAWorker) {
    ASSERT_TRUE(local);
    std::optional<rpc::Reply> r;
    EXPECT_FALSE(run(kRead, read_args("file", 0, 4096), true, r));  // not open yet
    ASSERT_TRUE(run(kRead, read_args("file", 0, 4096), false, r));
    ASSERT_TRUE(r);
    ASSERT_EQ(r->payloads.size(), 1u);
    const std::vector<uint8_t> worker(r->payloads[0].data.begin(), r->payloads[0].data.end());

    ASSERT_TRUE(run(kRead, read_args("file", 0, 4096), true, r));
    ASSERT_TRUE(r);
    EXPECT_EQ(nfsstat(*r), 0u);
    ASSERT_EQ(r->payloads.size(), 1u);
    EXPECT_EQ(std::vector<uint8_t>(r->payloads[0].data.begin(), r->payloads[0].data.end()), worker);
    // A read through the end of the file says so, as a worker's does.
    ASSERT_TRUE(run(kRead, read_args("file", kFileSize - 100, 4096), true, r));
    ASSERT_EQ(r->payloads.size(), 1u);
    EXPECT_EQ(r->payloads[0].data.size(), 100u);

    // Out of the page cache (clean pages, dropped): the read would wait for the disk.
    const std::string path = base + "/export/file";
    int fd = ::open(path.c_str(), O_RDONLY);
    ASSERT_EQ(::posix_fadvise(fd, 0, 0, POSIX_FADV_DONTNEED), 0);
    void* map = ::mmap(nullptr, kFileSize, PROT_READ, MAP_SHARED, fd, 0);
    ASSERT_NE(map, MAP_FAILED);
    unsigned char resident[kFileSize / 4096] = {};
    ASSERT_EQ(::mincore(map, kFileSize, resident), 0);
    ::munmap(map, kFileSize);
    ::close(fd);
    ASSERT_EQ(resident[4], 0) << "the page cache kept " << path << ": cannot test this here";
    const uint64_t calls = d.counters().calls.load();
    EXPECT_FALSE(run(kRead, read_args("file", 4 * 4096, 4096), true, r));
    EXPECT_EQ(d.counters().calls.load(), calls);
    ASSERT_TRUE(run(kRead, read_args("file", 4 * 4096, 4096), false, r));
    EXPECT_EQ(nfsstat(*r), 0u);
}

TEST_F(Nfs3, AReadATransportWouldSpliceGoesToAWorker) {
    ASSERT_TRUE(local);
    std::optional<rpc::Reply> r;
    ASSERT_TRUE(run(kRead, read_args("file", 0, 4096), false, r));
    int pipe_fds[2];
    ASSERT_EQ(::pipe(pipe_fds), 0);
    alloc.pipe = pipe_fds[1];  // never written to by a nowait call
    EXPECT_FALSE(run(kRead, read_args("file", 0, 4096), true, r));
    ::close(pipe_fds[0]);
    ::close(pipe_fds[1]);
}

TEST_F(Nfs3, AReadThatFindsNoPayloadBufferGoesToAWorker) {
    // The worker may wait a little for one; nowait, it is not answered NFS3ERR_JUKEBOX.
    ASSERT_TRUE(local);
    std::optional<rpc::Reply> r;
    ASSERT_TRUE(run(kRead, read_args("file", 0, 4096), false, r));
    alloc.none = true;
    EXPECT_FALSE(run(kRead, read_args("file", 0, 4096), true, r));
    EXPECT_EQ(d.counters().calls.load(), 1u);
}

TEST_F(Nfs3, ALargeReadIsAWorkersEvenFromThePageCache) {
    // The copy would run on the reactor, in the way of other connections (vfs/io.h).
    ASSERT_TRUE(local);
    std::optional<rpc::Reply> r;
    ASSERT_TRUE(run(kRead, read_args("file", 0, 4096), false, r));
    ASSERT_TRUE(run(kRead, read_args("file", 0, 64 << 10), true, r));
    ASSERT_EQ(r->payloads.size(), 1u);
    EXPECT_EQ(r->payloads[0].data.size(), size_t(64 << 10));
    EXPECT_FALSE(run(kRead, read_args("file", 0, (64 << 10) + 1), true, r));
    // Said from the arguments, before the handle is looked at: nothing is done twice.
    EXPECT_EQ(d.counters().nowait_declined.load(), 1u);
    EXPECT_EQ(d.counters().nowait_given_up.load(), 0u);
}

TEST_F(Nfs3, LookupOfANameTheKernelKnowsIsAnsweredInPlace) {
    ASSERT_TRUE(local);
    std::optional<rpc::Reply> r;
    // The directory is not held yet: a worker's (resolve would open it).
    EXPECT_FALSE(run(kLookup, lookup_args(".", "file"), true, r));
    EXPECT_EQ(d.counters().nowait_given_up.load(), 1u);
    ASSERT_TRUE(run(kLookup, lookup_args(".", "file"), false, r));  // now it is kept
    ASSERT_TRUE(r);
    EXPECT_EQ(nfsstat(*r), 0u);
    const std::vector<uint8_t> worker(r->bytes.begin() + 24, r->bytes.end());
    ASSERT_TRUE(run(kLookup, lookup_args(".", "file"), true, r));
    ASSERT_TRUE(r);
    // The same handle and attributes a worker answered.
    EXPECT_EQ(std::vector<uint8_t>(r->bytes.begin() + 24, r->bytes.end()), worker);
    // A name the worker found absent: the kernel remembers, the reactor answers.
    ASSERT_TRUE(run(kLookup, lookup_args(".", "absent"), false, r));
    EXPECT_EQ(nfsstat(*r), 2u);  // NFS3ERR_NOENT
    ASSERT_TRUE(run(kLookup, lookup_args(".", "absent"), true, r));
    EXPECT_EQ(nfsstat(*r), 2u);
    // One the kernel never saw would be read from the directory: a worker's.
    EXPECT_FALSE(run(kLookup, lookup_args(".", "never-named"), true, r));
    EXPECT_EQ(d.counters().nowait_given_up.load(), 2u);
    // ".." must be checked against the export's edge: declined before any work.
    EXPECT_FALSE(run(kLookup, lookup_args(".", ".."), true, r));
    EXPECT_EQ(d.counters().nowait_declined.load(), 1u);
}

TEST_F(Nfs3, LookupWithoutSearchPermissionIsRefusedInPlace) {
    // uid 1000 (the calls' AUTH_SYS) may not search a root-owned 0700 directory.
    ASSERT_TRUE(local);
    ASSERT_EQ(::mkdir((base + "/export/private").c_str(), 0700), 0);
    std::optional<rpc::Reply> r;
    ASSERT_TRUE(run(kLookup, lookup_args("private", "x"), false, r));
    EXPECT_EQ(nfsstat(*r), 13u);  // NFS3ERR_ACCES
    const std::vector<uint8_t> worker(r->bytes.begin() + 24, r->bytes.end());
    ASSERT_TRUE(run(kLookup, lookup_args("private", "x"), true, r));
    EXPECT_EQ(std::vector<uint8_t>(r->bytes.begin() + 24, r->bytes.end()), worker);
}

namespace {
// NFSv4.1's delegations as NFSv3 sees them: a read or a write delegation of one file.
class FakeDelegations : public nfs::DelegationBreaker {
  public:
    bool any() const override { return held.size != 0; }
    bool conflict(const vfs::FileHandle& file, bool write) override {
        ++conflicts;
        return file == held && (write || write_held);
    }
    bool write_delegated(const vfs::FileHandle& file) const override {
        return write_held && file == held;
    }
    HeldAttrs held_attrs(const vfs::FileHandle& file) override {
        ++asked;
        return {write_delegated(file), std::nullopt};
    }
    vfs::FileHandle held;
    bool write_held = false;
    int conflicts = 0, asked = 0;
};
}  // namespace

TEST_F(Nfs3, OnlyAWriteDelegationSendsReadsAndGetattrsToAWorker) {
    // RFC 8881 §10.4.1: a read delegation conflicts with neither; a write delegation's
    // recall or CB_GETATTR (§10.4.3) is a worker's to start.
    ASSERT_TRUE(local);
    auto fake = std::make_shared<FakeDelegations>();
    const auto h = handle("file");
    fake->held = vfs::FileHandle::from(h).value();
    v3->set_delegations(fake);
    std::optional<rpc::Reply> r;
    ASSERT_TRUE(run(kRead, read_args("file", 0, 4096), false, r));  // now held open
    ASSERT_TRUE(run(kRead, read_args("file", 0, 4096), true, r));
    EXPECT_EQ(nfsstat(*r), 0u);
    ASSERT_TRUE(run(kGetattr, fh_args("file"), true, r));
    EXPECT_EQ(nfsstat(*r), 0u);
    fake->write_held = true;
    const int conflicts = fake->conflicts, asked = fake->asked;
    EXPECT_FALSE(run(kRead, read_args("file", 0, 4096), true, r));
    EXPECT_FALSE(run(kGetattr, fh_args("file"), true, r));
    EXPECT_EQ(fake->conflicts, conflicts);  // no recall started on the reactor
    EXPECT_EQ(fake->asked, asked);
    // Nor a LOOKUP that finds it (a worker's LOOKUP recalls: lookup's attributes).
    ASSERT_TRUE(run(kLookup, lookup_args(".", "file"), false, r));
    const int recalls = fake->conflicts;
    EXPECT_FALSE(run(kLookup, lookup_args(".", "file"), true, r));
    EXPECT_EQ(fake->conflicts, recalls);
    // Another file is not in the way.
    ASSERT_TRUE(run(kGetattr, fh_args("."), false, r));
    EXPECT_TRUE(run(kGetattr, fh_args("."), true, r));
    // The worker's run meets the delegation: JUKEBOX while it is recalled.
    ASSERT_TRUE(run(kRead, read_args("file", 0, 4096), false, r));
    EXPECT_EQ(nfsstat(*r), 10008u);  // NFS3ERR_JUKEBOX
}

TEST_F(Nfs3, ATransportThatLendsNoBuffersLeavesReadsToWorkers) {
    // TCP: its workers splice READ data; GETATTR is still answered in place.
    ASSERT_TRUE(local);
    std::optional<rpc::Reply> r;
    ASSERT_TRUE(run(kRead, read_args("file", 0, 4096), false, r));
    payloads = false;
    EXPECT_FALSE(run(kRead, read_args("file", 0, 4096), true, r));
    EXPECT_TRUE(run(kGetattr, fh_args("file"), true, r));
}
