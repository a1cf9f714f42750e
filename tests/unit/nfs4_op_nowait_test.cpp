// NFSv4.1 COMPOUNDs tried on a thread that must not block (rpc::CallContext::nowait, the RDMA
// reactor's): which are tried, what the descriptor and page caches let them answer, and that
// one given up leaves the session's slot as it was (Session::abandon), so the worker's run
// of the very same request begins it anew, and a cached reply of the slot's last request
// still answers its retransmission.
#include <fcntl.h>
#include <gtest/gtest.h>
#include <sys/mman.h>
#include <unistd.h>

#include "tests/unit/nfs4_ops_util.h"

using namespace nfsrdmad;
using namespace nfsrdmad::nfs::v4;
using namespace nfsrdmad::nfs::v4::testing;

namespace {

class Nfs4Nowait : public Nfs4OpsFixture {
  protected:
    void SetUp() override {
        Nfs4OpsFixture::SetUp();
        ASSERT_TRUE(exp_->local()) << export_dir_ << " is not on a local file system";
        establish();
        root_fh_ = exp_->root_handle();
    }
    Options options() const override {
        Options o;
        o.files = files_;
        return o;
    }
    // Nothing held open any more: the next resolve of any handle would open it.
    void files_clear() { files_->clear(); }
    x4::nfs_argop4 put_root() { return op_putfh(root_fh_.data()); }
    std::span<const uint8_t> s(const std::string& v) { return keep(v); }

    // A COMPOUND tried nowait; the session's seqid is not used up when it is given up.
    Reply nowait(std::vector<x4::nfs_argop4> ops, bool cachethis = false) {
        nowait_ = true;
        Reply r = seq(std::move(ops), cachethis);
        nowait_ = false;
        if (r.kind == rpc::Outcome::WouldBlock) --seqid_;  // the worker sends it again
        return r;
    }
    uint64_t op_calls(const char* name) {
        uint64_t n = 0;
        for (const auto& s : program_->op_stats())
            for (const auto& op : s->snapshot().ops)
                if (op.name == name) n += op.calls;
        return n;
    }

    vfs::FileHandle root_fh_;
    std::shared_ptr<vfs::FdCache> files_ = std::make_shared<vfs::FdCache>();
};

}  // namespace

TEST_F(Nfs4Nowait, AGetattrOfAHeldDirectoryIsAnsweredInPlace) {
    const auto attrs = {x4::FATTR4_TYPE, x4::FATTR4_SIZE, x4::FATTR4_CHANGE, x4::FATTR4_OWNER};
    Reply w = seq({put_root(), op_getattr(attrs)});  // a worker's: the directory is now held
    ASSERT_EQ(w.status(), x4::NFS4_OK);
    Reply r = nowait({put_root(), op_getattr(attrs)});
    ASSERT_EQ(r.kind, rpc::Outcome::Success);
    ASSERT_TRUE(r.decoded);
    ASSERT_EQ(r.status(), x4::NFS4_OK);
    const auto& a = r.op(2).opgetattr().resok4().obj_attributes;
    const auto& b = w.op(2).opgetattr().resok4().obj_attributes;
    EXPECT_TRUE(std::ranges::equal(a.attr_vals, b.attr_vals));
    EXPECT_EQ(op_calls("GETATTR"), 2u);
    // The slot moved on: the next request is the next seqid.
    EXPECT_EQ(seq({put_root()}).status(), x4::NFS4_OK);
}

// A regular file a worker's GETATTR resolved is held for a second or two (a path entry,
// fd_cache.h): the revalidations meanwhile are answered in place; once it was idle for a
// whole sweep period, PUTFH's pre-flight declines again.
TEST_F(Nfs4Nowait, AGetattrOfAFileAWorkerResolvedIsAnsweredInPlaceUntilIdle) {
    const int fd = ::open(path("f").c_str(), O_CREAT | O_WRONLY | O_CLOEXEC, 0644);
    ASSERT_GE(fd, 0);
    ASSERT_EQ(::write(fd, "abc", 3), 3);
    ::close(fd);
    Reply l = seq({put_root(), op_lookup(s("f")), op_getfh()});
    ASSERT_EQ(l.status(), x4::NFS4_OK);
    const auto ffh = l.op(3).opgetfh().resok4().object;
    const std::vector<uint8_t> file(ffh.begin(), ffh.end());
    files_clear();
    const auto attrs = {x4::FATTR4_TYPE, x4::FATTR4_SIZE, x4::FATTR4_CHANGE};
    Reply miss = nowait({op_putfh(file), op_getattr(attrs)});
    EXPECT_EQ(miss.kind, rpc::Outcome::WouldBlock);
    EXPECT_TRUE(miss.declined);
    Reply w = seq({op_putfh(file), op_getattr(attrs)});
    ASSERT_EQ(w.status(), x4::NFS4_OK);
    Reply r = nowait({op_putfh(file), op_getattr(attrs)});
    ASSERT_EQ(r.kind, rpc::Outcome::Success);
    ASSERT_EQ(r.status(), x4::NFS4_OK);
    const auto& a = r.op(2).opgetattr().resok4().obj_attributes;
    const auto& b = w.op(2).opgetattr().resok4().obj_attributes;
    EXPECT_TRUE(std::ranges::equal(a.attr_vals, b.attr_vals));
    EXPECT_EQ(files_->close_idle(), 0u);
    EXPECT_EQ(files_->close_idle(), 1u);
    Reply idle = nowait({op_putfh(file), op_getattr(attrs)});
    EXPECT_EQ(idle.kind, rpc::Outcome::WouldBlock);
    EXPECT_TRUE(idle.declined);
}

// A file a worker's LOOKUP found is held: the PUTFH + GETATTR after it is answered in place.
TEST_F(Nfs4Nowait, AFileALookupFoundIsAnsweredInPlaceAfterwards) {
    const int fd = ::open(path("g").c_str(), O_CREAT | O_WRONLY | O_CLOEXEC, 0644);
    ASSERT_GE(fd, 0);
    ::close(fd);
    files_clear();
    Reply l = seq({put_root(), op_lookup(s("g")), op_getfh()});
    ASSERT_EQ(l.status(), x4::NFS4_OK);
    const auto gfh = l.op(3).opgetfh().resok4().object;
    const std::vector<uint8_t> file(gfh.begin(), gfh.end());
    EXPECT_EQ(files_->path_entries(), 1u);
    Reply r = nowait({op_putfh(file), op_getattr({x4::FATTR4_TYPE, x4::FATTR4_SIZE})});
    ASSERT_EQ(r.kind, rpc::Outcome::Success);
    EXPECT_EQ(r.status(), x4::NFS4_OK);
}

TEST_F(Nfs4Nowait, AnOperationThatWouldBlockGivesTheWholeCompoundUp) {
    Reply o = seq({put_root(), op_open(s("owner"), s("f"), true, x4::OPEN4_SHARE_ACCESS_READ),
                   op_getfh()});
    ASSERT_EQ(o.status(), x4::NFS4_OK);
    const auto fh = o.op(3).opgetfh().resok4().object;
    const std::vector<uint8_t> handle(fh.begin(), fh.end());
    // SAVEFH is no nowait operation: nothing runs, the slot is untouched.
    const uint64_t sequences = op_calls("SEQUENCE");
    Reply saved = nowait({put_root(), op_savefh()});
    EXPECT_EQ(saved.kind, rpc::Outcome::WouldBlock);
    EXPECT_TRUE(saved.declined);
    EXPECT_EQ(op_calls("SEQUENCE"), sequences);
    EXPECT_EQ(seq({put_root(), op_savefh()}).status(), x4::NFS4_OK);

    // A directory nobody resolved: SEQUENCE ran, PUTFH ran, GETATTR would open it.
    ASSERT_EQ(::mkdir(path("d").c_str(), 0755), 0);
    Reply d = seq({put_root(), op_lookup(s("d")), op_getfh()});
    ASSERT_EQ(d.status(), x4::NFS4_OK);
    const auto dfh = d.op(3).opgetfh().resok4().object;
    const std::vector<uint8_t> dir(dfh.begin(), dfh.end());
    files_clear();
    const uint64_t before = op_calls("SEQUENCE");
    // PUTFH's pre-flight sees the cache miss: declined before SEQUENCE runs.
    Reply g = nowait({op_putfh(dir), op_getattr({x4::FATTR4_TYPE})});
    EXPECT_EQ(g.kind, rpc::Outcome::WouldBlock);
    EXPECT_TRUE(g.declined);
    EXPECT_EQ(op_calls("SEQUENCE"), before);
    // Every PUTFH is looked at, not the first only.
    Reply g2 = nowait({put_root(), op_getfh(), op_putfh(dir), op_access(x4::ACCESS4_READ)});
    EXPECT_EQ(g2.kind, rpc::Outcome::WouldBlock);
    EXPECT_TRUE(g2.declined);
    // A PUTFH nothing after it opens: tried, the handle's MAC is all it checks.
    Reply p = nowait({op_putfh(dir), op_getfh()});
    EXPECT_EQ(p.kind, rpc::Outcome::Success);
    EXPECT_EQ(p.status(), x4::NFS4_OK);
    EXPECT_EQ(op_calls("SEQUENCE"), before + 1);
    // The worker runs the same request (same seqid): new to the slot, answered.
    Reply again = seq({op_putfh(dir), op_getattr({x4::FATTR4_TYPE})});
    ASSERT_EQ(again.status(), x4::NFS4_OK);
    EXPECT_EQ(op_calls("SEQUENCE"), before + 2);

    // What no pre-flight sees: a READ finds no payload buffer free after SEQUENCE, PUTFH
    // and its stateid ran. Given up, all of it undone, nothing counted.
    const x4::stateid4 sid = o.op(2).opopen().resok4().stateid;
    ASSERT_EQ(seq({op_putfh(handle), op_read(sid, 0, 16)}).status(), x4::NFS4_OK);
    const uint64_t reads = op_calls("READ"), sequences2 = op_calls("SEQUENCE");
    alloc_.none = true;
    Reply r = nowait({op_putfh(handle), op_read(sid, 0, 16)});
    alloc_.none = false;
    EXPECT_EQ(r.kind, rpc::Outcome::WouldBlock);
    EXPECT_FALSE(r.declined);
    EXPECT_EQ(op_calls("SEQUENCE"), sequences2);
    EXPECT_EQ(op_calls("READ"), reads);
    EXPECT_EQ(seq({op_putfh(handle), op_read(sid, 0, 16)}).status(), x4::NFS4_OK);
}

TEST_F(Nfs4Nowait, ALookupInAHeldDirectoryIsAnsweredFromTheDentryCache) {
    const auto attrs = {x4::FATTR4_TYPE, x4::FATTR4_SIZE, x4::FATTR4_CHANGE, x4::FATTR4_FILEID};
    const int fd = ::open(path("f").c_str(), O_CREAT | O_WRONLY | O_CLOEXEC, 0644);
    ASSERT_GE(fd, 0);
    ASSERT_EQ(::write(fd, "12345", 5), 5);
    ::close(fd);
    // The Linux client's LOOKUP: SEQUENCE, PUTFH, LOOKUP, GETFH, GETATTR.
    Reply w = seq({put_root(), op_lookup(s("f")), op_getfh(), op_getattr(attrs)});
    ASSERT_EQ(w.status(), x4::NFS4_OK);
    Reply r = nowait({put_root(), op_lookup(s("f")), op_getfh(), op_getattr(attrs)});
    ASSERT_EQ(r.kind, rpc::Outcome::Success);
    ASSERT_EQ(r.status(), x4::NFS4_OK);
    EXPECT_TRUE(
        std::ranges::equal(r.op(3).opgetfh().resok4().object, w.op(3).opgetfh().resok4().object));
    EXPECT_TRUE(std::ranges::equal(r.op(4).opgetattr().resok4().obj_attributes.attr_vals,
                                   w.op(4).opgetattr().resok4().obj_attributes.attr_vals));
    // A name the kernel never saw: SEQUENCE and PUTFH ran, LOOKUP would read the directory.
    // Given up, undone, nothing counted; the worker's run finds it absent, and then the
    // reactor can say so too.
    const uint64_t sequences = op_calls("SEQUENCE"), lookups = op_calls("LOOKUP");
    Reply g = nowait({put_root(), op_lookup(s("never-named"))});
    EXPECT_EQ(g.kind, rpc::Outcome::WouldBlock);
    EXPECT_FALSE(g.declined);
    EXPECT_EQ(op_calls("SEQUENCE"), sequences);
    EXPECT_EQ(op_calls("LOOKUP"), lookups);
    EXPECT_EQ(seq({put_root(), op_lookup(s("never-named"))}).status(), x4::NFS4ERR_NOENT);
    Reply n = nowait({put_root(), op_lookup(s("never-named"))});
    ASSERT_EQ(n.kind, rpc::Outcome::Success);
    EXPECT_EQ(n.status(), x4::NFS4ERR_NOENT);
    // A directory the descriptor cache does not hold: PUTFH's pre-flight declines.
    files_clear();
    Reply d = nowait({put_root(), op_lookup(s("f"))});
    EXPECT_EQ(d.kind, rpc::Outcome::WouldBlock);
    EXPECT_TRUE(d.declined);
}

TEST_F(Nfs4Nowait, AGivenUpRequestLeavesTheSlotsCachedReply) {
    // seqid n, cached; then n + 1 tried nowait and given up; a retransmission of n still
    // gets n's reply (the slot's cache as it was), and n + 1 then runs.
    Reply o = seq(
        {put_root(), op_open(s("owner"), s("f"), true, x4::OPEN4_SHARE_ACCESS_READ), op_getfh()});
    ASSERT_EQ(o.status(), x4::NFS4_OK);
    const x4::stateid4 sid = o.op(2).opopen().resok4().stateid;
    const auto fh = o.op(3).opgetfh().resok4().object;
    const std::vector<uint8_t> handle(fh.begin(), fh.end());
    ASSERT_EQ(::mkdir(path("d").c_str(), 0755), 0);
    Reply d = seq({put_root(), op_lookup(s("d")), op_getfh()}, /*cachethis=*/true);
    ASSERT_EQ(d.status(), x4::NFS4_OK);
    const uint32_t n = seqid_;
    // n + 1: a READ that finds no payload buffer free, after SEQUENCE took the slot.
    alloc_.none = true;
    Reply g = nowait({op_putfh(handle), op_read(sid, 0, 16)});
    alloc_.none = false;
    ASSERT_EQ(g.kind, rpc::Outcome::WouldBlock);
    ASSERT_FALSE(g.declined);
    seqid_ = n - 1;  // the retransmission of n
    Reply replay = seq({put_root(), op_lookup(s("d")), op_getfh()}, true);
    ASSERT_EQ(replay.status(), x4::NFS4_OK);
    EXPECT_TRUE(std::ranges::equal(*replay.bytes, *d.bytes));
    Reply next = seq({op_putfh(handle), op_read(sid, 0, 16)});
    EXPECT_EQ(next.status(), x4::NFS4_OK);
}

TEST_F(Nfs4Nowait, AReadThroughAnOpenComesFromThePageCacheOrFromAWorker) {
    const std::string content(64 << 10, 'v');
    Reply o = seq({put_root(), op_open(s("owner"), s("f"), true, x4::OPEN4_SHARE_ACCESS_BOTH),
                   op_getfh()});
    ASSERT_EQ(o.status(), x4::NFS4_OK);
    const x4::stateid4 sid = o.op(2).opopen().resok4().stateid;
    const auto fh = o.op(3).opgetfh().resok4().object;
    const std::vector<uint8_t> handle(fh.begin(), fh.end());
    ASSERT_EQ(seq({op_putfh(handle), op_write(sid, 0, s(content))}).status(), x4::NFS4_OK);

    Reply r = nowait({op_putfh(handle), op_read(sid, 4096, 4096)});
    ASSERT_EQ(r.kind, rpc::Outcome::Success);
    ASSERT_EQ(r.status(), x4::NFS4_OK);
    ASSERT_EQ(r.payloads.size(), 1u);
    EXPECT_EQ(std::string(r.payloads[0].begin(), r.payloads[0].end()), content.substr(4096, 4096));

    // Out of the page cache: given up, then the worker's run of the same request reads it.
    // The kernel may have the page back by the time the READ looks: RWF_NOWAIT still starts
    // the read of a missing page, and a fast disk (a virtio disk the host caches) can finish
    // it before the check (about 1 run in 40 alone, runs of five in a row beside a busy
    // ctest -j2). Then the drop is made again, a while later, up to 20 times.
    Reply cold;
    uint64_t reads = 0;
    for (int attempt = 0; attempt < 20; ++attempt) {
        if (attempt > 0) ::usleep(10000);
        int fd = ::open(path("f").c_str(), O_RDONLY);
        ASSERT_GE(fd, 0);
        ASSERT_EQ(::fdatasync(fd), 0);
        ASSERT_EQ(::posix_fadvise(fd, 0, 0, POSIX_FADV_DONTNEED), 0);
        void* map = ::mmap(nullptr, content.size(), PROT_READ, MAP_SHARED, fd, 0);
        ASSERT_NE(map, MAP_FAILED);
        unsigned char resident[16] = {};
        ASSERT_EQ(::mincore(map, content.size(), resident), 0);
        ::munmap(map, content.size());
        ::close(fd);
        ASSERT_EQ(resident[8], 0) << "the page cache kept the file: cannot test this here";
        reads = op_calls("READ");
        cold = nowait({op_putfh(handle), op_read(sid, 8 * 4096, 4096)});
        if (cold.kind == rpc::Outcome::WouldBlock) break;
    }
    EXPECT_EQ(cold.kind, rpc::Outcome::WouldBlock);
    EXPECT_EQ(op_calls("READ"), reads);
    Reply worker = seq({op_putfh(handle), op_read(sid, 8 * 4096, 4096)});
    ASSERT_EQ(worker.status(), x4::NFS4_OK);
    ASSERT_EQ(worker.payloads.size(), 1u);
    EXPECT_EQ(worker.payloads[0].size(), 4096u);
    EXPECT_EQ(op_calls("READ"), reads + 1);

    EXPECT_FALSE(cold.declined);  // SEQUENCE ran and was undone

    // More than a reactor copies (vfs::kNowaitReadMax): a worker's, though cached now;
    // so is a READ through a special stateid. Both said before SEQUENCE runs.
    const uint64_t sequences0 = op_calls("SEQUENCE");
    Reply big = nowait({op_putfh(handle), op_read(sid, 0, (64 << 10) + 1)});
    EXPECT_EQ(big.kind, rpc::Outcome::WouldBlock);
    EXPECT_TRUE(big.declined);
    Reply anonymous = nowait({op_putfh(handle), op_read(x4::stateid4{}, 0, 4096)});
    EXPECT_EQ(anonymous.kind, rpc::Outcome::WouldBlock);
    EXPECT_TRUE(anonymous.declined);
    EXPECT_EQ(op_calls("SEQUENCE"), sequences0);
}
