// Calls answered on a thread that must not block (rpc::Dispatcher::dispatch_nowait, the
// RDMA reactor's): which calls are tried, that one which would block leaves nothing done
// or counted for the worker that runs it next, and NFSv3 GETATTR, ACCESS and READ from
// what the descriptor and page caches hold, and LOOKUP from the dentry cache.
#include <sys/mman.h>
#include <unistd.h>

#include <cstring>

#include "tests/unit/nfs3_calls_util.h"
#include "xdr/rpc_prot.h"

using namespace nfsrdmad;
using namespace nfsrdmad::testing;
namespace x = xdr::rpc;

namespace {

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

struct Dispatch : OneProgram<Program> {
    // `left`: dispatch_nowait's.
    bool nowait(uint32_t proc, std::optional<rpc::Reply>& out, uint32_t flavor = 1,
                std::optional<rpc::DecodedCall>* left = nullptr) {
        auto bytes = call(++xid, 400200, 1, proc, {}, flavor);
        rpc::Message m;
        m.bytes = bytes;
        return d.dispatch_nowait(m, peer, alloc, out, left);
    }
    std::optional<rpc::Reply> normal(uint32_t proc) {
        auto bytes = call(++xid, 400200, 1, proc, {});
        rpc::Message m;
        m.bytes = bytes;
        return d.dispatch(m, peer, alloc);
    }
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

TEST_F(Dispatch, ACallLeftBeforeItsCredentialIsNotDecodedAgainByTheWorker) {
    auto bytes = call(++xid, 400200, 1, 3, {});  // proc 3: not one to try
    rpc::Message m;
    m.bytes = bytes;
    std::optional<rpc::Reply> r;
    std::optional<rpc::DecodedCall> left;
    EXPECT_FALSE(d.dispatch_nowait(m, peer, alloc, r, &left));
    ASSERT_TRUE(left);
    EXPECT_EQ(left->header.proc, 3u);
    EXPECT_EQ(left->header.xid, xid);
    // The worker's dispatch runs on the header as it was decoded: changed here, the reply
    // carries the change, so nothing was decoded again.
    left->header.xid = 4242;
    auto w = d.dispatch(m, peer, alloc, &*left);
    ASSERT_TRUE(w);
    EXPECT_EQ(word_at(w->bytes, 0), 4242u);
    EXPECT_EQ(word_at(w->bytes, 24), 7u);
    EXPECT_EQ(prog->calls, 1);
    // Another message's bytes (here a copy) are decoded afresh: the header is not theirs.
    std::vector<uint8_t> copy(bytes.begin(), bytes.end());
    rpc::Message other;
    other.bytes = copy;
    auto o = d.dispatch(other, peer, alloc, &*left);
    ASSERT_TRUE(o);
    EXPECT_EQ(word_at(o->bytes, 0), xid);
    // A call begun and given up (proc 1) hands back nothing: its credential was taken.
    std::optional<rpc::DecodedCall> begun;
    EXPECT_FALSE(nowait(1, r, 1, &begun));
    EXPECT_FALSE(begun);
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
struct Nfs3 : Nfs3Fixture {};
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

// A regular file a worker resolved is held (a path entry, fd_cache.h) for a second or
// two: the GETATTRs that revalidate it meanwhile are answered in place, with the
// attributes a worker gives. A file removed meanwhile is left to a worker, which answers
// STALE (the last close of a removed file may wait on the disk: not a reactor's).
TEST_F(Nfs3, GetattrOfAFileAWorkerResolvedIsAnsweredInPlaceUntilIdle) {
    ASSERT_TRUE(local);
    std::optional<rpc::Reply> r;
    EXPECT_FALSE(run(kGetattr, fh_args("file"), true, r));  // never resolved: a worker's
    ASSERT_TRUE(run(kGetattr, fh_args("file"), false, r));
    ASSERT_TRUE(r);
    const std::vector<uint8_t> worker(r->bytes.begin() + 24, r->bytes.end());
    EXPECT_EQ(files->path_entries(), 1u);
    ASSERT_TRUE(run(kGetattr, fh_args("file"), true, r));
    ASSERT_TRUE(r);
    EXPECT_EQ(nfsstat(*r), 0u);
    EXPECT_EQ(word_at(r->bytes, 28), 1u);  // NF3REG
    EXPECT_EQ(std::vector<uint8_t>(r->bytes.begin() + 24, r->bytes.end()), worker);

    // Used since the previous sweep: kept; unused for a whole period: closed.
    EXPECT_EQ(files->close_idle(), 0u);
    ASSERT_TRUE(run(kGetattr, fh_args("file"), true, r));  // a use
    EXPECT_EQ(files->close_idle(), 0u);
    EXPECT_EQ(files->close_idle(), 1u);
    EXPECT_EQ(files->path_entries(), 0u);
    EXPECT_FALSE(run(kGetattr, fh_args("file"), true, r));  // a worker's again

    // Once a READ has it open, GETATTR shares that descriptor, which the sweeps close only after
    // kIdleIoPeriods idle ones.
    ASSERT_TRUE(run(kRead, read_args("file", 0, 16), false, r));
    EXPECT_EQ(files->close_idle(), 0u);
    EXPECT_EQ(files->close_idle(), 0u);
    ASSERT_TRUE(run(kGetattr, fh_args("file"), true, r));
    EXPECT_EQ(nfsstat(*r), 0u);

    // Removed behind the server's back: given up in place (still held), STALE from a
    // worker, which lets the descriptor go.
    const auto args = fh_args("file");
    const size_t held = files->size();
    ASSERT_EQ(::unlink((base + "/export/file").c_str()), 0);
    EXPECT_FALSE(run(kGetattr, args, true, r));
    EXPECT_EQ(files->size(), held);
    ASSERT_TRUE(run(kGetattr, args, false, r));
    EXPECT_EQ(nfsstat(*r), 70u);  // NFS3ERR_STALE
    EXPECT_EQ(files->size(), held - 1);
}

// A file a worker's LOOKUP found is held (fd_cache.h): the ACCESS and GETATTR an open
// sends next are answered in place, not by a worker.
TEST_F(Nfs3, TheCallsAfterALookupOfAFileAreAnsweredInPlace) {
    ASSERT_TRUE(local);
    std::optional<rpc::Reply> r;
    EXPECT_FALSE(run(kGetattr, fh_args("file"), true, r));  // nothing holds it yet
    ASSERT_TRUE(run(kLookup, lookup_args(".", "file"), false, r));
    ASSERT_TRUE(r);
    ASSERT_EQ(nfsstat(*r), 0u);
    EXPECT_EQ(files->path_entries(), 1u);
    auto access = fh_args("file");
    put(access, 0x3f);
    ASSERT_TRUE(run(kAccess, access, true, r));
    EXPECT_EQ(nfsstat(*r), 0u);
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
    // RWF_NOWAIT still starts the read of a missing page, and a fast disk (a virtio disk the
    // host caches) can finish it before the kernel looks again, so now and then the page is
    // back in time: then the drop is made again, a while later, up to 20 times.
    const std::string path = base + "/export/file";
    bool answered = true;
    uint64_t calls = 0;
    for (int attempt = 0; attempt < 20 && answered; ++attempt) {
        if (attempt > 0) ::usleep(10000);
        int fd = ::open(path.c_str(), O_RDONLY);
        ASSERT_EQ(::posix_fadvise(fd, 0, 0, POSIX_FADV_DONTNEED), 0);
        void* map = ::mmap(nullptr, kFileSize, PROT_READ, MAP_SHARED, fd, 0);
        ASSERT_NE(map, MAP_FAILED);
        unsigned char resident[kFileSize / 4096] = {};
        ASSERT_EQ(::mincore(map, kFileSize, resident), 0);
        ::munmap(map, kFileSize);
        ::close(fd);
        ASSERT_EQ(resident[4], 0) << "the page cache kept " << path << ": cannot test this here";
        calls = d.counters().calls.load();
        answered = run(kRead, read_args("file", 4 * 4096, 4096), true, r);
    }
    EXPECT_FALSE(answered);
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
    // A name the kernel knows (made here), so that the reactor gets as far as the check.
    const int fd = ::open((base + "/export/private/x").c_str(), O_CREAT | O_WRONLY, 0644);
    ASSERT_GE(fd, 0);
    ::close(fd);
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
