// Unit tests of nfs/vfs operations: lookup, access, create-type operations, removal,
// rename, link, setattr, fsstat/pathconf.
#include <dirent.h>
#include <sched.h>
#include <sys/mount.h>
#include <sys/sysmacros.h>
#include <sys/wait.h>

#include <atomic>
#include <cstring>
#include <optional>
#include <string>
#include <thread>
#include <vector>

#include "nfs/vfs/sys.h"
#include "tests/unit/vfs_test_util.h"

namespace nfsrdmad::vfs::testing {
namespace {

class LookupTest : public VfsFixture {
  protected:
    // Directory "d" (`mode`, owned by uid:gid) holding "f" (1234's, 0600, "12345"): its
    // node, and its attributes in `st`.
    Node dir_with_file(mode_t mode, uid_t uid, gid_t gid, struct statx& st) {
        EXPECT_EQ(::mkdir(path("d").c_str(), mode), 0);
        EXPECT_EQ(::chown(path("d").c_str(), uid, gid), 0);
        write_file("d/f", "12345", 0600, 1234, 1234);
        Node d = node("d");
        auto read = sys::stat_fd(d.fd.get());
        EXPECT_TRUE(read.ok());
        if (read) st = *read;
        return d;
    }
};

TEST_F(LookupTest, DotDotAtRootIsRoot) {
    auto up = lookup(root_, "..", kRoot);
    ASSERT_TRUE(up.ok()) << describe_error(up.error());
    EXPECT_EQ(up->node.handle, exp_->root_handle());
    EXPECT_EQ(up->attr.stx_ino, stat_path("").st_ino);
    // Again from the result: still the root, never the parent of the export.
    auto up2 = lookup(up->node, "..", kUser4321);
    ASSERT_TRUE(up2.ok());
    EXPECT_EQ(up2->node.handle, exp_->root_handle());
}

TEST_F(LookupTest, DotAndDotDotInsideTheExport) {
    ASSERT_EQ(::mkdir(path("a").c_str(), 0755), 0);
    ASSERT_EQ(::mkdir(path("a/b").c_str(), 0755), 0);
    Node b = node("a/b");
    auto self = lookup(b, ".", kRoot);
    ASSERT_TRUE(self.ok());
    EXPECT_EQ(self->node.handle, b.handle);
    auto parent = lookup(b, "..", kRoot);
    ASSERT_TRUE(parent.ok());
    EXPECT_EQ(parent->attr.stx_ino, stat_path("a").st_ino);
    EXPECT_EQ(parent->node.handle, node("a").handle);
    auto grandparent = lookup(parent->node, "..", kRoot);
    ASSERT_TRUE(grandparent.ok());
    EXPECT_EQ(grandparent->node.handle, exp_->root_handle());
}

TEST_F(LookupTest, DotDotNeverLeavesADirectoryMovedOutOfTheExport) {
    // Deep enough that the walk back to the root takes several steps.
    ASSERT_EQ(::mkdir(path("a").c_str(), 0755), 0);
    ASSERT_EQ(::mkdir(path("a/d").c_str(), 0755), 0);
    ASSERT_EQ(::mkdir(path("a/d/sub").c_str(), 0755), 0);
    Node d = node("a/d");
    Node sub = node("a/d/sub");
    const std::string outside = base_ + "/outside";  // same filesystem, not exported
    ASSERT_EQ(::rename(path("a/d").c_str(), outside.c_str()), 0);

    // sub's parent is now base_/outside, d's parent base_: neither is in the export.
    for (const Identity& id : {kRoot, kUser4321}) {
        EXPECT_EQ(lookup(sub, "..", id).error(), ESTALE);
        EXPECT_EQ(lookup(d, "..", id).error(), ESTALE);
    }
    // Only ".." is refused: the moved directories themselves keep working (no subtree check).
    EXPECT_TRUE(lookup(d, "sub", kRoot).ok());

    // Moved back in, below another directory: ".." works again.
    ASSERT_EQ(::rename(outside.c_str(), path("a/back").c_str()), 0);
    auto up = lookup(sub, "..", kUser4321);
    ASSERT_TRUE(up.ok()) << describe_error(up.error());
    EXPECT_EQ(up->node.handle, d.handle);
    auto up2 = lookup(d, "..", kRoot);
    ASSERT_TRUE(up2.ok()) << describe_error(up2.error());
    EXPECT_EQ(up2->node.handle, node("a").handle);
}

TEST_F(LookupTest, ReturnsAttributesAndErrors) {
    write_file("f", "12345", 0640, 1234, 4321);
    auto e = lookup(root_, "f", kRoot);
    ASSERT_TRUE(e.ok());
    EXPECT_TRUE(S_ISREG(e->attr.stx_mode));
    EXPECT_EQ(e->attr.stx_mode & 07777, 0640u);
    EXPECT_EQ(e->attr.stx_size, 5u);
    EXPECT_EQ(e->attr.stx_uid, 1234u);
    EXPECT_EQ(e->attr.stx_gid, 4321u);
    EXPECT_EQ(lookup(root_, "missing", kRoot).error(), ENOENT);
    EXPECT_EQ(lookup(root_, "", kRoot).error(), EINVAL);
    EXPECT_EQ(lookup(root_, "a/b", kRoot).error(), EINVAL);
    EXPECT_EQ(lookup(root_, std::string(256, 'n'), kRoot).error(), ENAMETOOLONG);
    EXPECT_EQ(lookup(root_, std::string(255, 'n'), kRoot).error(), ENOENT);
    EXPECT_EQ(lookup(e->node, "x", kRoot).error(), ENOTDIR);
    EXPECT_EQ(lookup(e->node, "..", kRoot).error(), ENOTDIR);
}

// lookup_cached: lookup()'s answer without blocking, or EWOULDBLOCK (a reactor's LOOKUP).
TEST_F(LookupTest, WithoutBlockingGivesLookupsAnswerOrSaysItWouldBlock) {
    struct statx st {};
    Node d = dir_with_file(0700, 1234, 1234, st);
    auto slow = lookup(d, "f", kUser1234);
    ASSERT_TRUE(slow.ok());
    auto fast = lookup_cached(d, st, "f", kUser1234);
    ASSERT_TRUE(fast.ok()) << describe_error(fast.error());
    EXPECT_EQ(fast->node.handle, slow->node.handle);
    EXPECT_EQ(fast->attr.stx_ino, slow->attr.stx_ino);
    EXPECT_EQ(fast->attr.stx_size, 5u);
    EXPECT_TRUE(lookup_cached(d, st, "f", kRoot).ok());
    EXPECT_EQ(lookup_cached(d, st, ".", kUser1234)->node.handle, d.handle);
    // No search permission: refused, as the kernel refuses the caller's own lookup.
    EXPECT_EQ(lookup(d, "f", kUser4321).error(), EACCES);
    EXPECT_EQ(lookup_cached(d, st, "f", kUser4321).error(), EACCES);
    // A name the kernel knows is absent (the slow lookup left a negative dentry).
    EXPECT_EQ(lookup(d, "absent", kUser1234).error(), ENOENT);
    EXPECT_EQ(lookup_cached(d, st, "absent", kUser1234).error(), ENOENT);
    EXPECT_EQ(lookup_cached(d, st, "a/b", kUser1234).error(), EINVAL);
    EXPECT_EQ(lookup_cached(d, st, "", kUser1234).error(), EINVAL);
    // What only lookup() answers: "..", and a "directory" that is not one.
    EXPECT_EQ(lookup_cached(d, st, "..", kUser1234).error(), EWOULDBLOCK);
    EXPECT_EQ(lookup_cached(slow->node, slow->attr, "x", kRoot).error(), EWOULDBLOCK);
    // An ACL that gives 4321 search is the kernel's to read, as 4321: a worker's.
    set_access_acl(path("d"), {{0x01, 7}, {0x02, 1, 4321}, {0x04, 0}, {0x10, 1}, {0x20, 0}});
    st = sys::stat_fd(d.fd.get()).value();
    EXPECT_EQ(lookup_cached(d, st, "f", kUser4321).error(), EWOULDBLOCK);
    EXPECT_TRUE(lookup(d, "f", kUser4321).ok());
    EXPECT_TRUE(lookup_cached(d, st, "f", kUser1234).ok());  // the owner: the mode decides
}

// A name not in the dentry cache: the kernel would read the directory, so a worker looks.
TEST_F(LookupTest, WithoutBlockingNeverReadsTheDirectory) {
    ASSERT_EQ(::mkdir(path("d").c_str(), 0755), 0);
    Node d = node("d");
    auto st = sys::stat_fd(d.fd.get());
    ASSERT_TRUE(st.ok());
    // Never named in this new directory: no dentry, positive or negative.
    EXPECT_EQ(lookup_cached(d, *st, "never-named", kRoot).error(), EWOULDBLOCK);
    EXPECT_EQ(lookup(d, "never-named", kRoot).error(), ENOENT);
    EXPECT_EQ(lookup_cached(d, *st, "never-named", kRoot).error(), ENOENT);
}

// READDIRPLUS's and READDIR's lookups: search permission asked once, then no switch.
TEST_F(LookupTest, SearchPermissionOnceThenLookupsAsTheServer) {
    struct statx st {};
    Node d = dir_with_file(0710, 1234, 777, st);
    EXPECT_TRUE(may_search(d, st, kUser1234).value());
    EXPECT_TRUE(may_search(d, st, Identity{4321, 1, {777}}).value());  // the group's x
    EXPECT_FALSE(may_search(d, st, kUser4321).value());
    EXPECT_TRUE(may_search(d, st, kRoot).value());
    const uint64_t before = identity_switches_on_this_thread();
    auto fast = lookup_permitted(d, "f");
    EXPECT_EQ(identity_switches_on_this_thread(), before);
    ASSERT_TRUE(fast.ok());
    auto slow = lookup(d, "f", kUser1234);
    ASSERT_TRUE(slow.ok());
    EXPECT_EQ(fast->node.handle, slow->node.handle);
    EXPECT_EQ(fast->attr.stx_ino, slow->attr.stx_ino);
    EXPECT_EQ(lookup_permitted(d, "absent").error(), ENOENT);
    EXPECT_EQ(lookup_permitted(d, "a/b").error(), EINVAL);
    // ".." still never leaves the export.
    EXPECT_EQ(lookup_permitted(root_, "..")->node.handle, root_.handle);
    // An ACL entry that gives 4321 search: the kernel decides, as 4321.
    set_access_acl(path("d"), {{0x01, 7}, {0x02, 1, 4321}, {0x04, 1}, {0x10, 1}, {0x20, 0}});
    st = sys::stat_fd(d.fd.get()).value();
    EXPECT_TRUE(may_search(d, st, kUser4321).value());
    EXPECT_FALSE(may_search(d, st, Identity{5555, 5555, {}}).value());
    EXPECT_EQ(may_search(fast->node, fast->attr, kRoot).error(), ENOTDIR);
}

// READDIRPLUS's lookups by name (two system calls, nothing opened): lookup_permitted()'s
// handle and attributes for every kind of entry; by name exactly where inode_of() reads the
// file system's handles (ext4, xfs), by opening the name otherwise and for "." and "..".
TEST_F(LookupTest, ListedEntriesByNameAreWhatOpeningThemGives) {
    struct statx st {};
    Node d = dir_with_file(0755, 1234, 777, st);
    ASSERT_EQ(::mkdir(path("d/sub").c_str(), 0700), 0);
    ASSERT_EQ(::symlink("f", path("d/link").c_str()), 0);
    ASSERT_EQ(::mkfifo(path("d/fifo").c_str(), 0600), 0);
    auto kernel = kernel_handle_of(d.fd.get());
    ASSERT_TRUE(kernel.ok());
    const bool readable = inode_of(*kernel).has_value();
    for (const char* name : {"f", "sub", "link", "fifo"}) {
        SCOPED_TRACE(name);
        auto listed = lookup_listed(d, name);
        ASSERT_TRUE(listed.ok()) << describe_error(listed.error());
        auto opened = lookup_permitted(d, name);
        ASSERT_TRUE(opened.ok());
        EXPECT_EQ(listed->by_name, readable);
        EXPECT_EQ(listed->handle, opened->node.handle);
        EXPECT_EQ(listed->attr.stx_ino, opened->attr.stx_ino);
        EXPECT_EQ(listed->attr.stx_mode, opened->attr.stx_mode);
        EXPECT_EQ(listed->attr.stx_size, opened->attr.stx_size);
        EXPECT_EQ(listed->attr.stx_uid, opened->attr.stx_uid);
        EXPECT_EQ(listed->attr.stx_mask & sys::kStatxMask, opened->attr.stx_mask & sys::kStatxMask);
    }
    // The symlink itself, never its target.
    EXPECT_TRUE(S_ISLNK(lookup_listed(d, "link")->attr.stx_mode));
    // "." and "..": opened, so ".." never leaves the export.
    auto dot = lookup_listed(d, ".");
    ASSERT_TRUE(dot.ok());
    EXPECT_FALSE(dot->by_name);
    EXPECT_EQ(dot->handle, d.handle);
    auto up = lookup_listed(root_, "..");
    ASSERT_TRUE(up.ok());
    EXPECT_FALSE(up->by_name);
    EXPECT_EQ(up->handle, root_.handle);
    EXPECT_EQ(lookup_listed(d, "absent").error(), ENOENT);
    EXPECT_EQ(lookup_listed(d, "a/b").error(), EINVAL);
    EXPECT_EQ(lookup_listed(d, std::string(300, 'x')).error(), ENAMETOOLONG);
}

// Two names swapped over and over (renameat2 RENAME_EXCHANGE) while they are listed: every
// answer pairs a handle with that same object's attributes, never one name's handle with
// the other's attributes (the swap can fall between the two system calls).
TEST_F(LookupTest, ListedEntriesNeverPairTwoObjects) {
    write_file("a", "a");
    write_file("b", "bb");
    auto kernel = kernel_handle_of(root_.fd.get());
    ASSERT_TRUE(kernel.ok());
    ASSERT_TRUE(inode_of(*kernel).has_value()) << "needs a file system whose handles hold the "
                                                  "inode number (ext4, xfs): "
                                               << export_dir_;
    std::atomic<bool> stop{false};
    std::atomic<uint64_t> swaps{0};
    std::thread swapper([&] {
        while (!stop.load(std::memory_order_relaxed)) {
            if (::renameat2(AT_FDCWD, path("a").c_str(), AT_FDCWD, path("b").c_str(),
                            RENAME_EXCHANGE) == 0)
                swaps.fetch_add(1, std::memory_order_relaxed);
        }
    });
    int by_name = 0, opened = 0, mismatched = 0;
    for (int i = 0; i < 20000; ++i) {
        auto l = lookup_listed(root_, i % 2 ? "a" : "b");
        if (!l) continue;
        (l->by_name ? by_name : opened)++;
        auto decoded = decode_handle(key_, l->handle.data());
        if (!decoded || inode_of(decoded->kernel) != l->attr.stx_ino) ++mismatched;
    }
    stop = true;
    swapper.join();
    EXPECT_EQ(mismatched, 0);
    EXPECT_GT(swaps.load(), 0u);
    EXPECT_GT(by_name, 0);
}

// Where a kernel handle keeps its inode number: the two layouts known, nothing else.
TEST(InodeOfHandle, OnlyTheLayoutsKnown) {
    KernelHandle h;
    h.type = 1;  // FILEID_INO32_GEN: {u32 ino, u32 generation}
    h.size = 8;
    const uint32_t ino32 = 0x12345678, gen = 7;
    std::memcpy(h.bytes.data(), &ino32, 4);
    std::memcpy(h.bytes.data() + 4, &gen, 4);
    EXPECT_EQ(inode_of(h), std::optional<uint64_t>(0x12345678));
    h.size = 12;  // tmpfs also says type 1, with {generation, ino lo, ino hi}
    EXPECT_EQ(inode_of(h), std::nullopt);
    h.type = 0x81;  // xfs, 64-bit inode numbers: {u64 ino, u32 generation}
    const uint64_t ino64 = 0x123456789aULL;
    std::memcpy(h.bytes.data(), &ino64, 8);
    std::memcpy(h.bytes.data() + 8, &gen, 4);
    EXPECT_EQ(inode_of(h), std::optional<uint64_t>(0x123456789aULL));
    h.size = 8;
    EXPECT_EQ(inode_of(h), std::nullopt);
    h.type = 0x4d;  // btrfs
    h.size = 20;
    EXPECT_EQ(inode_of(h), std::nullopt);
}

// A worker's LOOKUP: lookup()'s answer, the permission checked without a switch.
TEST_F(LookupTest, AsTheCallerWithOneCheckAndNoSwitch) {
    struct statx st {};
    Node d = dir_with_file(0710, 1234, 777, st);
    const Identity group_member{4321, 1, {777}};
    const uint64_t before = identity_switches_on_this_thread();
    auto owner = lookup_as(d, st, "f", kUser1234);
    auto member = lookup_as(d, st, "f", group_member);
    auto other = lookup_as(d, st, "f", kUser4321);
    EXPECT_EQ(identity_switches_on_this_thread(), before);
    ASSERT_TRUE(owner.ok());
    ASSERT_TRUE(member.ok());
    EXPECT_EQ(owner->node.handle, lookup(d, "f", kUser1234)->node.handle);
    EXPECT_EQ(member->node.handle, owner->node.handle);
    EXPECT_EQ(other.error(), EACCES);
    EXPECT_EQ(lookup(d, "f", kUser4321).error(), EACCES);
    EXPECT_EQ(lookup_as(d, st, "absent", kUser1234).error(), ENOENT);
    EXPECT_EQ(lookup_as(d, st, "a/b", kUser1234).error(), EINVAL);
    EXPECT_EQ(lookup_as(d, st, "..", kUser1234)->node.handle, root_.handle);
    // Not a directory: lookup()'s own answer.
    EXPECT_EQ(lookup_as(owner->node, owner->attr, "x", kUser1234).error(), ENOTDIR);
}

TEST_F(LookupTest, SymlinkIsReturnedNotFollowed) {
    ASSERT_EQ(::symlink("/etc", path("link").c_str()), 0);
    auto e = lookup(root_, "link", kRoot);
    ASSERT_TRUE(e.ok()) << describe_error(e.error());
    EXPECT_TRUE(S_ISLNK(e->attr.stx_mode));
    auto target = readlink(e->node);
    ASSERT_TRUE(target.ok());
    EXPECT_EQ(*target, "/etc");
    EXPECT_EQ(lookup(root_, "link/passwd", kRoot).error(), EINVAL);
    EXPECT_EQ(lookup(e->node, "passwd", kRoot).error(), ENOTDIR);
    EXPECT_EQ(readlink(root_).error(), EINVAL);

    // A relative symlink escaping upwards is just as inert.
    ASSERT_EQ(::symlink("../../../etc", path("up").c_str()), 0);
    auto up = lookup(root_, "up", kRoot);
    ASSERT_TRUE(up.ok());
    EXPECT_TRUE(S_ISLNK(up->attr.stx_mode));
    EXPECT_EQ(*readlink(up->node), "../../../etc");
}

TEST_F(LookupTest, SearchPermissionIsEnforced) {
    ASSERT_EQ(::mkdir(path("private").c_str(), 0700), 0);
    write_file("private/f", "x");
    Node priv = node("private");
    EXPECT_EQ(lookup(priv, "f", kUser4321).error(), EACCES);
    EXPECT_EQ(lookup(priv, ".", kUser4321).error(), EACCES);
    EXPECT_TRUE(lookup(priv, "f", kRoot).ok());
}

TEST_F(LookupTest, ResolveFlagsAreStrict) {
    static_assert((sys::kResolveBeneath & RESOLVE_BENEATH) != 0);
    static_assert((sys::kResolveBeneath & RESOLVE_NO_MAGICLINKS) != 0);
    static_assert((sys::kResolveBeneath & RESOLVE_NO_XDEV) != 0);
    static_assert((sys::kResolveBeneath & RESOLVE_NO_SYMLINKS) != 0);
    SUCCEED();
}

// peek: type and handle of a name, read as root (two system calls, nothing opened): the
// handle is the one LOOKUP gives, a symlink is not followed, a directory the caller could
// not search is no obstacle, and no name outside the directory is reachable.
TEST_F(LookupTest, PeekGivesTypeAndHandleAsRoot) {
    ASSERT_EQ(::mkdir(path("closed").c_str(), 0700), 0);
    write_file("closed/f", "x");
    ASSERT_EQ(::symlink("closed/f", path("link").c_str()), 0);
    Node root = node("");
    Node closed = node("closed");
    auto f = peek(closed, "f");
    ASSERT_TRUE(f) << describe_error(f.error());
    EXPECT_TRUE(S_ISREG(f->mode));
    auto looked = lookup(closed, "f", kRoot);
    ASSERT_TRUE(looked);
    EXPECT_EQ(f->handle, looked->node.handle);
    EXPECT_FALSE(lookup(closed, "f", kUser1234));  // the caller could not have seen it
    auto l = peek(root, "link");
    ASSERT_TRUE(l);
    EXPECT_TRUE(S_ISLNK(l->mode));
    EXPECT_TRUE(S_ISDIR(peek(root, "closed")->mode));
    EXPECT_EQ(peek(root, "missing").error(), ENOENT);
    EXPECT_EQ(peek(root, ".").error(), EINVAL);
    EXPECT_EQ(peek(closed, "..").error(), EINVAL);
    EXPECT_EQ(peek(root, "closed/f").error(), EINVAL);
}

// Runs body in a forked child with a private mount namespace (mounts vanish with it).
// Returns the child's exit code; 77 = could not set up (skip).
template <class F>
int in_private_mount_namespace(F body) {
    pid_t pid = ::fork();
    if (pid == 0) {
        if (::unshare(CLONE_NEWNS) != 0) ::_exit(77);
        if (::mount(nullptr, "/", nullptr, MS_REC | MS_PRIVATE, nullptr) != 0) ::_exit(77);
        ::_exit(body());
    }
    int status = 0;
    ::waitpid(pid, &status, 0);
    return WIFEXITED(status) ? WEXITSTATUS(status) : 128;
}

TEST_F(LookupTest, MountPointsAreNotCrossed) {
    ASSERT_EQ(::mkdir(path("tmpfs").c_str(), 0755), 0);
    ASSERT_EQ(::mkdir(path("bind").c_str(), 0755), 0);
    ASSERT_EQ(::mkdir(path("src").c_str(), 0755), 0);
    const std::string dir = export_dir_;
    const HandleKey key = key_;
    const int rc = in_private_mount_namespace([&]() -> int {
        if (::mount("tmpfs", (dir + "/tmpfs").c_str(), "tmpfs", 0, nullptr) != 0) return 77;
        if (::mount((dir + "/src").c_str(), (dir + "/bind").c_str(), nullptr, MS_BIND, nullptr) !=
            0)
            return 77;
        auto table = ExportTable::create({ExportSpec{dir, 0, {}}}, key);
        if (!table) return 10;
        auto root = (*table)->exports()[0]->root();
        if (!root) return 11;
        if (lookup(*root, "tmpfs", kRoot).error() != EXDEV) return 12;
        if (lookup(*root, "bind", kRoot).error() != EXDEV) return 13;  // same fs, other mount
        if (!lookup(*root, "src", kRoot)) return 14;
        if (peek(*root, "tmpfs").error() != EXDEV) return 15;
        if (peek(*root, "bind").error() != EXDEV) return 16;
        if (!peek(*root, "src")) return 17;
        if (lookup_listed(*root, "tmpfs").error() != EXDEV) return 18;
        if (lookup_listed(*root, "bind").error() != EXDEV) return 19;
        if (!lookup_listed(*root, "src")) return 20;
        return 0;
    });
    if (rc == 77) GTEST_SKIP() << "cannot create a mount namespace here";
    EXPECT_EQ(rc, 0);
}

// ---------------------------------------------------------------- access

class AccessTest : public VfsFixture {};

TEST_F(AccessTest, OwnerGroupOther) {
    write_file("f", "x", 0640, 1234, 500);
    Node f = node("f");
    EXPECT_EQ(*access(f, kAccessAll, kUser1234), kAccessRead | kAccessModify | kAccessExtend);
    EXPECT_EQ(*access(f, kAccessAll, Identity{4321, 4321, {500}}), kAccessRead);  // via group
    EXPECT_EQ(*access(f, kAccessAll, Identity{4321, 500, {}}), kAccessRead);      // primary gid
    EXPECT_EQ(*access(f, kAccessAll, kUser4321), 0u);
    EXPECT_EQ(*access(f, kAccessRead, kUser1234), kAccessRead);  // only what was asked
}

TEST_F(AccessTest, RootGetsEverythingButExecuteOfNonExecutables) {
    write_file("data", "x", 0000);
    write_file("tool", "x", 0100);
    EXPECT_EQ(*access(node("data"), kAccessAll, kRoot),
              kAccessRead | kAccessModify | kAccessExtend);
    EXPECT_EQ(*access(node("tool"), kAccessAll, kRoot),
              kAccessRead | kAccessModify | kAccessExtend | kAccessExecute);
    EXPECT_EQ(*access(node("tool"), kAccessAll, kUser1234), 0u);
}

TEST_F(AccessTest, Directories) {
    ASSERT_EQ(::mkdir(path("d").c_str(), 0755), 0);
    ASSERT_EQ(::chown(path("d").c_str(), 1234, 1234), 0);
    Node d = node("d");
    EXPECT_EQ(*access(d, kAccessAll, kUser1234),
              kAccessRead | kAccessLookup | kAccessModify | kAccessExtend | kAccessDelete);
    EXPECT_EQ(*access(d, kAccessAll, kUser4321), kAccessRead | kAccessLookup);
    EXPECT_EQ(*access(d, kAccessAll, kRoot),
              kAccessRead | kAccessLookup | kAccessModify | kAccessExtend | kAccessDelete);
    ASSERT_EQ(::chmod(path("d").c_str(), 0311), 0);  // -wx--x--x
    EXPECT_EQ(*access(d, kAccessAll, kUser1234),
              kAccessLookup | kAccessModify | kAccessExtend | kAccessDelete);
    EXPECT_EQ(*access(d, kAccessAll, kUser4321), kAccessLookup);
}

// ---------------------------------------------------------------- create & friends

class CreateTest : public VfsFixture {};

TEST_F(CreateTest, FileIsOwnedByTheCaller) {
    auto e = create(root_, "mine", 0640, CreateHow::Guarded, 0, kUser1234);
    ASSERT_TRUE(e.ok()) << describe_error(e.error());
    EXPECT_EQ(e->attr.stx_uid, 1234u);
    EXPECT_EQ(e->attr.stx_gid, 1234u);
    EXPECT_EQ(e->attr.stx_mode & 07777, 0640u);  // no umask applied
    EXPECT_EQ(stat_path("mine").st_uid, 1234u);
    EXPECT_EQ(stat_path("mine").st_mode & 07777, 0640u);
    EXPECT_EQ(current_fsuid(), 0u);  // restored
    auto resolved = table_->resolve(e->node.handle.data());
    ASSERT_TRUE(resolved.ok());
    EXPECT_EQ(getattr(*resolved)->stx_ino, stat_path("mine").st_ino);
}

TEST_F(CreateTest, PermissionOfTheDirectoryIsEnforced) {
    ASSERT_EQ(::mkdir(path("ro").c_str(), 0755), 0);
    Node ro = node("ro");
    EXPECT_EQ(create(ro, "x", 0644, CreateHow::Unchecked, 0, kUser1234).error(), EACCES);
    EXPECT_EQ(mkdir(ro, "x", 0755, kUser1234).error(), EACCES);
    EXPECT_TRUE(create(ro, "x", 0644, CreateHow::Unchecked, 0, kRoot).ok());
}

TEST_F(CreateTest, GuardedAndUnchecked) {
    write_file("exists", "data", 0600, 1234, 1234);
    const FileHandle h = node("exists").handle;
    EXPECT_EQ(create(root_, "exists", 0644, CreateHow::Guarded, 0, kUser1234).error(), EEXIST);
    auto e = create(root_, "exists", 0644, CreateHow::Unchecked, 0, kUser1234);
    ASSERT_TRUE(e.ok());
    EXPECT_EQ(e->node.handle, h);
    EXPECT_EQ(e->attr.stx_size, 4u);             // untouched
    EXPECT_EQ(e->attr.stx_mode & 07777, 0600u);  // mode not applied to existing file
    ASSERT_EQ(::mkdir(path("dir").c_str(), 0755), 0);
    EXPECT_EQ(create(root_, "dir", 0644, CreateHow::Unchecked, 0, kRoot).error(), EEXIST);
    EXPECT_EQ(create(root_, ".", 0644, CreateHow::Unchecked, 0, kRoot).error(), EEXIST);
    EXPECT_EQ(create(root_, "a/b", 0644, CreateHow::Unchecked, 0, kRoot).error(), EINVAL);
}

TEST_F(CreateTest, ExclusiveCreateIsIdempotent) {
    const uint64_t verf = 0x8123456789abcdefULL;
    auto first = create(root_, "excl", 0600, CreateHow::Exclusive, verf, kUser1234);
    ASSERT_TRUE(first.ok()) << describe_error(first.error());
    EXPECT_EQ(first->attr.stx_mtime.tv_sec, 0x01234567);  // high bit cleared
    EXPECT_EQ(first->attr.stx_atime.tv_sec, 0x09abcdef);

    auto retransmit = create(root_, "excl", 0600, CreateHow::Exclusive, verf, kUser1234);
    ASSERT_TRUE(retransmit.ok()) << describe_error(retransmit.error());
    EXPECT_EQ(retransmit->node.handle, first->node.handle);

    EXPECT_EQ(create(root_, "excl", 0600, CreateHow::Exclusive, verf + 1, kUser1234).error(),
              EEXIST);
    // Once the client has set real attributes, the verifier no longer matches.
    SetAttrs sa;
    sa.mtime = TimeChange::server();
    ASSERT_TRUE(setattr(first->node, sa, kUser1234).ok());
    EXPECT_EQ(create(root_, "excl", 0600, CreateHow::Exclusive, verf, kUser1234).error(), EEXIST);
}

TEST_F(CreateTest, MkdirSymlinkMknod) {
    auto d = mkdir(root_, "sub", 0750, kUser1234);
    ASSERT_TRUE(d.ok());
    EXPECT_TRUE(S_ISDIR(d->attr.stx_mode));
    EXPECT_EQ(d->attr.stx_mode & 07777, 0750u);
    EXPECT_EQ(d->attr.stx_uid, 1234u);
    EXPECT_EQ(mkdir(root_, "sub", 0750, kUser1234).error(), EEXIST);

    auto l = symlink(d->node, "ln", "../target/../x", 0777, kUser1234);
    ASSERT_TRUE(l.ok());
    EXPECT_TRUE(S_ISLNK(l->attr.stx_mode));
    EXPECT_EQ(l->attr.stx_uid, 1234u);
    EXPECT_EQ(*readlink(l->node), "../target/../x");
    EXPECT_EQ(symlink(root_, "empty", "", 0777, kRoot).error(), EINVAL);
    EXPECT_EQ(symlink(root_, "long", std::string(4096, 'x'), 0777, kRoot).error(), ENAMETOOLONG);

    auto fifo = mknod(root_, "fifo", SpecialType::Fifo, 0620, 0, kUser1234);
    ASSERT_TRUE(fifo.ok()) << describe_error(fifo.error());
    EXPECT_TRUE(S_ISFIFO(fifo->attr.stx_mode));
    EXPECT_EQ(fifo->attr.stx_mode & 07777, 0620u);
    EXPECT_TRUE(S_ISFIFO(stat_path("fifo").st_mode));

    auto sock = mknod(root_, "sock", SpecialType::Socket, 0600, 0, kRoot);
    ASSERT_TRUE(sock.ok());
    EXPECT_TRUE(S_ISSOCK(sock->attr.stx_mode));

    EXPECT_EQ(mknod(root_, "null", SpecialType::CharDevice, 0666, makedev(1, 3), kUser1234).error(),
              EPERM);
    auto chr = mknod(root_, "null", SpecialType::CharDevice, 0666, makedev(1, 3), kRoot);
    ASSERT_TRUE(chr.ok());
    EXPECT_TRUE(S_ISCHR(chr->attr.stx_mode));
    EXPECT_EQ(chr->attr.stx_rdev_major, 1u);
    EXPECT_EQ(chr->attr.stx_rdev_minor, 3u);
}

// ---------------------------------------------------------------- remove / rename / link

class DirOpsTest : public VfsFixture {};

TEST_F(DirOpsTest, RemoveAndRmdir) {
    write_file("f", "x");
    ASSERT_EQ(::mkdir(path("d").c_str(), 0755), 0);
    ASSERT_EQ(::mkdir(path("full").c_str(), 0755), 0);
    write_file("full/inner", "x");
    EXPECT_EQ(remove(root_, "d", kRoot).error(), EISDIR);
    EXPECT_EQ(rmdir(root_, "f", kRoot).error(), ENOTDIR);
    EXPECT_EQ(rmdir(root_, "full", kRoot).error(), ENOTEMPTY);
    EXPECT_EQ(remove(root_, "missing", kRoot).error(), ENOENT);
    EXPECT_EQ(remove(root_, ".", kRoot).error(), EINVAL);
    EXPECT_EQ(rmdir(root_, "..", kRoot).error(), EINVAL);
    ASSERT_EQ(::mkdir(path("locked").c_str(), 0755), 0);
    write_file("locked/f", "x", 0666);
    EXPECT_EQ(remove(node("locked"), "f", kUser4321).error(), EACCES);  // needs w on the dir
    EXPECT_EQ(stat_path("locked/f").st_size, 1);
}

TEST_F(DirOpsTest, RemoveSucceeds) {
    write_file("f", "x");
    ASSERT_EQ(::mkdir(path("d").c_str(), 0755), 0);
    EXPECT_TRUE(remove(root_, "f", kRoot).ok());
    EXPECT_TRUE(rmdir(root_, "d", kRoot).ok());
    EXPECT_EQ(lookup(root_, "f", kRoot).error(), ENOENT);
    EXPECT_EQ(lookup(root_, "d", kRoot).error(), ENOENT);
}

TEST_F(DirOpsTest, RenameOverAnExistingFile) {
    write_file("a", "AAA");
    write_file("b", "BBBBB");
    const FileHandle a = node("a").handle;
    ASSERT_EQ(::mkdir(path("sub").c_str(), 0755), 0);
    Node sub = node("sub");
    ASSERT_TRUE(rename(root_, "a", root_, "b", kRoot).ok());
    EXPECT_EQ(lookup(root_, "a", kRoot).error(), ENOENT);
    auto b = lookup(root_, "b", kRoot);
    ASSERT_TRUE(b.ok());
    EXPECT_EQ(b->node.handle, a);  // the handle follows the file
    EXPECT_EQ(b->attr.stx_size, 3u);
    ASSERT_TRUE(rename(root_, "b", sub, "c", kRoot).ok());
    EXPECT_EQ(node("sub/c").handle, a);
    ASSERT_EQ(::mkdir(path("empty").c_str(), 0755), 0);
    EXPECT_EQ(rename(sub, "c", root_, "empty", kRoot).error(), EISDIR);   // file over a dir
    EXPECT_EQ(rename(root_, "empty", sub, "c", kRoot).error(), ENOTDIR);  // dir over a file
    EXPECT_EQ(rename(sub, "..", root_, "x", kRoot).error(), EINVAL);
    EXPECT_EQ(rename(sub, "c", root_, "..", kRoot).error(), EEXIST);
}

TEST_F(DirOpsTest, RenameAcrossExportsIsExdev) {
    ASSERT_EQ(::mkdir(path("a").c_str(), 0755), 0);
    ASSERT_EQ(::mkdir(path("b").c_str(), 0755), 0);
    write_file("a/f", "x");
    auto two = make_table({path("a"), path("b")});
    ASSERT_NE(two, nullptr);
    auto ra = two->exports()[0]->root();
    auto rb = two->exports()[1]->root();
    ASSERT_TRUE(ra.ok() && rb.ok());
    EXPECT_EQ(rename(*ra, "f", *rb, "f", kRoot).error(), EXDEV);
    auto f = lookup(*ra, "f", kRoot);
    ASSERT_TRUE(f.ok());
    EXPECT_EQ(link(f->node, *rb, "g", kRoot).error(), EXDEV);
}

TEST_F(DirOpsTest, HardLinkCount) {
    write_file("f", "x", 0644, 1234, 1234);
    Node f = node("f");
    EXPECT_EQ(getattr(f)->stx_nlink, 1u);
    ASSERT_TRUE(link(f, root_, "g", kUser1234).ok());
    EXPECT_EQ(getattr(f)->stx_nlink, 2u);
    EXPECT_EQ(stat_path("g").st_ino, stat_path("f").st_ino);
    EXPECT_EQ(node("g").handle, f.handle);
    EXPECT_EQ(stat_path("g").st_uid, 1234u);
    EXPECT_EQ(link(f, root_, "g", kUser1234).error(), EEXIST);
    ASSERT_TRUE(remove(root_, "f", kUser1234).ok());
    EXPECT_EQ(getattr(f)->stx_nlink, 1u);

    ASSERT_EQ(::mkdir(path("d").c_str(), 0755), 0);
    EXPECT_EQ(link(node("d"), root_, "d2", kRoot).error(), EPERM);
}

TEST_F(DirOpsTest, LinkToASymlinkLinksTheSymlink) {
    ASSERT_EQ(::symlink("/etc/passwd", path("sl").c_str()), 0);
    ASSERT_TRUE(link(node("sl"), root_, "sl2", kRoot).ok());
    EXPECT_TRUE(S_ISLNK(stat_path("sl2").st_mode));
    EXPECT_EQ(stat_path("sl2").st_ino, stat_path("sl").st_ino);
}

// dir_change.h: the directory's readings are taken around the change itself. Link
// counts make it visible: a directory made in (or moved into) `d` adds exactly one.
TEST_F(DirOpsTest, DirChangeBracketsTheChange) {
    ASSERT_EQ(::mkdir(path("a").c_str(), 0755), 0);
    ASSERT_EQ(::mkdir(path("b").c_str(), 0755), 0);
    Node a = node("a"), b = node("b");
    DirChange made;
    ASSERT_TRUE(mkdir(a, "sub", 0755, kRoot, &made).ok());
    EXPECT_TRUE(made.atomic);
    EXPECT_EQ(made.after.stx_nlink, made.before.stx_nlink + 1);

    DirChange from, to;
    ASSERT_TRUE(rename(a, "sub", b, "sub", kRoot, &from, &to).ok());
    EXPECT_TRUE(from.atomic && to.atomic);
    EXPECT_EQ(from.before.stx_nlink, from.after.stx_nlink + 1);
    EXPECT_EQ(to.after.stx_nlink, to.before.stx_nlink + 1);

    DirChange gone;
    ASSERT_TRUE(rmdir(b, "sub", kRoot, &gone).ok());
    EXPECT_TRUE(gone.atomic);
    EXPECT_EQ(gone.before.stx_nlink, gone.after.stx_nlink + 1);

    // A file: the readings are the directory's, the last one what a statx says now.
    DirChange file;
    ASSERT_TRUE(create(a, "f", 0644, CreateHow::Guarded, 0, kRoot, nullptr, &file).ok());
    EXPECT_TRUE(file.atomic);
    struct statx now {};
    ASSERT_EQ(::statx(AT_FDCWD, path("a").c_str(), 0, STATX_BASIC_STATS, &now), 0);
    EXPECT_EQ(file.after.stx_ino, now.stx_ino);
    EXPECT_EQ(file.after.stx_ctime.tv_sec, now.stx_ctime.tv_sec);
    EXPECT_EQ(file.after.stx_ctime.tv_nsec, now.stx_ctime.tv_nsec);

    // A change that fails still brackets nothing: the directory is as it was.
    DirChange none;
    EXPECT_EQ(remove(a, "missing", kRoot, &none).error(), ENOENT);
    EXPECT_TRUE(none.atomic);
    EXPECT_EQ(none.before.stx_nlink, none.after.stx_nlink);
    EXPECT_EQ(none.before.stx_ctime.tv_nsec, none.after.stx_ctime.tv_nsec);
    // A name refused before anything is tried reads nothing.
    DirChange refused;
    EXPECT_EQ(link(node("a/f"), a, "..", kRoot, &refused).error(), EEXIST);
    EXPECT_FALSE(refused.atomic);
}

// Changes of one directory from several threads (the daemon's workers) each see only
// their own: without the directory's change lock another thread's mkdir lands between
// a thread's two readings.
TEST_F(DirOpsTest, ChangesOfOneDirectoryDoNotInterleave) {
    ASSERT_EQ(::mkdir(path("d").c_str(), 0755), 0);
    const Node d = node("d");
    constexpr int kThreads = 4, kEach = 150;
    std::atomic<int> interleaved{0}, failed{0};
    std::vector<std::thread> threads;
    for (int t = 0; t < kThreads; ++t)
        threads.emplace_back([&, t] {
            for (int i = 0; i < kEach; ++i) {
                DirChange c;
                const std::string name = std::to_string(t) + "-" + std::to_string(i);
                if (!mkdir(d, name, 0755, kRoot, &c).ok() || !c.atomic) {
                    ++failed;
                    continue;
                }
                if (c.after.stx_nlink != c.before.stx_nlink + 1) ++interleaved;
            }
        });
    for (auto& t : threads) t.join();
    EXPECT_EQ(failed.load(), 0);
    EXPECT_EQ(interleaved.load(), 0);
    EXPECT_EQ(getattr(d)->stx_nlink, 2u + kThreads * kEach);
}

// ---------------------------------------------------------------- setattr

class SetAttrTest : public VfsFixture {};

TEST_F(SetAttrTest, ModeOwnerSizeTimes) {
    write_file("f", "0123456789abcdef", 0644);
    Node f = node("f");
    SetAttrs sa;
    sa.mode = 04751;
    sa.uid = 1234;
    sa.gid = 4321;
    sa.size = 10;
    sa.atime = TimeChange::client({1000000000, 5});
    sa.mtime = TimeChange::client({1200000000, 7});
    auto r = setattr(f, sa, kRoot);
    ASSERT_TRUE(r.ok()) << describe_error(r.error());
    auto st = getattr(f);
    EXPECT_EQ(st->stx_mode & 07777, 04751u);  // mode applied after chown
    EXPECT_EQ(st->stx_uid, 1234u);
    EXPECT_EQ(st->stx_gid, 4321u);
    EXPECT_EQ(st->stx_size, 10u);
    EXPECT_EQ(st->stx_atime.tv_sec, 1000000000);
    EXPECT_EQ(st->stx_atime.tv_nsec, 5u);
    EXPECT_EQ(st->stx_mtime.tv_sec, 1200000000);
    EXPECT_EQ(st->stx_mtime.tv_nsec, 7u);

    SetAttrs now;
    now.mtime = TimeChange::server();
    const time_t before = ::time(nullptr);
    ASSERT_TRUE(setattr(f, now, kRoot).ok());
    st = getattr(f);
    EXPECT_GE(st->stx_mtime.tv_sec, before);
    EXPECT_EQ(st->stx_atime.tv_sec, 1000000000);  // untouched
}

TEST_F(SetAttrTest, PermissionsAreTheKernels) {
    write_file("f", "data", 0644, 1234, 1234);
    Node f = node("f");
    SetAttrs chmod_it;
    chmod_it.mode = 0600;
    EXPECT_EQ(setattr(f, chmod_it, kUser4321).error(), EPERM);
    EXPECT_TRUE(setattr(f, chmod_it, kUser1234).ok());
    SetAttrs give_away;
    give_away.uid = 4321;
    EXPECT_EQ(setattr(f, give_away, kUser1234).error(), EPERM);
    SetAttrs truncate_it;
    truncate_it.size = 0;
    EXPECT_EQ(setattr(f, truncate_it, kUser4321).error(), EACCES);
    EXPECT_EQ(getattr(f)->stx_size, 4u);
}

TEST_F(SetAttrTest, OwnerMayTruncateReadOnlyFile) {
    write_file("ro", "data", 0444, 1234, 1234);
    SetAttrs t;
    t.size = 0;
    ASSERT_TRUE(setattr(node("ro"), t, kUser1234).ok());
    EXPECT_EQ(stat_path("ro").st_size, 0);
}

TEST_F(SetAttrTest, SizeOfNonRegularFiles) {
    ASSERT_EQ(::mkdir(path("d").c_str(), 0755), 0);
    ASSERT_EQ(::mkfifo(path("p").c_str(), 0644), 0);
    SetAttrs t;
    t.size = 0;
    EXPECT_EQ(setattr(node("d"), t, kRoot).error(), EISDIR);
    EXPECT_EQ(setattr(node("p"), t, kRoot).error(), EINVAL);
}

TEST_F(SetAttrTest, SymlinkModeChangeIsRefusedNotIgnored) {
    ASSERT_EQ(::symlink("target", path("sl").c_str()), 0);
    ASSERT_EQ(::lchown(path("sl").c_str(), 1234, 1234), 0);
    Node sl = node("sl");
    SetAttrs mode;
    mode.mode = 0600;
    SetAttrs mode_and_owner = mode;
    mode_and_owner.uid = 4321;
    // Not the owner: NFS3ERR_PERM, as for any chmod (RFC 1813 §3.3.2).
    EXPECT_EQ(setattr(sl, mode, kUser4321).error(), EPERM);
    // The owner, or root: Linux cannot store it, and says so rather than succeeding.
    EXPECT_EQ(setattr(sl, mode, kUser1234).error(), EOPNOTSUPP);
    EXPECT_EQ(setattr(sl, mode_and_owner, kRoot).error(), EOPNOTSUPP);
    EXPECT_EQ(stat_path("sl").st_uid, 1234u) << "a refused request applies nothing";
    EXPECT_EQ(stat_path("sl").st_mode & 07777, 0777u);

    // The mode it has is no change: the rest of the request is carried out.
    SetAttrs same = mode_and_owner;
    same.mode = 0777;
    ASSERT_TRUE(setattr(sl, same, kRoot).ok());
    EXPECT_EQ(stat_path("sl").st_uid, 4321u);
    EXPECT_EQ(stat_path("sl").st_mode & 07777, 0777u);
}

// ---------------------------------------------------------------- fsstat / pathconf

class FsInfoTest : public VfsFixture {};

TEST_F(FsInfoTest, FsstatAndPathconf) {
    auto s = fsstat(root_);
    ASSERT_TRUE(s.ok());
    EXPECT_GT(s->total_bytes, 0u);
    EXPECT_LE(s->free_bytes, s->total_bytes);
    EXPECT_LE(s->avail_bytes, s->free_bytes);
    EXPECT_GT(s->total_files, 0u);
    EXPECT_LE(s->free_files, s->total_files);
    auto pc = pathconf(root_);
    ASSERT_TRUE(pc.ok());
    EXPECT_EQ(pc->name_max, 255u);
    EXPECT_EQ(pc->link_max, 65000u);  // ext4
    EXPECT_TRUE(pc->no_trunc);
    EXPECT_TRUE(pc->chown_restricted);
    EXPECT_FALSE(pc->case_insensitive);
    EXPECT_TRUE(pc->case_preserving);
}

// ---------------------------------------------------------------- descriptor hygiene

class HygieneTest : public VfsFixture {};

size_t open_fd_count() {
    size_t n = 0;
    DIR* d = ::opendir("/proc/self/fd");
    while (::readdir(d)) ++n;
    ::closedir(d);
    return n;
}

TEST_F(HygieneTest, NoDescriptorLeaks) {
    auto round = [&](int i) {
        const std::string n = "f" + std::to_string(i);
        auto e = create(root_, n, 0644, CreateHow::Exclusive, 42, kUser1234);
        ASSERT_TRUE(e.ok());
        EXPECT_TRUE(create(root_, n, 0644, CreateHow::Exclusive, 42, kUser1234).ok());
        EXPECT_FALSE(create(root_, n, 0644, CreateHow::Guarded, 0, kUser1234).ok());
        EXPECT_TRUE(lookup(root_, n, kUser4321).ok());
        EXPECT_FALSE(lookup(root_, "nope", kUser4321).ok());
        EXPECT_TRUE(table_->resolve(e->node.handle.data()).ok());
        SetAttrs sa;
        sa.size = 1;
        EXPECT_TRUE(setattr(e->node, sa, kUser1234).ok());
        EXPECT_TRUE(link(e->node, root_, n + "l", kUser1234).ok());
        EXPECT_TRUE(rename(root_, n + "l", root_, n + "r", kUser1234).ok());
        EXPECT_TRUE(readdir(
                        root_, 0, [](const DirEntry&) { return true; }, kUser4321)
                        .ok());
        EXPECT_TRUE(remove(root_, n + "r", kUser1234).ok());
        EXPECT_TRUE(remove(root_, n, kUser1234).ok());
        EXPECT_EQ(table_->resolve(e->node.handle.data()).error(), ESTALE);
        EXPECT_TRUE(mkdir(root_, n, 0755, kUser1234).ok());
        EXPECT_TRUE(rmdir(root_, n, kUser1234).ok());
    };
    round(0);  // warm-up (first IdentityScope use, lazily opened libraries)
    const size_t before = open_fd_count();
    for (int i = 1; i < 50; ++i) round(i);
    EXPECT_EQ(open_fd_count(), before);
}

// ---------------------------------------------------------------- durability

// RFC 1813 §3.3: every namespace or attribute change is committed (fsync of the
// directory, or of the object for SETATTR) before the operation returns; a failed
// operation commits nothing. Counted through metadata_commits().
class DurabilityTest : public VfsFixture {
  protected:
    template <class F>
    uint64_t commits_during(F&& op) {
        uint64_t before = metadata_commits();
        op();
        return metadata_commits() - before;
    }
};

TEST_F(DurabilityTest, EveryChangeIsCommittedBeforeItReturns) {
    EXPECT_EQ(commits_during([&] {
                  ASSERT_TRUE(create(root_, "f", 0644, CreateHow::Guarded, 0, kRoot).ok());
              }),
              1u)
        << "CREATE commits the directory";
    EXPECT_EQ(commits_during([&] {
                  ASSERT_TRUE(create(root_, "x", 0644, CreateHow::Exclusive, 42, kRoot).ok());
              }),
              1u)
        << "exclusive CREATE (with its verifier) too";
    EXPECT_EQ(commits_during([&] { ASSERT_TRUE(mkdir(root_, "d", 0755, kRoot).ok()); }), 1u);
    EXPECT_EQ(commits_during([&] { ASSERT_TRUE(symlink(root_, "l", "f", 0777, kRoot).ok()); }), 1u);
    EXPECT_EQ(commits_during(
                  [&] { ASSERT_TRUE(mknod(root_, "p", SpecialType::Fifo, 0600, 0, kRoot).ok()); }),
              1u);
    EXPECT_EQ(commits_during([&] { ASSERT_TRUE(link(node("f"), node("d"), "f2", kRoot).ok()); }),
              2u)
        << "LINK: the new name's directory and the file's link count";
    EXPECT_EQ(commits_during([&] { ASSERT_TRUE(rename(root_, "x", node("d"), "x", kRoot).ok()); }),
              2u)
        << "RENAME: both directories";
    SetAttrs sa;
    sa.mode = 0600;
    EXPECT_EQ(commits_during([&] { ASSERT_TRUE(setattr(node("f"), sa, kRoot).ok()); }), 1u);
    EXPECT_EQ(commits_during([&] { ASSERT_TRUE(setattr(node("d"), sa, kRoot).ok()); }), 1u);
    EXPECT_EQ(commits_during([&] { ASSERT_TRUE(remove(root_, "f", kRoot).ok()); }), 1u);
    EXPECT_EQ(commits_during([&] { ASSERT_TRUE(remove(node("d"), "f2", kRoot).ok()); }), 1u);
    EXPECT_EQ(commits_during([&] { ASSERT_TRUE(remove(node("d"), "x", kRoot).ok()); }), 1u);
    EXPECT_EQ(commits_during([&] { ASSERT_TRUE(rmdir(root_, "d", kRoot).ok()); }), 1u);
}

TEST_F(DurabilityTest, FailuresCommitNothing) {
    write_file("f", "x");
    ASSERT_EQ(::mkdir(path("locked").c_str(), 0755), 0);
    Node locked = node("locked");
    EXPECT_EQ(commits_during([&] {
                  EXPECT_EQ(create(root_, "f", 0644, CreateHow::Guarded, 0, kRoot).error(), EEXIST);
                  EXPECT_EQ(mkdir(root_, "f", 0755, kRoot).error(), EEXIST);
                  EXPECT_EQ(remove(root_, "missing", kRoot).error(), ENOENT);
                  EXPECT_EQ(rename(root_, "missing", root_, "y", kRoot).error(), ENOENT);
                  EXPECT_EQ(create(locked, "g", 0644, CreateHow::Guarded, 0, kUser4321).error(),
                            EACCES);
              }),
              0u);
}

}  // namespace
}  // namespace nfsrdmad::vfs::testing
