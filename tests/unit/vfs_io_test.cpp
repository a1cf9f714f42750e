// Unit tests of nfs/vfs I/O and directory listing: read/write/commit through the fd
// cache, permission checks, readdir paging with cookies.
#include <dirent.h>
#include <fcntl.h>
#include <signal.h>
#include <sys/xattr.h>

#include <algorithm>
#include <atomic>
#include <cstring>
#include <map>
#include <numeric>
#include <set>
#include <thread>
#include <vector>

#include "nfs/vfs/durability.h"
#include "nfs/vfs/lease.h"
#include "tests/unit/vfs_test_util.h"

namespace nfsrdmad::vfs::testing {
namespace {

class IoTest : public VfsFixture {
  protected:
    std::shared_ptr<const OpenFile> open(const std::string& rel, OpenFor need) {
        auto f = cache_.get(*table_, node(rel).handle.data(), need);
        EXPECT_TRUE(f.ok()) << rel << ": " << describe_error(f.error());
        return f.ok() ? *f : nullptr;
    }
    FdCache cache_{16};
};

TEST_F(IoTest, WriteThenReadRoundTrip) {
    auto e = create(root_, "data", 0644, CreateHow::Guarded, 0, kUser1234);
    ASSERT_TRUE(e.ok());
    std::vector<uint8_t> payload(1 << 20);
    std::iota(payload.begin(), payload.end(), uint8_t{7});

    auto wf = cache_.get(e->node, OpenFor::Write);
    ASSERT_TRUE(wf.ok()) << describe_error(wf.error());
    auto w = write(**wf, 4096, payload, StableHow::Unstable, kUser1234);
    ASSERT_TRUE(w.ok()) << describe_error(w.error());
    EXPECT_EQ(w->count, payload.size());
    EXPECT_EQ(w->committed, StableHow::Unstable);
    EXPECT_TRUE(commit(**wf, 0, 0).ok());
    EXPECT_EQ(getattr(**wf)->stx_size, 4096u + payload.size());

    auto rf = cache_.get(*table_, e->node.handle.data(), OpenFor::Read);
    ASSERT_TRUE(rf.ok());
    EXPECT_EQ(rf->get(), wf->get());  // same cached descriptor
    std::vector<uint8_t> back(payload.size(), 0);
    auto r = read(**rf, 4096, static_cast<uint32_t>(back.size()), back.data(), kUser1234);
    ASSERT_TRUE(r.ok());
    EXPECT_EQ(r->count, payload.size());
    EXPECT_TRUE(r->eof);  // ends exactly at end of file
    EXPECT_EQ(back, payload);

    // The hole before offset 4096 reads as zeros; a read past EOF is empty + eof.
    uint8_t head[16];
    std::fill(std::begin(head), std::end(head), 0xee);
    r = read(**rf, 0, sizeof head, head, kUser1234);
    ASSERT_TRUE(r.ok());
    EXPECT_EQ(r->count, 16u);
    EXPECT_FALSE(r->eof);
    EXPECT_EQ(head[0], 0);
    EXPECT_EQ(head[15], 0);
    r = read(**rf, 10u << 20, sizeof head, head, kUser1234);
    ASSERT_TRUE(r.ok());
    EXPECT_EQ(r->count, 0u);
    EXPECT_TRUE(r->eof);
    // A read straddling EOF is short.
    r = read(**rf, 4096 + payload.size() - 3, sizeof head, head, kUser1234);
    ASSERT_TRUE(r.ok());
    EXPECT_EQ(r->count, 3u);
    EXPECT_TRUE(r->eof);
    EXPECT_EQ(head[2], payload.back());
}

// A write lease (an NFSv4.1 write delegation's, lease.h): taken only while its description
// is the file's only one (a created file's node is made O_PATH first), and while held, the
// daemon's own truncation and fsync go through that description: only an outside open
// breaks it.
TEST_F(IoTest, AWriteLeaseIsTheFilesOnlyDescriptionAndOnlyAnOutsideOpenBreaksIt) {
    // The break is a real-time signal to this process: held pending, not delivered.
    sigset_t sig;
    sigemptyset(&sig);
    sigaddset(&sig, lease_signal());
    sigaddset(&sig, SIGIO);
    ASSERT_EQ(pthread_sigmask(SIG_BLOCK, &sig, nullptr), 0);
    auto e = create(root_, "leased", 0644, CreateHow::Guarded, 0, kUser1234);
    ASSERT_TRUE(e.ok());
    auto wf = cache_.get(e->node, OpenFor::Write);
    ASSERT_TRUE(wf.ok());
    auto refused = Lease::take_write(*wf);
    ASSERT_FALSE(refused.ok()) << "a write lease beside the create's own descriptor";
    EXPECT_EQ(refused.error(), EAGAIN);
    ASSERT_TRUE(pin_by_path(e->node).ok());
    EXPECT_EQ(::fcntl(e->node.fd.get(), F_GETFL) & O_PATH, O_PATH);
    auto lease = Lease::take_write(*wf);
    ASSERT_TRUE(lease.ok()) << describe_error(lease.error());
    EXPECT_TRUE((*lease)->write());
    EXPECT_EQ(leased_file(e->node.handle), *wf);

    ASSERT_TRUE(
        write(**wf, 0, std::vector<uint8_t>(100, 'x'), StableHow::Unstable, kUser1234).ok());
    ASSERT_EQ(::chmod(path("leased").c_str(), 06755), 0);
    SetAttrs size;
    size.size = 10;
    ASSERT_TRUE(setattr(e->node, size, kUser1234).ok());  // truncation and fsync, no open
    EXPECT_EQ(getattr(**wf)->stx_size, 10u);
    // Truncated as the caller, not as root: the setuid and setgid bits go, as with truncate(2).
    EXPECT_EQ(getattr(**wf)->stx_mode & 06000, 0u);
    EXPECT_TRUE(commit_object(e->node).ok());
    EXPECT_FALSE((*lease)->breaking());
    // Not the caller's to truncate: the lease's description does not skip the check.
    SetAttrs other = size;
    other.size = 5;
    EXPECT_EQ(setattr(e->node, other, kUser4321).error(), EACCES);

    const int fd = ::open(path("leased").c_str(), O_RDONLY | O_NONBLOCK);
    const int err = errno;
    EXPECT_LT(fd, 0) << "an outside open went past the write lease";
    if (fd >= 0) ::close(fd);
    EXPECT_EQ(err, EWOULDBLOCK);
    EXPECT_TRUE((*lease)->breaking());
    lease->reset();
    EXPECT_EQ(leased_file(e->node.handle), nullptr);
    const int again = ::open(path("leased").c_str(), O_RDONLY | O_NONBLOCK);
    EXPECT_GE(again, 0);
    if (again >= 0) ::close(again);
    const struct timespec none {};
    while (sigtimedwait(&sig, nullptr, &none) > 0) {
    }
    ASSERT_EQ(pthread_sigmask(SIG_UNBLOCK, &sig, nullptr), 0);
}

// read_to_pipe: the same READ, the data spliced into a pipe (TCP's zero-copy path).
TEST_F(IoTest, ReadToPipeMovesTheBytesAndReportsEofAndShortReads) {
    std::string content(300000, '\0');
    for (size_t i = 0; i < content.size(); ++i) content[i] = static_cast<char>(i * 7 + 3);
    write_file("p", content, 0640, 1234, 1234);
    auto f = open("p", OpenFor::Read);
    ASSERT_TRUE(f);
    int fds[2];
    ASSERT_EQ(::pipe2(fds, O_CLOEXEC | O_NONBLOCK), 0);
    ASSERT_GE(::fcntl(fds[1], F_SETPIPE_SZ, 1 << 20), 1 << 20);
    auto drain = [&](size_t n) {
        std::string got(n, '\0');
        size_t done = 0;
        while (done < n) {
            ssize_t k = ::read(fds[0], got.data() + done, n - done);
            if (k <= 0) break;
            done += static_cast<size_t>(k);
        }
        got.resize(done);
        return got;
    };

    auto r = read_to_pipe(*f, 1000, 5000, fds[1], kUser1234);
    ASSERT_TRUE(r.ok()) << describe_error(r.error());
    EXPECT_EQ(r->count, 5000u);
    EXPECT_FALSE(r->eof);
    EXPECT_EQ(drain(5000), content.substr(1000, 5000));

    r = read_to_pipe(*f, 299990, 100, fds[1], kUser1234);  // across the end
    ASSERT_TRUE(r.ok());
    EXPECT_EQ(r->count, 10u);
    EXPECT_TRUE(r->eof);
    EXPECT_EQ(drain(10), content.substr(299990));

    EXPECT_EQ(read_to_pipe(*f, 0, 10, fds[1], kUser4321).error(), EACCES);

    // A pipe that cannot take it all: a short read that is not end of file.
    ASSERT_GE(::fcntl(fds[1], F_SETPIPE_SZ, 65536), 65536);
    const int cap = ::fcntl(fds[1], F_GETPIPE_SZ);
    r = read_to_pipe(*f, 0, 200000, fds[1], kUser1234);
    ASSERT_TRUE(r.ok());
    EXPECT_EQ(r->count, static_cast<uint32_t>(cap));
    EXPECT_FALSE(r->eof) << "stopping because the pipe is full is not EOF";
    EXPECT_EQ(drain(r->count), content.substr(0, r->count));
    ::close(fds[0]);
    ::close(fds[1]);
}

TEST_F(IoTest, StableWritesReportTheirCommitment) {
    write_file("s", "", 0644, 1234, 1234);
    auto f = open("s", OpenFor::Write);
    ASSERT_NE(f, nullptr);
    const std::vector<uint8_t> data = {'a', 'b', 'c'};
    auto w = write(*f, 0, data, StableHow::FileSync, kUser1234);
    ASSERT_TRUE(w.ok());
    EXPECT_EQ(w->committed, StableHow::FileSync);
    w = write(*f, 3, data, StableHow::DataSync, kUser1234);
    ASSERT_TRUE(w.ok());
    EXPECT_EQ(w->committed, StableHow::DataSync);
    EXPECT_EQ(stat_path("s").st_size, 6);
}

TEST_F(IoTest, NonOwnerIsDeniedOnPrivateFile) {
    write_file("secret", "top secret", 0600, 1234, 1234);
    auto f = open("secret", OpenFor::Write);
    ASSERT_NE(f, nullptr);
    char buf[32];
    EXPECT_EQ(read(*f, 0, sizeof buf, buf, kUser4321).error(), EACCES);
    const std::vector<uint8_t> data = {'x'};
    EXPECT_EQ(write(*f, 0, data, StableHow::Unstable, kUser4321).error(), EACCES);
    auto r = read(*f, 0, sizeof buf, buf, kUser1234);
    ASSERT_TRUE(r.ok());
    EXPECT_EQ(std::string(buf, r->count), "top secret");
    EXPECT_EQ(access(node("secret"), kAccessRead, kUser4321).value(), 0u);
}

TEST_F(IoTest, ReadableViaGroupOrExecute) {
    write_file("g", "grp", 0640, 1234, 777);
    write_file("x", "bin", 0711, 1234, 1234);
    char buf[8];
    EXPECT_EQ(read(*open("g", OpenFor::Read), 0, 8, buf, Identity{4321, 1, {777}})->count, 3u);
    EXPECT_EQ(read(*open("g", OpenFor::Read), 0, 8, buf, kUser4321).error(), EACCES);
    EXPECT_EQ(read(*open("x", OpenFor::Read), 0, 8, buf, kUser4321)->count, 3u);
}

TEST_F(IoTest, ANamedUserEntryRefusesWhatTheOtherBitsWouldGive) {
    // 0644 by its mode; the ACL names 4321 with no access. As the kernel: refused.
    write_file("acl", "acl'd", 0644, 1234, 1234);
    set_access_acl(path("acl"), {{0x01, 6}, {0x02, 0, 4321}, {0x04, 4}, {0x10, 4}, {0x20, 4}});
    auto f = open("acl", OpenFor::Read);
    ASSERT_NE(f, nullptr);
    char buf[16];
    EXPECT_EQ(read(*f, 0, sizeof buf, buf, kUser4321).error(), EACCES);
    EXPECT_EQ(access(node("acl"), kAccessAll, kUser4321).value(), 0u);
    // Anyone else is "other", as the mode says; the owner is the owner.
    const Identity someone{5555, 5555, {}};
    EXPECT_EQ(read(*f, 0, sizeof buf, buf, someone)->count, 5u);
    EXPECT_EQ(access(node("acl"), kAccessRead, someone).value(), kAccessRead);
    EXPECT_EQ(read(*f, 0, sizeof buf, buf, kUser1234)->count, 5u);
    // A reactor (no identity switch) leaves the ACL's reader to a worker.
    EXPECT_EQ(read_nowait(*f, 0, sizeof buf, buf, kUser4321).error(), EWOULDBLOCK);
    EXPECT_EQ(read_nowait(*f, 0, sizeof buf, buf, kUser1234)->count, 5u);
}

TEST_F(IoTest, ANamedUserEntryGivesWhatTheModeWithholds) {
    write_file("shared", "data", 0600, 1234, 1234);
    set_access_acl(path("shared"), {{0x01, 6}, {0x02, 6, 4321}, {0x04, 0}, {0x10, 6}, {0x20, 0}});
    auto f = open("shared", OpenFor::Write);
    ASSERT_NE(f, nullptr);
    char buf[16];
    EXPECT_EQ(read(*f, 0, sizeof buf, buf, kUser4321)->count, 4u);
    const std::vector<uint8_t> data = {'D'};
    ASSERT_TRUE(write(*f, 0, data, StableHow::Unstable, kUser4321).ok());
    EXPECT_EQ(
        access(node("shared"), kAccessRead | kAccessModify | kAccessExecute, kUser4321).value(),
        kAccessRead | kAccessModify);
    const Identity someone{5555, 5555, {}};
    EXPECT_EQ(read(*f, 0, sizeof buf, buf, someone).error(), EACCES);
    // The mask limits named entries: with mask r--, 4321 may no longer write.
    set_access_acl(path("shared"), {{0x01, 6}, {0x02, 6, 4321}, {0x04, 0}, {0x10, 4}, {0x20, 0}});
    EXPECT_EQ(write(*f, 0, data, StableHow::Unstable, kUser4321).error(), EACCES);
    EXPECT_EQ(read(*f, 0, sizeof buf, buf, kUser4321)->count, 4u);
}

TEST_F(IoTest, AWriterWhoIsNotTheOwnerMaySetTheTimesToNow) {
    // An O_TRUNC open by a group member: SETATTR of size 0 and mtime SET_TO_SERVER_TIME.
    write_file("gw", "group's", 0664, 1234, 777);
    const Identity member{4321, 4321, {777}};
    SetAttrs trunc;
    trunc.size = 0;
    trunc.mtime.how = TimeChange::ServerTime;
    auto r = setattr(node("gw"), trunc, member);
    EXPECT_TRUE(r.ok()) << describe_error(r.error());
    EXPECT_EQ(getattr(node("gw"))->stx_size, 0u);
    // A time of the client's own choosing stays the owner's, as with utimensat(2).
    SetAttrs given;
    given.mtime.how = TimeChange::ClientTime;
    given.mtime.time = {1000000000, 0};
    EXPECT_EQ(setattr(node("gw"), given, member).error(), EPERM);
    // Nor may someone who cannot write touch it.
    SetAttrs now;
    now.mtime.how = TimeChange::ServerTime;
    EXPECT_EQ(setattr(node("gw"), now, kUser4321).error(), EACCES);
}

TEST_F(IoTest, AccessAskedTogetherNeedsOneEntryThatGrantsAll) {
    // Groups 801 (read) and 802 (write), a caller in both: each alone is granted; read and
    // write together (an NFSv4.1 OPEN for both) is not, as the kernel's open says.
    write_file("split", "x", 0600, 1234, 1234);
    set_access_acl(path("split"),
                   {{0x01, 6}, {0x04, 0}, {0x08, 4, 801}, {0x08, 2, 802}, {0x10, 6}, {0x20, 0}});
    const Identity both{4321, 4321, {801, 802}};
    const Node& n = node("split");
    struct statx st {};
    ASSERT_EQ(::statx(n.fd.get(), "", AT_EMPTY_PATH, STATX_BASIC_STATS, &st), 0);
    const uint32_t rw = kAccessRead | kAccessModify;
    EXPECT_EQ(access_of(n.fd.get(), st, both, rw).value(), rw);
    EXPECT_EQ(access_of(n.fd.get(), st, both, rw, true, /*together=*/true).value(), 0u);
    EXPECT_EQ(access_of(n.fd.get(), st, both, kAccessRead, true, true).value(), kAccessRead);
    EXPECT_EQ(access_of(n.fd.get(), st, both, rw, /*may_switch=*/false).error(), EWOULDBLOCK);
}

TEST_F(IoTest, OwnerMayWriteReadOnlyFile) {
    write_file("ro", "", 0444, 1234, 1234);
    auto f = open("ro", OpenFor::Write);
    ASSERT_NE(f, nullptr);
    const std::vector<uint8_t> data = {'o', 'k'};
    auto w = write(*f, 0, data, StableHow::Unstable, kUser1234);
    ASSERT_TRUE(w.ok()) << describe_error(w.error());
    EXPECT_EQ(w->count, 2u);
    EXPECT_EQ(write(*f, 0, data, StableHow::Unstable, kUser4321).error(), EACCES);
}

TEST_F(IoTest, NonRegularFilesAreRefused) {
    ASSERT_EQ(::mkdir(path("d").c_str(), 0755), 0);
    ASSERT_EQ(::mkfifo(path("p").c_str(), 0666), 0);
    EXPECT_EQ(cache_.get(*table_, node("d").handle.data(), OpenFor::Read).error(), EISDIR);
    EXPECT_EQ(cache_.get(node("p"), OpenFor::Read).error(), EINVAL);
    EXPECT_EQ(cache_.get(*table_, std::vector<uint8_t>(20, 1), OpenFor::Read).error(), kBadHandle);
}

TEST_F(IoTest, DeletedFileIsStaleEvenWhenCached) {
    write_file("tmp", "x", 0644, 1234, 1234);
    const FileHandle h = node("tmp").handle;
    auto f = cache_.get(*table_, h.data(), OpenFor::Read);
    ASSERT_TRUE(f.ok());
    ASSERT_EQ(::unlink(path("tmp").c_str()), 0);
    char c;
    EXPECT_EQ(read(**f, 0, 1, &c, kUser1234).error(), ESTALE);
    auto again = cache_.get(*table_, h.data(), OpenFor::Read);
    ASSERT_TRUE(again.ok());  // still cached; the I/O call reports it
    EXPECT_EQ(read(**again, 0, 1, &c, kUser1234).error(), ESTALE);
    cache_.forget(h);
    EXPECT_EQ(cache_.get(*table_, h.data(), OpenFor::Read).error(), ESTALE);
}

TEST_F(IoTest, WriteNeedsAWritableDescriptor) {
    write_file("f", "x", 0644);
    auto ro = open("f", OpenFor::Read);
    ASSERT_NE(ro, nullptr);
    // Reads never hold the file open for writing (that would make it unexecutable locally).
    EXPECT_FALSE(ro->writable);
    EXPECT_EQ(::fcntl(ro->fd.get(), F_GETFL) & O_ACCMODE, O_RDONLY);
    const std::vector<uint8_t> data = {'y'};
    EXPECT_EQ(write(*ro, 0, data, StableHow::Unstable, kRoot).error(), EBADF);

    auto f = open("f", OpenFor::Write);  // replaces the read-only entry
    ASSERT_NE(f, nullptr);
    EXPECT_TRUE(f->writable);
    EXPECT_EQ(::fcntl(f->fd.get(), F_GETFL) & O_ACCMODE, O_RDWR);
    EXPECT_EQ(open("f", OpenFor::Read)->fd.get(), f->fd.get());  // and now serves reads too
    EXPECT_EQ(write(*f, static_cast<uint64_t>(INT64_MAX), data, StableHow::Unstable, kRoot).error(),
              EFBIG);
}

// A miss hands out the attributes it checked the file with (NFSv3 WRITE's pre-op
// attributes, instead of a statx more); a hit has read none and says so.
TEST_F(IoTest, AMissHandsOutTheAttributesItChecked) {
    write_file("f", "hello", 0644);
    auto ref = table_->find_by_handle(node("f").handle.data());
    ASSERT_TRUE(ref.ok());
    std::optional<struct statx> read_now;
    auto first = cache_.get(*ref, OpenFor::Write, &read_now);
    ASSERT_TRUE(first.ok()) << describe_error(first.error());
    ASSERT_TRUE(read_now.has_value());
    EXPECT_EQ(read_now->stx_size, 5u);
    EXPECT_EQ(read_now->stx_ino, getattr(**first)->stx_ino);
    std::optional<struct statx> again;
    auto second = cache_.get(*ref, OpenFor::Write, &again);
    ASSERT_TRUE(second.ok());
    EXPECT_EQ(second->get(), first->get());  // served from the cache
    EXPECT_FALSE(again.has_value());
}

// A file made for writing (vfs::create `writable`) is handed to the cache: the node then
// shares the cache's descriptor, and the WRITE after the CREATE is a hit that opens nothing.
TEST_F(IoTest, ACreatedFileAdoptedByTheCacheServesTheWriteThatFollows) {
    bool made = false;
    auto e = create(root_, "new", 0444, CreateHow::Guarded, 0, kUser1234, &made, nullptr,
                    /*writable=*/true);
    ASSERT_TRUE(e.ok()) << describe_error(e.error());
    ASSERT_TRUE(made);
    // Its creator may write it whatever the mode says: opened O_RDWR as it was made.
    EXPECT_EQ(::fcntl(e->node.fd.get(), F_GETFL) & O_ACCMODE, O_RDWR);
    const int made_fd = e->node.fd.get();
    cache_.adopt(e->node);
    EXPECT_TRUE(e->node.fd.shared());
    EXPECT_EQ(e->node.fd.get(), made_fd);  // the same descriptor, now the cache's
    EXPECT_TRUE(cache_.contains(e->node.handle));

    auto ref = table_->find_by_handle(e->node.handle.data());
    ASSERT_TRUE(ref.ok());
    std::optional<struct statx> read_now;
    auto wf = cache_.get(*ref, OpenFor::Write, &read_now);
    ASSERT_TRUE(wf.ok()) << describe_error(wf.error());
    EXPECT_EQ((*wf)->fd.get(), made_fd);  // a hit: nothing opened
    EXPECT_FALSE(read_now.has_value());
    EXPECT_TRUE((*wf)->writable);
    const std::vector<uint8_t> data = {1, 2, 3};
    ASSERT_TRUE(write(**wf, 0, data, StableHow::FileSync, kUser1234).ok());
    EXPECT_EQ(getattr(**wf)->stx_size, 3u);
    // A shared file is no directory: its commit (a SETATTR's) fsyncs the file.
    EXPECT_FALSE(e->node.fd.shared_directory());
    auto committed = commit_object(e->node);
    EXPECT_TRUE(committed.ok()) << describe_error(committed.error());

    // Once the request's node is gone the cache alone keeps it, and forgets it as before.
    e = fail(EIO);
    wf = fail(EIO);
    cache_.forget(ref->handle);
    EXPECT_FALSE(cache_.contains(ref->handle));
}

// Without `writable` a create opens no more than it did (O_RDONLY), and adopt() leaves a
// node alone whose descriptor is not its own (a directory shared with the cache).
TEST_F(IoTest, OnlyAWritableCreateIsOpenForWritingAndAdoptTakesOnlyOwnDescriptors) {
    auto e = create(root_, "plain", 0644, CreateHow::Guarded, 0, kUser1234);
    ASSERT_TRUE(e.ok());
    EXPECT_EQ(::fcntl(e->node.fd.get(), F_GETFL) & O_ACCMODE, O_RDONLY);
    ASSERT_TRUE(::mkdirat(root_.fd.get(), "d", 0755) == 0);
    auto ref = table_->find_by_handle(node("d").handle.data());
    ASSERT_TRUE(ref.ok());
    auto dir = cache_.node(*ref);
    ASSERT_TRUE(dir.ok());
    ASSERT_TRUE(dir->fd.shared());
    const size_t before = cache_.size();
    cache_.adopt(*dir);
    EXPECT_EQ(cache_.size(), before);
    EXPECT_TRUE(dir->fd.shared());
}

// An NFSv4.1 OPEN that creates for writing adopts the new file; a write delegation's lease
// is then taken on that very description (the create's descriptor is no second open).
TEST_F(IoTest, AnAdoptedCreateTakesAWriteLeaseOnItsOwnDescription) {
    sigset_t sig;
    sigemptyset(&sig);
    sigaddset(&sig, lease_signal());
    sigaddset(&sig, SIGIO);
    ASSERT_EQ(pthread_sigmask(SIG_BLOCK, &sig, nullptr), 0);
    bool made = false;
    auto e = create(root_, "adopted", 0644, CreateHow::Guarded, 0, kUser1234, &made, nullptr,
                    /*writable=*/true);
    ASSERT_TRUE(e.ok() && made);
    cache_.adopt(e->node);
    auto wf = cache_.get(e->node, OpenFor::Write);
    ASSERT_TRUE(wf.ok());
    auto lease = Lease::take_write(*wf);
    ASSERT_TRUE(lease.ok()) << describe_error(lease.error());
    EXPECT_TRUE((*lease)->write());
    lease = fail(EIO);  // given back
}

// A regular file is never opened for node() alone, but one the cache holds for I/O serves
// it: the node shares that descriptor (no open_by_handle_at, no close), and a file removed
// since is ESTALE, the entry dropped, as for a directory.
// node() keeps a regular file as a path entry (O_PATH), which get() never serves for I/O:
// a READ opens the file from it and the entry becomes the I/O one, which node() shares.
TEST_F(IoTest, AFileOpenInTheCacheServesItsNodeToo) {
    write_file("g", "abc");
    const FileHandle fh = node("g").handle;
    auto ref = table_->find_by_handle(fh.data());
    ASSERT_TRUE(ref.ok());
    auto held = cache_.node(*ref);
    ASSERT_TRUE(held.ok());
    EXPECT_TRUE(held->fd.shared());
    EXPECT_FALSE(held->fd.shared_directory());
    EXPECT_NE(::fcntl(held->fd.get(), F_GETFL) & O_PATH, 0);
    EXPECT_EQ(cache_.path_entries(), 1u);
    EXPECT_EQ(cache_.node(*ref)->fd.get(), held->fd.get());  // kept: nothing opened
    EXPECT_EQ(cache_.cached_node(*ref)->fd.get(), held->fd.get());
    auto f = cache_.get(*ref, OpenFor::Read);
    ASSERT_TRUE(f.ok());
    EXPECT_NE((*f)->fd.get(), held->fd.get());
    EXPECT_EQ(::fcntl((*f)->fd.get(), F_GETFL) & (O_ACCMODE | O_PATH), O_RDONLY);
    EXPECT_EQ(cache_.path_entries(), 0u);  // the I/O entry took its place
    EXPECT_EQ(cache_.size(), 1u);
    char c;
    EXPECT_EQ(read(**f, 0, 1, &c, kRoot)->count, 1u);
    struct statx st {};
    auto shared = cache_.node(*ref, &st);
    ASSERT_TRUE(shared.ok()) << describe_error(shared.error());
    EXPECT_TRUE(shared->fd.shared());
    EXPECT_FALSE(shared->fd.shared_directory());
    EXPECT_EQ(shared->fd.get(), (*f)->fd.get());
    EXPECT_EQ(st.stx_size, 3u);
    EXPECT_TRUE(S_ISREG(st.stx_mode));
    ASSERT_EQ(::unlink(path("g").c_str()), 0);
    EXPECT_EQ(cache_.node(*ref).error(), ESTALE);
    EXPECT_FALSE(cache_.contains(fh));
}

TEST_F(IoTest, CacheIsBoundedLru) {
    FdCache small(2);
    write_file("a", "a");
    write_file("b", "b");
    write_file("c", "c");
    auto a = small.get(node("a"), OpenFor::Read);
    auto b = small.get(node("b"), OpenFor::Read);
    ASSERT_TRUE(a.ok() && b.ok());
    EXPECT_EQ(small.get(node("a"), OpenFor::Read)->get(), a->get());  // a is now most recent
    auto c = small.get(node("c"), OpenFor::Read);
    ASSERT_TRUE(c.ok());
    EXPECT_EQ(small.size(), 2u);
    EXPECT_EQ(small.get(node("a"), OpenFor::Read)->get(), a->get());  // survived
    EXPECT_NE(small.get(node("b"), OpenFor::Read)->get(), b->get());  // was evicted, reopened
    char ch;
    EXPECT_EQ(read(**b, 0, 1, &ch, kRoot)->count, 1u);  // evicted entries stay usable
    small.clear();
    EXPECT_EQ(small.size(), 0u);
}

TEST_F(IoTest, CacheEntriesOfAnOldTableAreNotReused) {
    write_file("f", "x");
    const FileHandle h = node("f").handle;
    auto first = cache_.get(*table_, h.data(), OpenFor::Read);
    ASSERT_TRUE(first.ok());
    auto reloaded = make_table({export_dir_});
    auto second = cache_.get(*reloaded, h.data(), OpenFor::Read);
    ASSERT_TRUE(second.ok());
    EXPECT_NE(first->get(), second->get());
    EXPECT_EQ((*second)->exp, reloaded->exports()[0]);
}

// FdCache::node: a directory's handle resolves to a descriptor the cache keeps open for
// reading (no open_by_handle_at, no close; its commits still open their own); the permission
// checks stay the caller's; a directory removed meanwhile is ESTALE; get() never serves
// it; an old table's entry is not reused.
TEST_F(IoTest, DirectoriesAreKeptOpenAndSharedByTheirNodes) {
    ASSERT_EQ(::mkdir(path("d").c_str(), 0755), 0);  // root's: others may not create in it
    write_file("f", "x");
    const FileHandle h = node("d").handle;
    auto ref = table_->find_by_handle(h.data());
    ASSERT_TRUE(ref.ok());
    struct statx st {};
    auto first = cache_.node(*ref, &st);
    ASSERT_TRUE(first.ok()) << describe_error(first.error());
    EXPECT_TRUE(S_ISDIR(st.stx_mode));
    EXPECT_TRUE(first->fd.shared());
    EXPECT_EQ(::fcntl(first->fd.get(), F_GETFL) & (O_ACCMODE | O_PATH), O_RDONLY);
    EXPECT_TRUE(cache_.contains(h));
    auto again = cache_.node(*ref);
    ASSERT_TRUE(again.ok());
    EXPECT_EQ(again->fd.get(), first->fd.get());  // the same descriptor: nothing opened
    // A commit fsyncs a description of its own: write-back errors are reported once per
    // description, and two commits must not share one.
    auto commit_fd = open_directory_for_commit(*again);
    ASSERT_TRUE(commit_fd.ok());
    EXPECT_NE(commit_fd->get(), first->fd.get());
    EXPECT_EQ(cache_.get(*table_, h.data(), OpenFor::Read).error(), EISDIR);

    // Opened as root, used by anyone: the kernel checks the caller on the inode.
    EXPECT_EQ(create(*again, "x", 0644, CreateHow::Guarded, 0, kUser1234).error(), EACCES);
    const uint64_t commits = metadata_commits();
    auto made = create(*again, "x", 0644, CreateHow::Guarded, 0, kRoot);
    ASSERT_TRUE(made.ok()) << describe_error(made.error());
    EXPECT_EQ(metadata_commits(), commits + 1);
    EXPECT_EQ(stat_path("d/x").st_uid, 0u);

    // A regular file's node is the O_PATH descriptor the cache keeps (a path entry).
    const FileHandle fh = node("f").handle;
    auto file = cache_.node(*table_->find_by_handle(fh.data()));
    ASSERT_TRUE(file.ok());
    EXPECT_TRUE(file->fd.shared());
    EXPECT_FALSE(file->fd.shared_directory());
    EXPECT_NE(::fcntl(file->fd.get(), F_GETFL) & O_PATH, 0);
    EXPECT_TRUE(cache_.contains(fh));

    // Removed: ESTALE, as open_by_handle_at says of it, and no longer kept.
    ASSERT_EQ(::unlink(path("d/x").c_str()), 0);
    ASSERT_EQ(::rmdir(path("d").c_str()), 0);
    EXPECT_EQ(cache_.node(*ref).error(), ESTALE);
    EXPECT_FALSE(cache_.contains(h));
    EXPECT_EQ(cache_.node(*ref).error(), ESTALE);  // now from open_by_handle_at

    // Another table's export: a descriptor of its own (the entry it replaces was that of
    // the old table's export).
    ASSERT_EQ(::mkdir(path("e").c_str(), 0755), 0);
    const FileHandle eh = node("e").handle;
    auto old_e = cache_.node(*table_->find_by_handle(eh.data()));
    ASSERT_TRUE(old_e.ok());
    auto reloaded = make_table({export_dir_});
    auto new_e = cache_.node(*reloaded->find_by_handle(eh.data()));
    ASSERT_TRUE(new_e.ok());
    EXPECT_TRUE(old_e->fd.shared() && new_e->fd.shared());
    EXPECT_NE(new_e->fd.get(), old_e->fd.get());
    EXPECT_EQ(new_e->exp, reloaded->exports()[0]);
}

// Files held for I/O and directories: close_idle() closes them once unused for
// kIdleIoPeriods calls (so a file read and then removed on the server frees its blocks),
// not while anything else holds the descriptor (a request, an NFSv4.1 open or delegation).
TEST_F(IoTest, FilesHeldForIoAreClosedOnceIdleForLong) {
    FdCache cache(8);
    ASSERT_EQ(::mkdir(path("d").c_str(), 0755), 0);
    for (const char* n : {"idle", "busy", "shared"}) write_file(n, n);
    auto ref = [&](const char* rel) { return *table_->find_by_handle(node(rel).handle.data()); };
    const FileHandle idle = node("idle").handle;  // before it is removed
    auto held = [&](const char* rel) {
        return cache.contains(std::string_view(rel) == "idle" ? idle : node(rel).handle);
    };
    ASSERT_TRUE(cache.node(ref("d")).ok());
    ASSERT_TRUE(cache.get(ref("idle"), OpenFor::Read).ok());
    ASSERT_TRUE(cache.get(ref("busy"), OpenFor::Read).ok());
    auto shared = cache.get(ref("shared"), OpenFor::Read);
    ASSERT_TRUE(shared.ok());
    for (uint64_t i = 1; i < FdCache::kIdleIoPeriods; ++i) {
        EXPECT_EQ(cache.close_idle(), 0u) << "closed after " << i << " periods";
        ASSERT_TRUE(cache.get(ref("busy"), OpenFor::Read).ok());  // in use all along
    }
    // The file removed meanwhile: its descriptor is what keeps its blocks.
    ASSERT_EQ(::unlink(path("idle").c_str()), 0);
    EXPECT_EQ(cache.close_idle(), 2u);  // idle and d
    EXPECT_FALSE(held("idle") || held("d"));
    EXPECT_TRUE(held("busy") && held("shared"));
    EXPECT_EQ(cache.idle_closed(), 2u);
    shared->reset();  // let go: idle since long, it goes at the next call
    EXPECT_EQ(cache.close_idle(), 1u);
    EXPECT_FALSE(held("shared"));
    EXPECT_TRUE(held("busy"));
}

// Path entries: closed by close_idle() once unused for a whole period (never while a
// request holds one: then when it lets go), at most a quarter of the capacity of them
// (the oldest go first; directories and files open for I/O stay far longer), a removed file's
// left to a worker by a nowait resolve and dropped by a worker's, forgotten by forget().
TEST_F(IoTest, RegularFilesHeldForTheirNodesAreBoundedInNumberAndTime) {
    FdCache cache(8);  // at most 2 path entries
    ASSERT_EQ(cache.max_path_entries(), 2u);
    ASSERT_EQ(::mkdir(path("d").c_str(), 0755), 0);
    for (const char* n : {"a", "b", "c", "io"}) write_file(n, n);
    auto ref = [&](const char* rel) { return *table_->find_by_handle(node(rel).handle.data()); };
    auto held = [&](const char* rel) { return cache.contains(node(rel).handle); };
    ASSERT_TRUE(cache.node(ref("d")).ok());
    ASSERT_TRUE(cache.get(ref("io"), OpenFor::Read).ok());
    ASSERT_TRUE(cache.node(ref("a")).ok());
    ASSERT_TRUE(cache.node(ref("b")).ok());
    ASSERT_TRUE(cache.node(ref("a")).ok());  // a is now the more recent
    ASSERT_TRUE(cache.node(ref("c")).ok());  // b goes
    EXPECT_TRUE(held("a") && held("c") && held("d") && held("io"));
    EXPECT_FALSE(held("b"));
    EXPECT_EQ(cache.path_entries(), 2u);
    EXPECT_EQ(cache.size(), 4u);

    // Time: used since the previous sweep, kept; unused for a whole period, closed.
    EXPECT_EQ(cache.close_idle(), 0u);
    ASSERT_TRUE(cache.cached_node(ref("a")).ok());
    EXPECT_EQ(cache.close_idle(), 1u);  // c
    EXPECT_TRUE(held("a"));
    EXPECT_FALSE(held("c"));
    {
        auto in_use = cache.node(ref("a"));
        ASSERT_TRUE(in_use.ok());
        const int fd = in_use->fd.get();
        EXPECT_EQ(cache.close_idle(), 0u);
        EXPECT_EQ(cache.close_idle(), 1u);  // a, though a request holds it: open till it ends
        EXPECT_GE(::fcntl(fd, F_GETFD), 0);
        struct statx st {};
        EXPECT_EQ(::statx(fd, "", AT_EMPTY_PATH, STATX_SIZE, &st), 0);
    }
    EXPECT_EQ(cache.path_entries(), 0u);
    EXPECT_TRUE(held("d") && held("io"));  // not after four idle periods (kIdleIoPeriods)
    EXPECT_EQ(cache.idle_closed(), 2u);

    // Removed: a nowait resolve gives up and leaves it; a worker's says ESTALE and drops it.
    const HandleRef b = ref("b");
    ASSERT_TRUE(cache.node(b).ok());
    ASSERT_EQ(::unlink(path("b").c_str()), 0);
    EXPECT_EQ(cache.cached_node(b).error(), EWOULDBLOCK);
    EXPECT_TRUE(cache.contains(b.handle));
    EXPECT_EQ(cache.node(b).error(), ESTALE);
    EXPECT_FALSE(cache.contains(b.handle));
    EXPECT_EQ(cache.path_entries(), 0u);

    // forget() (REMOVE, RENAME) drops a path entry as any other.
    ASSERT_TRUE(cache.node(ref("c")).ok());
    cache.forget(node("c").handle);
    EXPECT_EQ(cache.path_entries(), 0u);
    EXPECT_FALSE(held("c"));
}

// hold(): a LOOKUP's regular file becomes a path entry its node shares (so the resolve that
// follows is a hit, a nowait one too); a second lookup's shares the first's; directories,
// removed files and nodes that already share a descriptor are left as they are.
TEST_F(IoTest, ALookedUpFileIsHeldAsAPathEntry) {
    write_file("f", "abc");
    ASSERT_EQ(::mkdir(path("d").c_str(), 0755), 0);
    auto e = lookup(root_, "f", kRoot);
    ASSERT_TRUE(e.ok());
    ASSERT_FALSE(e->node.fd.shared());
    cache_.hold(e->node, e->attr);
    EXPECT_TRUE(e->node.fd.shared());
    EXPECT_NE(::fcntl(e->node.fd.get(), F_GETFL) & O_PATH, 0);
    EXPECT_EQ(cache_.path_entries(), 1u);
    auto ref = table_->find_by_handle(e->node.handle.data());
    ASSERT_TRUE(ref.ok());
    auto hit = cache_.cached_node(*ref);
    ASSERT_TRUE(hit.ok());
    EXPECT_EQ(hit->fd.get(), e->node.fd.get());
    auto again = lookup(root_, "f", kRoot);
    ASSERT_TRUE(again.ok());
    cache_.hold(again->node, again->attr);
    EXPECT_EQ(again->node.fd.get(), e->node.fd.get());  // the first one's, ours closed
    cache_.hold(again->node, again->attr);              // shared already: nothing
    EXPECT_EQ(cache_.size(), 1u);

    auto d = lookup(root_, "d", kRoot);
    ASSERT_TRUE(d.ok());
    cache_.hold(d->node, d->attr);
    EXPECT_FALSE(d->node.fd.shared());
    write_file("g", "x");
    auto g = lookup(root_, "g", kRoot);
    ASSERT_TRUE(g.ok());
    struct statx gone = g->attr;
    gone.stx_nlink = 0;
    cache_.hold(g->node, gone);
    EXPECT_FALSE(g->node.fd.shared());
    EXPECT_EQ(cache_.size(), 1u);
}

TEST_F(IoTest, ConcurrentUsersShareTheCacheSafely) {
    constexpr int kThreads = 8;
    constexpr int kRounds = 100;
    std::vector<FileHandle> handles;
    for (int t = 0; t < kThreads; ++t) {
        const std::string name = "user" + std::to_string(t);
        write_file(name, "", 0600, 2000 + t, 2000 + t);
        handles.push_back(node(name).handle);
    }
    FdCache shared(3);  // smaller than the working set: constant eviction
    std::atomic<int> failures{0};
    auto worker = [&](int t) {
        const Identity me{static_cast<uint32_t>(2000 + t), static_cast<uint32_t>(2000 + t), {}};
        std::vector<uint8_t> out(4096), in(4096);
        for (int round = 0; round < kRounds; ++round) {
            std::fill(out.begin(), out.end(), static_cast<uint8_t>(t * 16 + round));
            auto f = shared.get(*table_, handles[t].data(), OpenFor::Write);
            if (!f) {
                ++failures;
                continue;
            }
            const uint64_t off = static_cast<uint64_t>(round) * 4096;
            auto w = write(**f, off, out, StableHow::Unstable, me);
            auto r = read(**f, off, 4096, in.data(), me);
            if (!w || w->count != 4096 || !r || r->count != 4096 || in != out) ++failures;
            auto other = shared.get(*table_, handles[(t + 1) % kThreads].data(), OpenFor::Read);
            char c;
            if (!other || read(**other, 0, 1, &c, me).error() != EACCES) ++failures;
            if (current_fsuid() != 0) ++failures;
        }
    };
    std::vector<std::thread> threads;
    for (int t = 0; t < kThreads; ++t) threads.emplace_back(worker, t);
    for (auto& th : threads) th.join();
    EXPECT_EQ(failures.load(), 0);
    EXPECT_LE(shared.size(), 3u);
    for (int t = 0; t < kThreads; ++t) {
        EXPECT_EQ(stat_path("user" + std::to_string(t)).st_size, kRounds * 4096);
    }
}

// ---------------------------------------------------------------- readdir

class ReaddirTest : public VfsFixture {};

TEST_F(ReaddirTest, PagedListingSeesEveryNameOnce) {
    ASSERT_EQ(::mkdir(path("big").c_str(), 0755), 0);
    for (int i = 0; i < 1000; ++i) write_file("big/entry_" + std::to_string(i), "");
    Node big = node("big");
    auto verifier = cookie_verifier(big);
    ASSERT_TRUE(verifier.ok());

    std::map<std::string, int> seen;
    uint64_t cookie = 0;
    int pages = 0;
    bool eof = false;
    while (!eof) {
        ASSERT_LT(++pages, 200);
        int in_page = 0;
        auto r = readdir(
            big, cookie,
            [&](const DirEntry& e) {
                if (in_page == 37) return false;  // "reply buffer full"
                ++in_page;
                ++seen[std::string(e.name)];
                cookie = e.cookie;
                if (e.name != "." && e.name != "..") {
                    EXPECT_EQ(e.type, DT_REG);
                }
                return true;
            },
            kUser4321);
        ASSERT_TRUE(r.ok()) << describe_error(r.error());
        eof = r->eof;
        if (pages == 5) {
            // Unrelated churn while the client is listing must not change the verifier.
            write_file("big/zz_new_during_listing", "");
            ASSERT_EQ(::unlink(path("big/zz_new_during_listing").c_str()), 0);
            EXPECT_EQ(*cookie_verifier(big), *verifier);
        }
    }
    EXPECT_EQ(seen.size(), 1002u);
    for (const auto& [name, count] : seen) EXPECT_EQ(count, 1) << name;
    EXPECT_EQ(seen.count("entry_0"), 1u);
    EXPECT_EQ(seen.count("entry_999"), 1u);
    EXPECT_EQ(seen.count("."), 1u);
    EXPECT_EQ(seen.count(".."), 1u);
    EXPECT_EQ(pages, 28);  // ceil(1002 / 37) = 28, the last one reaching eof
}

TEST_F(ReaddirTest, ResumeAtLastCookieIsEof) {
    ASSERT_EQ(::mkdir(path("d").c_str(), 0755), 0);
    write_file("d/one", "");
    Node d = node("d");
    uint64_t last = 0;
    int n = 0;
    auto r = readdir(
        d, 0,
        [&](const DirEntry& e) {
            last = e.cookie;
            ++n;
            return true;
        },
        kRoot);
    ASSERT_TRUE(r.ok());
    EXPECT_TRUE(r->eof);
    EXPECT_EQ(n, 3);
    r = readdir(
        d, last,
        [&](const DirEntry&) {
            ADD_FAILURE();
            return true;
        },
        kRoot);
    ASSERT_TRUE(r.ok());
    EXPECT_TRUE(r->eof);
}

TEST_F(ReaddirTest, CallbackMayLookupForReaddirplus) {
    ASSERT_EQ(::mkdir(path("d").c_str(), 0755), 0);
    write_file("d/f", "12345");
    Node d = node("d");
    uint64_t size = 0;
    FileHandle handle;
    auto r = readdir(
        d, 0,
        [&](const DirEntry& e) {
            if (e.name != "f") return true;
            auto entry = lookup(d, e.name, kUser4321);  // would be EBUSY inside a scope
            EXPECT_TRUE(entry.ok()) << describe_error(entry.error());
            if (entry.ok()) {
                size = entry->attr.stx_size;
                handle = entry->node.handle;
                EXPECT_EQ(entry->attr.stx_ino, e.ino);
            }
            return true;
        },
        kUser4321);
    ASSERT_TRUE(r.ok());
    EXPECT_EQ(size, 5u);
    EXPECT_EQ(handle, node("d/f").handle);
}

TEST_F(ReaddirTest, PermissionAndErrors) {
    ASSERT_EQ(::mkdir(path("private").c_str(), 0711), 0);
    Node p = node("private");
    auto noop = [](const DirEntry&) { return true; };
    EXPECT_EQ(readdir(p, 0, noop, kUser4321).error(), EACCES);
    EXPECT_TRUE(readdir(p, 0, noop, kRoot).ok());
    write_file("f", "");
    EXPECT_EQ(readdir(node("f"), 0, noop, kRoot).error(), ENOTDIR);
}

TEST_F(ReaddirTest, CookieVerifierDiffersPerDirectory) {
    ASSERT_EQ(::mkdir(path("a").c_str(), 0755), 0);
    ASSERT_EQ(::mkdir(path("b").c_str(), 0755), 0);
    const uint64_t va = *cookie_verifier(node("a"));
    EXPECT_NE(va, 0u);
    EXPECT_NE(va, *cookie_verifier(node("b")));
    // Recreating the directory (new inode / birth time) changes it.
    ASSERT_EQ(::rmdir(path("a").c_str()), 0);
    ASSERT_EQ(::mkdir(path("a").c_str(), 0755), 0);
    EXPECT_NE(va, *cookie_verifier(node("a")));
}

}  // namespace
}  // namespace nfsrdmad::vfs::testing
