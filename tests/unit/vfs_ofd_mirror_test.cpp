// Unit tests of the OFD shell (nfs/vfs/state/ofd_mirror.h) on a real file: a lock the
// table grants is seen by a local F_OFD_GETLK from another description and stops a
// forked child's F_SETLK; a local lock (another description, or a child's POSIX lock)
// makes the table's lock fail with a conflict whose holder is unknown; unlock, split,
// upgrade and release are applied to the kernel; the descriptor budget holds.
#include <fcntl.h>
#include <signal.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cstring>
#include <memory>
#include <thread>
#include <vector>

#include "nfs/vfs/state/lock_table.h"
#include "nfs/vfs/state/ofd_mirror.h"
#include "tests/unit/vfs_test_util.h"

namespace nfsrdmad::vfs::testing {
namespace {

using state::ByteRange;
using state::ClientKey;
using state::kToEof;
using state::Lock;
using state::LockType;
using state::OfdBudget;
using state::OfdMirror;
using state::Protocol;
using state::StateOwner;

constexpr LockType R = LockType::Read;
constexpr LockType W = LockType::Write;

StateOwner owner(uint64_t client, uint8_t tag, Protocol p = Protocol::Nfs4) {
    const uint8_t bytes[] = {tag};
    auto o = StateOwner::make(ClientKey{p, client}, bytes);
    EXPECT_TRUE(o.ok());
    return *o;
}

// What a local F_OFD_GETLK from a description of its own reports over [start, start+len).
struct Seen {
    short type;
    off_t start;
    off_t len;
};

// Exit status of f() run in a forked child.
template <class F>
int in_child(F f) {
    const pid_t pid = ::fork();
    if (pid == 0) ::_exit(f());
    int status = 0;
    EXPECT_EQ(::waitpid(pid, &status, 0), pid);
    return WIFEXITED(status) ? WEXITSTATUS(status) : -1;
}

enum ChildResult { kBlocked = 10, kGot = 11, kError = 12 };

class OfdMirrorTest : public VfsFixture {
  protected:
    void SetUp() override {
        VfsFixture::SetUp();
        write_file("f", std::string(4096, 'x'), 0666);
        file_ = node("f");
        auto d = decode_handle(key_, file_.handle.data());
        ASSERT_TRUE(d.ok());
        key_of_file_ = state::FileKey::of(*d);
    }
    void TearDown() override {
        file_ = Node{};
        VfsFixture::TearDown();
    }

    OfdMirror mirror() { return OfdMirror(file_.fd.get(), budget_); }

    Result<state::LockReply> lock(const StateOwner& o, Lock want) {
        auto m = mirror();
        return table_.lock(key_of_file_, o, want, std::nullopt, &m);
    }

    Seen local_getlk(short type, off_t start, off_t len) {
        int fd = ::open(path("f").c_str(), O_RDWR | O_CLOEXEC);
        EXPECT_GE(fd, 0);
        struct flock fl {};
        fl.l_type = type;
        fl.l_whence = SEEK_SET;
        fl.l_start = start;
        fl.l_len = len;
        EXPECT_EQ(::fcntl(fd, F_OFD_GETLK, &fl), 0);
        ::close(fd);
        return Seen{fl.l_type, fl.l_start, fl.l_len};
    }

    // A forked child's POSIX F_SETLK (another process, another kind of lock).
    int child_setlk(short type, off_t start, off_t len) {
        const std::string p = path("f");
        return in_child([&] {
            int fd = ::open(p.c_str(), O_RDWR);
            if (fd < 0) return int{kError};
            struct flock fl {};
            fl.l_type = type;
            fl.l_whence = SEEK_SET;
            fl.l_start = start;
            fl.l_len = len;
            if (::fcntl(fd, F_SETLK, &fl) == 0) return int{kGot};
            return (errno == EAGAIN || errno == EACCES) ? int{kBlocked} : int{kError};
        });
    }

    Node file_;
    state::FileKey key_of_file_;
    std::shared_ptr<OfdBudget> budget_ = std::make_shared<OfdBudget>(16, 4);
    state::LockTable table_;
};

TEST_F(OfdMirrorTest, GrantedLockIsSeenByLocalGetlkAndStopsAChildsSetlk) {
    const auto a = owner(1, 'a');
    auto r = lock(a, Lock{{100, 199}, W});
    ASSERT_TRUE(r.ok()) << describe_error(r.error());
    ASSERT_FALSE(r->denied);
    EXPECT_EQ(budget_->in_use(), 1u);

    const Seen s = local_getlk(F_RDLCK, 0, 0);
    EXPECT_EQ(s.type, F_WRLCK);
    EXPECT_EQ(s.start, 100);
    EXPECT_EQ(s.len, 100);
    EXPECT_EQ(local_getlk(F_WRLCK, 0, 100).type, F_UNLCK);  // bytes 0..99 are free

    EXPECT_EQ(child_setlk(F_RDLCK, 150, 1), kBlocked);
    EXPECT_EQ(child_setlk(F_WRLCK, 0, 100), kGot);  // the child's lock died with it
}

TEST_F(OfdMirrorTest, ReadLockLetsLocalReadersInAndKeepsWritersOut) {
    ASSERT_FALSE(lock(owner(1, 'a'), Lock{{0, kToEof}, R})->denied);
    EXPECT_EQ(child_setlk(F_RDLCK, 10, 10), kGot);
    EXPECT_EQ(child_setlk(F_WRLCK, 1 << 20, 1), kBlocked);  // to EOF reaches past the size
}

TEST_F(OfdMirrorTest, LocalLockOfAnotherDescriptionDeniesWithUnknownHolder) {
    int fd = ::open(path("f").c_str(), O_RDWR | O_CLOEXEC);
    ASSERT_GE(fd, 0);
    struct flock fl {};
    fl.l_type = F_WRLCK;
    fl.l_whence = SEEK_SET;
    fl.l_start = 10;
    fl.l_len = 10;
    ASSERT_EQ(::fcntl(fd, F_OFD_SETLK, &fl), 0);

    const auto a = owner(1, 'a');
    auto r = lock(a, Lock{{0, 99}, R});
    ASSERT_TRUE(r.ok()) << describe_error(r.error());
    ASSERT_TRUE(r->denied);
    EXPECT_FALSE(r->denied->owner);  // nobody the table knows
    EXPECT_EQ(r->denied->lock, (Lock{{10, 19}, W}));
    EXPECT_TRUE(table_.locks_of(key_of_file_, a).empty());
    EXPECT_EQ(budget_->in_use(), 0u);  // the description opened for it is closed again

    auto m = mirror();
    auto t = table_.test(key_of_file_, a, Lock{{15, 15}, R}, &m);
    ASSERT_TRUE(t.ok());
    ASSERT_TRUE(t->has_value());
    EXPECT_FALSE((*t)->owner);
    EXPECT_EQ((*t)->lock.range, (ByteRange{10, 19}));

    ::close(fd);  // the local lock goes away with its description
    EXPECT_FALSE(lock(a, Lock{{0, 99}, R})->denied);
}

TEST_F(OfdMirrorTest, LockHeldByAForkedChildDeniesWithUnknownHolder) {
    int ready[2], done[2];
    ASSERT_EQ(::pipe(ready), 0);
    ASSERT_EQ(::pipe(done), 0);
    const std::string p = path("f");
    const pid_t pid = ::fork();
    if (pid == 0) {
        ::close(ready[0]);
        ::close(done[1]);
        int fd = ::open(p.c_str(), O_RDWR);
        struct flock fl {};
        fl.l_type = F_RDLCK;
        fl.l_whence = SEEK_SET;
        fl.l_start = 1000;
        fl.l_len = 0;  // to EOF
        char c = (fd >= 0 && ::fcntl(fd, F_SETLK, &fl) == 0) ? 'y' : 'n';
        if (::write(ready[1], &c, 1) != 1) ::_exit(1);
        (void)::read(done[0], &c, 1);  // until the parent closes its end
        ::_exit(0);
    }
    ::close(ready[1]);
    ::close(done[0]);
    char c = 0;
    ASSERT_EQ(::read(ready[0], &c, 1), 1);
    ASSERT_EQ(c, 'y');

    const auto a = owner(7, 'n', Protocol::Nlm);
    EXPECT_FALSE(lock(a, Lock{{0, 999}, W})->denied);  // below the child's lock
    auto r = lock(a, Lock{{5000, 5000}, W});
    ASSERT_TRUE(r.ok()) << describe_error(r.error());
    ASSERT_TRUE(r->denied);
    EXPECT_FALSE(r->denied->owner);
    EXPECT_EQ(r->denied->lock, (Lock{{1000, kToEof}, R}));
    EXPECT_EQ(table_.locks_of(key_of_file_, a), (state::OwnerLocks{Lock{{0, 999}, W}}));
    EXPECT_FALSE(lock(a, Lock{{5000, 5000}, R})->denied);  // reads share

    ::close(done[1]);
    ::close(ready[0]);
    int status = 0;
    ASSERT_EQ(::waitpid(pid, &status, 0), pid);
    EXPECT_FALSE(lock(a, Lock{{5000, 5000}, W})->denied);  // upgrade, now that it is gone
}

TEST_F(OfdMirrorTest, UnlockSplitAndReleaseReachTheKernel) {
    const auto a = owner(1, 'a');
    ASSERT_FALSE(lock(a, Lock{{0, 99}, W})->denied);
    ASSERT_TRUE(table_.unlock(key_of_file_, a, {40, 59}).ok());
    EXPECT_EQ(local_getlk(F_WRLCK, 40, 20).type, F_UNLCK);
    const Seen left = local_getlk(F_WRLCK, 0, 100);
    EXPECT_EQ(left.start, 0);
    EXPECT_EQ(left.len, 40);
    EXPECT_EQ(local_getlk(F_WRLCK, 60, 0).start, 60);
    EXPECT_EQ(budget_->in_use(), 1u);

    // The last unlock closes the description.
    ASSERT_TRUE(table_.unlock(key_of_file_, a, {0, kToEof}).ok());
    EXPECT_EQ(local_getlk(F_WRLCK, 0, 0).type, F_UNLCK);
    EXPECT_EQ(budget_->in_use(), 0u);

    // Releasing a client closes the file's description: no mirror needed.
    ASSERT_FALSE(lock(a, Lock{{0, 9}, W})->denied);
    ASSERT_FALSE(lock(owner(1, 'b'), Lock{{20, 29}, R})->denied);
    EXPECT_EQ(budget_->in_use(a.client()), 1u);  // one file, whatever its owners
    EXPECT_EQ(budget_->in_use(), 1u);
    EXPECT_EQ(local_getlk(F_WRLCK, 0, 0).type, F_WRLCK);
    table_.release_client(a.client());
    EXPECT_EQ(local_getlk(F_WRLCK, 0, 0).type, F_UNLCK);
    EXPECT_EQ(budget_->in_use(), 0u);
}

TEST_F(OfdMirrorTest, UpgradeMovesReadLocksToAWritableDescription) {
    const auto a = owner(1, 'a');
    ASSERT_FALSE(lock(a, Lock{{0, 9}, R})->denied);
    ASSERT_FALSE(lock(a, Lock{{100, 109}, R})->denied);
    ASSERT_FALSE(lock(a, Lock{{0, 4}, W})->denied);
    EXPECT_EQ(table_.locks_of(key_of_file_, a),
              (state::OwnerLocks{Lock{{0, 4}, W}, Lock{{5, 9}, R}, Lock{{100, 109}, R}}));
    EXPECT_EQ(local_getlk(F_RDLCK, 0, 10).type, F_WRLCK);
    const Seen rest = local_getlk(F_WRLCK, 5, 0);
    EXPECT_EQ(rest.type, F_RDLCK);
    EXPECT_EQ(rest.start, 5);
    EXPECT_EQ(child_setlk(F_WRLCK, 105, 1), kBlocked);  // carried over
    EXPECT_EQ(budget_->in_use(), 1u);
}

// One description holds the union of the table's owners: bytes two owners read-lock stay
// locked in the kernel when one of them lets go, by unlock or by release.
TEST_F(OfdMirrorTest, OwnersInTheTableShareOneDescriptionHoldingTheirUnion) {
    const auto a = owner(1, 'a'), b = owner(2, 'b', Protocol::Nlm), c = owner(3, 'c');
    ASSERT_FALSE(lock(a, Lock{{0, 9}, R})->denied);
    ASSERT_FALSE(lock(b, Lock{{5, 14}, R})->denied);
    EXPECT_EQ(budget_->in_use(), 1u);
    EXPECT_EQ(budget_->in_use(a.client()), 1u);
    EXPECT_EQ(budget_->in_use(b.client()), 1u);
    auto r = lock(b, Lock{{0, 14}, W});  // the table names the holder first
    ASSERT_TRUE(r.ok() && r->denied);
    EXPECT_EQ(r->denied->owner, a);

    ASSERT_TRUE(table_.unlock(key_of_file_, a, {0, kToEof}).ok());
    EXPECT_EQ(budget_->in_use(a.client()), 0u);
    Seen kept = local_getlk(F_WRLCK, 0, 0);
    EXPECT_EQ(kept.type, F_RDLCK);
    EXPECT_EQ(kept.start, 5) << "a's unlock took b's bytes 5..9 off the file";
    EXPECT_EQ(kept.len, 10);
    EXPECT_FALSE(lock(b, Lock{{0, 14}, W})->denied);
    EXPECT_EQ(local_getlk(F_RDLCK, 0, 0).len, 15);

    // Back to reads; c shares 10..19; b's release leaves c's bytes, and only those.
    ASSERT_FALSE(lock(b, Lock{{0, 14}, R})->denied);
    ASSERT_FALSE(lock(c, Lock{{10, 19}, R})->denied);
    table_.release_client(b.client());
    kept = local_getlk(F_WRLCK, 0, 0);
    EXPECT_EQ(kept.type, F_RDLCK);
    EXPECT_EQ(kept.start, 10);
    EXPECT_EQ(kept.len, 10);
    EXPECT_EQ(budget_->in_use(), 1u);
    table_.release_owner(key_of_file_, c);
    EXPECT_EQ(local_getlk(F_WRLCK, 0, 0).type, F_UNLCK);
    EXPECT_EQ(budget_->in_use(), 0u);
}

// Under a write lease the mirror must not open the file: it works on the leased
// description it is given (a dup of it), whose locks then outlive the caller's copy, and
// are unlocked, not only closed, when the file's last owner goes.
TEST_F(OfdMirrorTest, AWritableDescriptionGivenIsUsedNotReopened) {
    // A break would raise SIGIO, whose default ends the process: the F_GETLEASE checks
    // below are what fail instead.
    struct SigioIgnored {
        SigioIgnored() { old = ::signal(SIGIO, SIG_IGN); }
        ~SigioIgnored() { ::signal(SIGIO, old); }
        sighandler_t old;
    } sigio;
    int leased = ::open(path("f").c_str(), O_RDWR | O_CLOEXEC);
    ASSERT_GE(leased, 0);
    ASSERT_EQ(::fcntl(leased, F_SETLEASE, F_WRLCK), 0) << std::strerror(errno);
    const auto a = owner(1, 'a');
    OfdMirror m(file_.fd.get(), budget_, leased);
    // Nobody holds a lock yet: a test looks through the leased description.
    auto none = table_.test(key_of_file_, a, Lock{{0, 9}, W}, &m);
    ASSERT_TRUE(none.ok()) << describe_error(none.error());
    EXPECT_FALSE(none->has_value());
    EXPECT_EQ(::fcntl(leased, F_GETLEASE), F_WRLCK) << "the test opened the file";
    auto r = table_.lock(key_of_file_, a, Lock{{0, 9}, R}, std::nullopt, &m);
    ASSERT_TRUE(r.ok()) << describe_error(r.error());
    ASSERT_FALSE(r->denied);
    auto t = table_.test(key_of_file_, owner(2, 'b'), Lock{{20, 29}, W}, &m);
    ASSERT_TRUE(t.ok()) << describe_error(t.error());
    EXPECT_FALSE(t->has_value());
    EXPECT_EQ(::fcntl(leased, F_GETLEASE), F_WRLCK) << "the mirror opened the file";
    ASSERT_EQ(::fcntl(leased, F_SETLEASE, F_UNLCK), 0);

    // The lock is on the leased description itself: its own probe sees nothing.
    struct flock fl {};
    fl.l_type = F_WRLCK;
    fl.l_whence = SEEK_SET;
    ASSERT_EQ(::fcntl(leased, F_OFD_GETLK, &fl), 0);
    EXPECT_EQ(fl.l_type, F_UNLCK);
    EXPECT_EQ(local_getlk(F_WRLCK, 0, 0).type, F_RDLCK);
    // An upgrade needs no new description: it is writable.
    ASSERT_FALSE(table_.lock(key_of_file_, a, Lock{{0, 9}, W}, std::nullopt, &m)->denied);
    EXPECT_EQ(local_getlk(F_RDLCK, 0, 0).type, F_WRLCK);
    // The slot's close must unlock: the caller's copy keeps the description open.
    ASSERT_TRUE(table_.unlock(key_of_file_, a, {0, kToEof}).ok());
    EXPECT_EQ(budget_->in_use(), 0u);
    EXPECT_EQ(local_getlk(F_WRLCK, 0, 0).type, F_UNLCK);

    // Locked again, then the caller's copy closes (the delegation's open goes): the
    // locks stay with the mirror's dup.
    ASSERT_FALSE(table_.lock(key_of_file_, a, Lock{{0, 9}, W}, std::nullopt, &m)->denied);
    ::close(leased);
    EXPECT_EQ(local_getlk(F_RDLCK, 0, 0).type, F_WRLCK);
    table_.release_owner(a);
    EXPECT_EQ(local_getlk(F_RDLCK, 0, 0).type, F_UNLCK);
}

// A read-only description upgraded for a WRITE lock carries every owner's READ locks, not
// only the upgrading owner's.
TEST_F(OfdMirrorTest, AnUpgradeCarriesEveryOwnersReadLocks) {
    const auto a = owner(1, 'a'), b = owner(2, 'b');
    ASSERT_FALSE(lock(a, Lock{{0, 9}, R})->denied);
    ASSERT_FALSE(lock(b, Lock{{20, 29}, R})->denied);
    ASSERT_FALSE(lock(a, Lock{{0, 4}, W})->denied);
    EXPECT_EQ(local_getlk(F_RDLCK, 0, 5).type, F_WRLCK);
    EXPECT_EQ(child_setlk(F_WRLCK, 25, 1), kBlocked) << "b's read lock was lost in the move";
    EXPECT_EQ(child_setlk(F_WRLCK, 7, 1), kBlocked) << "a's read lock was lost in the move";
    EXPECT_EQ(budget_->in_use(), 1u);
}

// A downgrade beside another owner's read lock, then the downgrader lets go: the other
// owner's bytes stay locked, the rest are free.
TEST_F(OfdMirrorTest, ADowngradeBesideAnotherReaderKeepsTheirBytes) {
    const auto a = owner(1, 'a'), b = owner(2, 'b');
    ASSERT_FALSE(lock(a, Lock{{0, 9}, W})->denied);
    ASSERT_TRUE(lock(b, Lock{{5, 14}, R})->denied);   // the table says no
    ASSERT_FALSE(lock(a, Lock{{0, 19}, R})->denied);  // downgrade and extend
    ASSERT_FALSE(lock(b, Lock{{10, 29}, R})->denied);
    EXPECT_EQ(child_setlk(F_RDLCK, 0, 30), kGot) << "reads share";
    ASSERT_TRUE(table_.unlock(key_of_file_, a, {0, kToEof}).ok());
    const Seen s = local_getlk(F_WRLCK, 0, 0);
    EXPECT_EQ(s.type, F_RDLCK);
    EXPECT_EQ(s.start, 10);
    EXPECT_EQ(s.len, 20);
}

TEST_F(OfdMirrorTest, BudgetPerClientFailsWithEnolck) {
    budget_ = std::make_shared<OfdBudget>(16, 1);
    write_file("g", "y", 0666);
    Node g = node("g");
    auto d = decode_handle(key_, g.handle.data());
    ASSERT_TRUE(d.ok());
    const auto a = owner(1, 'a');
    ASSERT_FALSE(lock(a, Lock{{0, 0}, W})->denied);
    OfdMirror mg(g.fd.get(), budget_);
    auto r = table_.lock(state::FileKey::of(*d), a, Lock{{0, 0}, W}, std::nullopt, &mg);
    EXPECT_EQ(r.error(), ENOLCK);
    EXPECT_TRUE(table_.locks_of(state::FileKey::of(*d), a).empty());
    // Another client has its own share of the budget.
    auto other =
        table_.lock(state::FileKey::of(*d), owner(2, 'b'), Lock{{0, 0}, W}, std::nullopt, &mg);
    ASSERT_TRUE(other.ok());
    EXPECT_FALSE(other->denied);
    // The share counts files, not owners: another owner of the client on its file is fine.
    EXPECT_FALSE(lock(owner(1, 'c'), Lock{{5, 5}, W})->denied);
    EXPECT_EQ(budget_->in_use(a.client()), 1u);
}

TEST_F(OfdMirrorTest, BytesBeyondTheKernelsOffsetsAreTheTablesAlone) {
    const auto a = owner(1, 'a');
    const uint64_t far = 1ull << 63;
    ASSERT_FALSE(lock(a, Lock{{far, far + 10}, W})->denied);
    EXPECT_EQ(budget_->in_use(), 0u);  // nothing to mirror
    EXPECT_EQ(local_getlk(F_WRLCK, 0, 0).type, F_UNLCK);
    ASSERT_FALSE(lock(a, Lock{{100, kToEof}, R})->denied);
    const Seen s = local_getlk(F_WRLCK, 0, 0);
    EXPECT_EQ(s.start, 100);
    EXPECT_EQ(s.len, 0);  // to EOF
}

// Many owners on one file from several threads: the file's one description is made and
// closed as owners come and go, the budget stays exact, and nothing is left in the
// kernel at the end. (The table's own locks share that description, so a stale one could
// not show up as a "local" holder; the single-threaded tests above check the bytes.)
TEST_F(OfdMirrorTest, ConcurrentOwnersNeverSeeAPhantomLocalHolder) {
    budget_ = std::make_shared<OfdBudget>(64, 8);
    std::vector<std::thread> threads;
    for (uint64_t th = 0; th < 4; ++th) {
        threads.emplace_back([this, th] {
            const auto o = owner(th, 'x');
            for (int i = 0; i < 400; ++i) {
                const uint64_t off = (static_cast<uint64_t>(i) * 7 + th * 3) % 64;
                const Lock want{{off, off + 7}, (i % 3) ? R : W};
                OfdMirror m(file_.fd.get(), budget_);
                auto r = table_.lock(key_of_file_, o, want, std::nullopt, &m);
                ASSERT_TRUE(r.ok()) << describe_error(r.error());
                if (r->denied) {
                    ASSERT_TRUE(r->denied->owner.has_value()) << "phantom holder";
                }
                if (i % 5 == 0) {
                    ASSERT_TRUE(table_.unlock(key_of_file_, o, {0, 31}).ok());
                }
                if (i % 7 == 0) table_.release_owner(key_of_file_, o);
                if (i % 11 == 0) table_.release_client(o.client());
            }
            table_.release_owner(o);
        });
    }
    for (auto& t : threads) t.join();
    EXPECT_EQ(budget_->in_use(), 0u);
    EXPECT_EQ(local_getlk(F_WRLCK, 0, 0).type, F_UNLCK);
    EXPECT_EQ(table_.file_count(), 0u);
}

TEST_F(OfdMirrorTest, DirectoriesCannotBeLocked) {
    ASSERT_EQ(::mkdir(path("d").c_str(), 0755), 0);
    Node d = node("d");
    auto dec = decode_handle(key_, d.handle.data());
    ASSERT_TRUE(dec.ok());
    OfdMirror m(d.fd.get(), budget_);
    auto r =
        table_.lock(state::FileKey::of(*dec), owner(1, 'a'), Lock{{0, 0}, R}, std::nullopt, &m);
    EXPECT_EQ(r.error(), EISDIR);
    EXPECT_EQ(budget_->in_use(), 0u);
}

}  // namespace
}  // namespace nfsrdmad::vfs::testing
