// Unit tests of nfs/vfs: SipHash, handles, the key file, the export table, client policy
// and identity switching. Operations are in vfs_ops_test.cpp, I/O in vfs_io_test.cpp.
#include <arpa/inet.h>
#include <netinet/in.h>
#include <sys/wait.h>

#include <algorithm>
#include <cstring>
#include <fstream>
#include <future>
#include <sstream>
#include <thread>

#include "nfs/vfs/fs_identity.h"
#include "nfs/vfs/state_lock.h"
#include "tests/unit/vfs_test_util.h"
#include "transport/rpc/thread_credentials.h"

namespace nfsrdmad::vfs::testing {
namespace {

// ---------------------------------------------------------------- SipHash-2-4

// Reference vectors_sip64 from the SipHash reference implementation: key 00..0f,
// message 00 01 .. (n-1) for n = 0..63.
constexpr uint64_t kSipVectors[64] = {
    0x726fdb47dd0e0e31, 0x74f839c593dc67fd, 0x0d6c8009d9a94f5a, 0x85676696d7fb7e2d,
    0xcf2794e0277187b7, 0x18765564cd99a68d, 0xcbc9466e58fee3ce, 0xab0200f58b01d137,
    0x93f5f5799a932462, 0x9e0082df0ba9e4b0, 0x7a5dbbc594ddb9f3, 0xf4b32f46226bada7,
    0x751e8fbc860ee5fb, 0x14ea5627c0843d90, 0xf723ca908e7af2ee, 0xa129ca6149be45e5,
    0x3f2acc7f57c29bdb, 0x699ae9f52cbe4794, 0x4bc1b3f0968dd39c, 0xbb6dc91da77961bd,
    0xbed65cf21aa2ee98, 0xd0f2cbb02e3b67c7, 0x93536795e3a33e88, 0xa80c038ccd5ccec8,
    0xb8ad50c6f649af94, 0xbce192de8a85b8ea, 0x17d835b85bbb15f3, 0x2f2e6163076bcfad,
    0xde4daaaca71dc9a5, 0xa6a2506687956571, 0xad87a3535c49ef28, 0x32d892fad841c342,
    0x7127512f72f27cce, 0xa7f32346f95978e3, 0x12e0b01abb051238, 0x15e034d40fa197ae,
    0x314dffbe0815a3b4, 0x027990f029623981, 0xcadcd4e59ef40c4d, 0x9abfd8766a33735c,
    0x0e3ea96b5304a7d0, 0xad0c42d6fc585992, 0x187306c89bc215a9, 0xd4a60abcf3792b95,
    0xf935451de4f21df2, 0xa9538f0419755787, 0xdb9acddff56ca510, 0xd06c98cd5c0975eb,
    0xe612a3cb9ecba951, 0xc766e62cfcadaf96, 0xee64435a9752fe72, 0xa192d576b245165a,
    0x0a8787bf8ecb74b2, 0x81b3e73d20b49b6f, 0x7fa8220ba3b2ecea, 0x245731c13ca42499,
    0xb78dbfaf3a8d83bd, 0xea1ad565322a1a0b, 0x60e61c23a3795013, 0x6606d7e446282b93,
    0x6ca4ecb15c5f91e1, 0x9f626da15c9625f3, 0xe51b38608ef25f57, 0x958a324ceb064572,
};

SipKey reference_key() {
    SipKey k;
    for (size_t i = 0; i < k.size(); ++i) k[i] = static_cast<uint8_t>(i);
    return k;
}

TEST(SipHash, PaperVector) {
    uint8_t msg[15];
    for (int i = 0; i < 15; ++i) msg[i] = static_cast<uint8_t>(i);
    EXPECT_EQ(siphash24(reference_key(), msg), 0xa129ca6149be45e5ULL);
}

TEST(SipHash, AllReferenceVectors) {
    uint8_t msg[64];
    for (int i = 0; i < 64; ++i) msg[i] = static_cast<uint8_t>(i);
    for (size_t n = 0; n < 64; ++n) {
        EXPECT_EQ(siphash24(reference_key(), std::span<const uint8_t>(msg, n)), kSipVectors[n])
            << "length " << n;
    }
}

// ---------------------------------------------------------------- handle codec

KernelHandle sample_kernel_handle() {
    KernelHandle kh;
    kh.type = 1;
    kh.size = 8;
    for (int i = 0; i < 8; ++i) kh.bytes[i] = static_cast<uint8_t>(0xa0 + i);
    return kh;
}

TEST(HandleCodec, LayoutAndRoundTrip) {
    const HandleKey key = reference_key();
    const FileHandle fh = encode_handle(key, 0x01020304, sample_kernel_handle());
    ASSERT_EQ(fh.size, 14 + 8);
    EXPECT_EQ(fh.bytes[0], kHandleVersion);
    EXPECT_EQ(fh.bytes[1], 1);
    EXPECT_EQ(fh.bytes[2], 0x01);
    EXPECT_EQ(fh.bytes[5], 0x04);
    EXPECT_EQ(fh.bytes[6], 0xa0);
    const uint64_t mac = siphash24(key, fh.data().first(14));
    for (int i = 0; i < 8; ++i) EXPECT_EQ(fh.bytes[14 + i], static_cast<uint8_t>(mac >> (8 * i)));

    auto d = decode_handle(key, fh.data());
    ASSERT_TRUE(d.ok());
    EXPECT_EQ(d->fsid, 0x01020304u);
    EXPECT_EQ(d->kernel, sample_kernel_handle());
}

TEST(HandleCodec, EveryFlippedByteIsABadHandle) {
    const HandleKey key = reference_key();
    const FileHandle fh = encode_handle(key, 77, sample_kernel_handle());
    for (size_t i = 0; i < fh.size; ++i) {
        FileHandle forged = fh;
        forged.bytes[i] ^= 0x01;
        EXPECT_EQ(decode_handle(key, forged.data()).error(), kBadHandle) << "byte " << i;
    }
}

TEST(HandleCodec, WrongLengthVersionOrKeyIsABadHandle) {
    const HandleKey key = reference_key();
    const FileHandle fh = encode_handle(key, 77, sample_kernel_handle());
    EXPECT_EQ(decode_handle(key, fh.data().first(fh.size - 1)).error(), kBadHandle);
    EXPECT_EQ(decode_handle(key, fh.data().first(14)).error(), kBadHandle);
    EXPECT_EQ(decode_handle(key, {}).error(), kBadHandle);
    std::vector<uint8_t> longer(fh.data().begin(), fh.data().end());
    longer.push_back(0);
    EXPECT_EQ(decode_handle(key, longer).error(), kBadHandle);
    std::vector<uint8_t> huge(65, 0);
    EXPECT_EQ(decode_handle(key, huge).error(), kBadHandle);

    // Version 2 with a *valid* MAC over it is still refused.
    FileHandle v2 = fh;
    v2.bytes[0] = 2;
    const uint64_t mac = siphash24(key, v2.data().first(14));
    for (int i = 0; i < 8; ++i) v2.bytes[14 + i] = static_cast<uint8_t>(mac >> (8 * i));
    EXPECT_EQ(decode_handle(key, v2.data()).error(), kBadHandle);

    HandleKey other = key;
    other[0] ^= 0xff;
    EXPECT_EQ(decode_handle(other, fh.data()).error(), kBadHandle);
}

// decode_handle remembers the handles whose MAC a thread verified (handle.cpp): a
// remembered handle with one byte changed, or under another key, is still refused, and
// handles past the memo's size (64 slots) decode as before.
TEST(HandleCodec, AHandleVerifiedBeforeChangesNoAnswer) {
    const HandleKey key = reference_key();
    const FileHandle fh = encode_handle(key, 77, sample_kernel_handle());
    ASSERT_TRUE(decode_handle(key, fh.data()).ok());
    ASSERT_TRUE(decode_handle(key, fh.data()).ok());
    for (size_t i = 0; i < fh.size; ++i) {
        FileHandle forged = fh;
        forged.bytes[i] ^= 0x01;
        EXPECT_EQ(decode_handle(key, forged.data()).error(), kBadHandle) << "byte " << i;
        EXPECT_TRUE(decode_handle(key, fh.data()).ok()) << "byte " << i;
    }
    HandleKey other = key;
    other[15] ^= 0x01;
    EXPECT_EQ(decode_handle(other, fh.data()).error(), kBadHandle);
    EXPECT_TRUE(decode_handle(key, fh.data()).ok());

    std::vector<FileHandle> many;
    for (uint32_t n = 0; n < 300; ++n) {
        KernelHandle kh = sample_kernel_handle();
        kh.size = static_cast<uint8_t>(1 + n % 50);  // short and long kernel handles
        for (size_t b = 0; b < kh.size; ++b) kh.bytes[b] = static_cast<uint8_t>(n * 7 + b);
        many.push_back(encode_handle(key, 77 + n % 3, kh));
    }
    for (int round = 0; round < 2; ++round) {
        for (const FileHandle& h : many) {
            auto d = decode_handle(key, h.data());
            ASSERT_TRUE(d.ok());
            EXPECT_EQ(d->kernel.size, h.size - kHandleOverhead);
            FileHandle forged = h;
            forged.bytes[h.size - 1] ^= 0x80;  // the MAC's last byte
            EXPECT_EQ(decode_handle(key, forged.data()).error(), kBadHandle);
            EXPECT_EQ(decode_handle(other, h.data()).error(), kBadHandle);
        }
    }
}

// ---------------------------------------------------------------- key file

class KeyFileTest : public VfsFixture {};

TEST_F(KeyFileTest, CreatedWith0600AndReloadedUnchanged) {
    struct stat st {};
    const std::string key_path = state_dir_ + "/handle.key";
    ASSERT_EQ(::stat(key_path.c_str(), &st), 0);
    EXPECT_EQ(st.st_mode & 07777, 0600u);
    EXPECT_EQ(st.st_size, 16);
    auto again = load_or_create_handle_key(state_dir_);
    ASSERT_TRUE(again.ok());
    EXPECT_EQ(*again, key_);
    EXPECT_NE(key_, HandleKey{});
}

TEST_F(KeyFileTest, MalformedKeyIsAnErrorAndNotReplaced) {
    const std::string key_path = state_dir_ + "/handle.key";
    { std::ofstream(key_path, std::ios::trunc) << "short"; }
    std::string why;
    auto k = load_or_create_handle_key(state_dir_, &why);
    EXPECT_EQ(k.error(), EINVAL);
    EXPECT_NE(why.find("malformed"), std::string::npos) << why;
    struct stat st {};
    ASSERT_EQ(::stat(key_path.c_str(), &st), 0);
    EXPECT_EQ(st.st_size, 5);  // left alone
}

TEST_F(KeyFileTest, GroupReadableKeyIsRefused) {
    const std::string key_path = state_dir_ + "/handle.key";
    ASSERT_EQ(::chmod(key_path.c_str(), 0640), 0);
    EXPECT_EQ(load_or_create_handle_key(state_dir_).error(), EPERM);
}

// Issue 8 finding 7: a key planted by someone else (any owner) was accepted, and the
// state directory took the umask's mode: whoever can plant the key forges handles.
TEST_F(KeyFileTest, KeyOwnedBySomeoneElseIsRefused) {
    if (::geteuid() != 0) GTEST_FAIL() << "needs root to chown the key file";
    const std::string key_path = state_dir_ + "/handle.key";
    ASSERT_EQ(::chown(key_path.c_str(), 4321, 4321), 0);
    std::string why;
    EXPECT_EQ(load_or_create_handle_key(state_dir_, &why).error(), EPERM);
    EXPECT_NE(why.find("owned by uid 4321"), std::string::npos) << why;
}

TEST_F(KeyFileTest, StateDirWritableByOthersOrNotOursIsRefused) {
    ASSERT_EQ(::chmod(state_dir_.c_str(), 0777), 0);
    std::string why;
    EXPECT_EQ(load_or_create_handle_key(state_dir_, &why).error(), EPERM);
    EXPECT_NE(why.find("writable by group/other"), std::string::npos) << why;
    ASSERT_EQ(::chmod(state_dir_.c_str(), 0700), 0);
    if (::geteuid() != 0) GTEST_FAIL() << "needs root to chown the state directory";
    ASSERT_EQ(::chown(state_dir_.c_str(), 4321, 4321), 0);
    EXPECT_EQ(load_or_create_handle_key(state_dir_, &why).error(), EPERM);
    EXPECT_NE(why.find("owned by uid 4321"), std::string::npos) << why;
    ASSERT_EQ(::chown(state_dir_.c_str(), 0, 0), 0);
    EXPECT_TRUE(load_or_create_handle_key(state_dir_).ok());
}

TEST_F(KeyFileTest, NewStateDirIsPrivate) {
    ::umask(022);
    const std::string dir = base_ + "/var/lib/nfsrdmad";
    std::string why;
    ASSERT_TRUE(make_state_dir(dir, &why).ok()) << why;
    struct stat st {};
    ASSERT_EQ(::stat(dir.c_str(), &st), 0);
    EXPECT_EQ(st.st_mode & 07777, 0700u);
    EXPECT_TRUE(load_or_create_handle_key(dir).ok());
    EXPECT_TRUE(make_state_dir(dir).ok()) << "an existing private directory is fine";
}

TEST_F(KeyFileTest, MissingStateDirIsAnError) {
    EXPECT_EQ(load_or_create_handle_key(base_ + "/nope").error(), ENOENT);
}

// One daemon per state directory: a second holder is refused and told the first's pid; the
// lock goes with its holder (the kernel drops a flock with the file description).
TEST_F(KeyFileTest, StateDirLockIsExclusiveAndGoesWithItsHolder) {
    const std::string dir = base_ + "/state";
    std::string why;
    ASSERT_TRUE(make_state_dir(dir, &why).ok()) << why;
    {
        auto first = StateDirLock::acquire(dir, &why);
        ASSERT_TRUE(first) << why;
        std::ifstream f(dir + "/" + kStateLockFile);
        std::string pid;
        f >> pid;
        EXPECT_EQ(pid, std::to_string(::getpid()));
        auto second = StateDirLock::acquire(dir, &why);
        EXPECT_FALSE(second);
        EXPECT_EQ(why, dir + " is in use by another nfsrdmad, pid " + std::to_string(::getpid()) +
                           ": give each daemon a state_dir of its own");
    }
    EXPECT_TRUE(StateDirLock::acquire(dir, &why)) << "released with its holder: " << why;
    EXPECT_FALSE(StateDirLock::acquire(base_ + "/missing", &why));
    EXPECT_NE(why.find("No such file or directory"), std::string::npos) << why;
}

TEST(WriteVerifier, FixedForTheProcess) {
    EXPECT_EQ(write_verifier(), write_verifier());
}

// ---------------------------------------------------------------- resolve

class HandleTest : public VfsFixture {};

TEST_F(HandleTest, RootHandleResolvesToRoot) {
    auto n = table_->resolve(exp_->root_handle().data());
    ASSERT_TRUE(n.ok()) << describe_error(n.error());
    auto st = getattr(*n);
    ASSERT_TRUE(st.ok());
    EXPECT_EQ(st->stx_ino, stat_path("").st_ino);
    EXPECT_EQ(n->fsid(), exp_->fsid());
    EXPECT_EQ(n->handle, exp_->root_handle());
    EXPECT_LE(exp_->root_handle().size, kMaxHandleSize);
}

TEST_F(HandleTest, FileHandleRoundTrip) {
    ASSERT_EQ(::mkdir(path("d").c_str(), 0755), 0);
    write_file("d/f", "hello");
    Node f = node("d/f");
    EXPECT_EQ(f.handle.size, 14 + 8);  // ext4: 8-byte kernel handle
    auto again = table_->resolve(f.handle.data());
    ASSERT_TRUE(again.ok());
    EXPECT_EQ(getattr(*again)->stx_ino, stat_path("d/f").st_ino);
    // Same object, same handle bytes, whichever way it was reached.
    EXPECT_EQ(node("d/f").handle, f.handle);
}

TEST_F(HandleTest, HandleSurvivesRestart) {
    write_file("persist", "x");
    const FileHandle old = node("persist").handle;
    // "Restart": drop everything, reload the key from disk, rebuild the table.
    table_.reset();
    exp_.reset();
    root_ = Node{};
    auto key = load_or_create_handle_key(state_dir_);
    ASSERT_TRUE(key.ok());
    auto table = ExportTable::create({ExportSpec{export_dir_, 0, {}}}, *key);
    ASSERT_TRUE(table.ok());
    auto n = (*table)->resolve(old.data());
    ASSERT_TRUE(n.ok()) << describe_error(n.error());
    EXPECT_EQ(getattr(*n)->stx_ino, stat_path("persist").st_ino);
}

TEST_F(HandleTest, ForgedHandlesAreBadOrStale) {
    write_file("f", "x");
    const FileHandle fh = node("f").handle;
    FileHandle flipped = fh;
    flipped.bytes[8] ^= 0x40;  // inside the kernel handle
    EXPECT_EQ(table_->resolve(flipped.data()).error(), kBadHandle);
    FileHandle bad_mac = fh;
    bad_mac.bytes[fh.size - 1] ^= 0x01;
    EXPECT_EQ(table_->resolve(bad_mac.data()).error(), kBadHandle);
    EXPECT_EQ(table_->resolve(fh.data().first(fh.size - 3)).error(), kBadHandle);

    // Correctly MACed, but for an fsid that is not exported.
    auto decoded = decode_handle(key_, fh.data());
    ASSERT_TRUE(decoded.ok());
    const FileHandle unknown = encode_handle(key_, exp_->fsid() + 1, decoded->kernel);
    EXPECT_EQ(table_->resolve(unknown.data()).error(), ESTALE);

    // Correctly MACed garbage kernel handle: the filesystem rejects it.
    KernelHandle garbage = decoded->kernel;
    garbage.bytes[0] ^= 0x55;
    garbage.bytes[4] ^= 0x55;
    EXPECT_EQ(table_->resolve(encode_handle(key_, exp_->fsid(), garbage).data()).error(), ESTALE);
}

TEST_F(HandleTest, DeletedFileIsStale) {
    write_file("gone", "x");
    const FileHandle fh = node("gone").handle;
    ASSERT_EQ(::unlink(path("gone").c_str()), 0);
    EXPECT_EQ(table_->resolve(fh.data()).error(), ESTALE);
}

TEST_F(HandleTest, HandleOfDroppedExportIsStaleAfterReload) {
    ASSERT_EQ(::mkdir(path("a").c_str(), 0755), 0);
    ASSERT_EQ(::mkdir(path("b").c_str(), 0755), 0);
    auto two = make_table({path("a"), path("b")});
    ASSERT_NE(two, nullptr);
    ExportRegistry registry(two);
    const FileHandle a_root = two->find_by_path(path("a"))->root_handle();
    EXPECT_TRUE(registry.snapshot()->resolve(a_root.data()).ok());

    registry.replace(make_table({path("b")}));  // SIGHUP: "a" no longer exported
    EXPECT_EQ(registry.snapshot()->resolve(a_root.data()).error(), ESTALE);
    registry.replace(make_table({path("b"), path("a")}));  // back, same derived fsid
    EXPECT_TRUE(registry.snapshot()->resolve(a_root.data()).ok());
}

// A call's pin keeps the table it began with through a reload; the replaced table is
// freed when the last pin on it ends, not later (export_registry.h).
TEST_F(HandleTest, APinnedTableOutlivesItsReplacementAndNoLonger) {
    ExportRegistry registry(make_table({export_dir_}));
    std::weak_ptr<const ExportTable> first = registry.snapshot();
    {
        ExportRegistry::Pin call(registry);
        ASSERT_EQ(call.table(), first.lock());
        registry.replace(make_table({export_dir_}));
        EXPECT_EQ(call.table(), first.lock()) << "a reload under a call changed its table";
        EXPECT_NE(registry.snapshot(), first.lock());
        EXPECT_EQ(registry.retired(), 1u);
        {
            ExportRegistry::Pin nested(registry);  // a later pin sees the new table
            EXPECT_NE(nested.table(), call.table());
        }
        EXPECT_EQ(registry.retired(), 1u) << "freed while a call still held it";
        EXPECT_FALSE(first.expired());
    }
    EXPECT_EQ(registry.retired(), 0u);
    EXPECT_TRUE(first.expired()) << "the replaced table outlived the last call on it";

    // With no call running, a reload frees the old table at once.
    std::weak_ptr<const ExportTable> second = registry.snapshot();
    registry.replace(make_table({export_dir_}));
    EXPECT_TRUE(second.expired());
}

// Threads pin, read and unpin while reloads replace the table: every pinned table is
// whole (the ASan build in `make test` sees a use after free), and each replaced
// table is freed once the threads stop.
TEST_F(HandleTest, ReloadsUnderConcurrentCallsFreeEveryOldTable) {
    write_file("f", "x");
    const FileHandle fh = node("f").handle;
    ExportRegistry registry(make_table({export_dir_}));
    std::atomic<bool> stop{false};
    std::atomic<uint64_t> resolved{0}, failed{0};
    std::vector<std::thread> calls;
    for (int t = 0; t < 4; ++t)
        calls.emplace_back([&] {
            while (!stop.load()) {
                ExportRegistry::Pin call(registry);
                if (call.table()->find_by_handle(fh.data()).ok())
                    resolved++;
                else
                    failed++;
            }
        });
    std::vector<std::weak_ptr<const ExportTable>> old;
    for (int i = 0; i < 200; ++i) {
        old.push_back(registry.snapshot());
        registry.replace(make_table({export_dir_}));
    }
    stop = true;
    for (auto& t : calls) t.join();
    EXPECT_GT(resolved.load(), 0u);
    EXPECT_EQ(failed.load(), 0u);
    EXPECT_EQ(registry.retired(), 0u);
    for (const auto& w : old) EXPECT_TRUE(w.expired());
}

// ---------------------------------------------------------------- export table

class ExportTableTest : public VfsFixture {};

TEST_F(ExportTableTest, DerivedFsidIsStableAndNonZero) {
    EXPECT_NE(exp_->fsid(), 0u);
    EXPECT_EQ(derive_fsid("/srv/a"), derive_fsid("/srv/a"));
    EXPECT_NE(derive_fsid("/srv/a"), derive_fsid("/srv/b"));
    KernelHandle d1, d2;
    d1.size = d2.size = 8;
    d2.bytes[0] = 1;
    EXPECT_EQ(derive_fsid("uuid:x", d1), derive_fsid("uuid:x", d1));
    EXPECT_NE(derive_fsid("uuid:x", d1), derive_fsid("uuid:x", d2));
    EXPECT_NE(derive_fsid("uuid:x", d1), derive_fsid("uuid:y", d1));
}

// The fsid comes from the filesystem (its UUID) and the export directory's own handle, not
// from the path: renamed (as a mount point may be), the export keeps its fsid and the
// handles clients hold (exportfs(8) uuid fsids). Needs /tmp on a filesystem with a UUID
// this process can read: ext2/3/4 or btrfs (f_fsid), or any readable block device.
TEST_F(ExportTableTest, DerivedFsidSurvivesARenamedExportDirectory) {
    UniqueFd probe(::open(export_dir_.c_str(), O_PATH | O_DIRECTORY | O_CLOEXEC));
    const auto fs = filesystem_identity(probe.get());
    ASSERT_TRUE(fs.has_value()) << "/tmp is on a filesystem without a UUID this test can read";
    ASSERT_EQ(::mkdir(path("a").c_str(), 0755), 0);
    write_file("a/f", "kept");
    auto before = make_table({path("a")});
    ASSERT_NE(before, nullptr);
    EXPECT_NE(before->exports().at(0)->fsid_source().find(fs->source), std::string::npos);
    Node a_root = *before->exports().at(0)->root();
    auto f = lookup(a_root, "f", kRoot);
    ASSERT_TRUE(f.ok());
    const FileHandle held = f->node.handle;

    ASSERT_EQ(::rename(path("a").c_str(), path("b").c_str()), 0);
    auto after = make_table({path("b")});
    ASSERT_NE(after, nullptr);
    EXPECT_EQ(after->exports().at(0)->fsid(), before->exports().at(0)->fsid());
    EXPECT_TRUE(after->resolve(held.data()).ok()) << "a handle from before the rename is stale";
    EXPECT_NE(after->exports().at(0)->fsid(), derive_fsid(after->exports().at(0)->path()));
}

TEST_F(ExportTableTest, MountRoots) {
    auto root = is_mount_root("/"), proc = is_mount_root("/proc"), dir = is_mount_root(export_dir_);
    ASSERT_TRUE(root.ok() && proc.ok() && dir.ok());
    EXPECT_TRUE(*root);
    EXPECT_TRUE(*proc);
    EXPECT_FALSE(*dir);
    EXPECT_EQ(is_mount_root(base_ + "/none").error(), ENOENT);
}

// A filesystem without an identity (tmpfs) falls back to the path.
TEST_F(ExportTableTest, FsidOfAFilesystemWithoutUuidComesFromThePath) {
    char tmpl[] = "/dev/shm/nfsrdmad_fsid.XXXXXX";
    ASSERT_NE(::mkdtemp(tmpl), nullptr) << "/dev/shm (tmpfs) is needed";
    const std::string dir = tmpl;
    auto t = make_table({dir});
    ::rmdir(dir.c_str());
    ASSERT_NE(t, nullptr);
    const auto& e = t->exports().at(0);
    EXPECT_EQ(e->fsid(), derive_fsid(e->path()));
    EXPECT_NE(e->fsid_source().find("path"), std::string::npos) << e->fsid_source();
}

TEST_F(ExportTableTest, ExplicitFsidIsKept) {
    auto t = ExportTable::create({ExportSpec{export_dir_, 42, {}}}, key_);
    ASSERT_TRUE(t.ok());
    EXPECT_EQ((*t)->exports()[0]->fsid(), 42u);
    EXPECT_NE((*t)->find_by_fsid(42), nullptr);
    EXPECT_EQ((*t)->find_by_fsid(43), nullptr);
}

TEST_F(ExportTableTest, DuplicatesAreRejected) {
    ASSERT_EQ(::mkdir(path("a").c_str(), 0755), 0);
    std::string why;
    EXPECT_EQ(
        ExportTable::create({{export_dir_, 0, {}}, {export_dir_ + "/", 0, {}}}, key_, &why).error(),
        EEXIST);
    EXPECT_EQ(ExportTable::create({{export_dir_, 7, {}}, {path("a"), 7, {}}}, key_, &why).error(),
              EEXIST);
    EXPECT_NE(why.find("duplicate fsid"), std::string::npos) << why;
    // The same directory through a symlink.
    ASSERT_EQ(::symlink(export_dir_.c_str(), (base_ + "/alias").c_str()), 0);
    EXPECT_EQ(ExportTable::create({{export_dir_, 0, {}}, {base_ + "/alias", 9, {}}}, key_).error(),
              EEXIST);
}

TEST_F(ExportTableTest, BadSpecsAreRejected) {
    EXPECT_EQ(ExportTable::create({{base_ + "/missing", 0, {}}}, key_).error(), ENOENT);
    write_file("plain", "x");
    EXPECT_EQ(ExportTable::create({{path("plain"), 0, {}}}, key_).error(), ENOTDIR);
    ClientRule bad;
    bad.match.kind = ClientRule::Match::Cidr;
    bad.match.family = AF_INET;
    bad.match.prefix = 33;
    EXPECT_EQ(ExportTable::create({{export_dir_, 0, {bad}}}, key_).error(), EINVAL);
}

TEST_F(ExportTableTest, FilesystemWithoutHandlesIsRefused) {
    std::string why;
    EXPECT_EQ(ExportTable::create({{"/proc", 0, {}}}, key_, &why).error(), EOPNOTSUPP);
    EXPECT_NE(why.find("does not support file handles"), std::string::npos) << why;
}

TEST_F(ExportTableTest, FindByPathNormalises) {
    EXPECT_EQ(table_->find_by_path(export_dir_), exp_);
    EXPECT_EQ(table_->find_by_path(export_dir_ + "/"), exp_);
    EXPECT_EQ(table_->find_by_path("/" + export_dir_ + "//./"), exp_);
    EXPECT_EQ(table_->find_by_path(export_dir_ + "/.."), nullptr);
    EXPECT_EQ(table_->find_by_path(base_), nullptr);
    EXPECT_EQ(table_->find_by_path("relative"), nullptr);
    EXPECT_EQ(normalize_path("//a//b/./c/"), "/a/b/c");
    EXPECT_EQ(normalize_path("/"), "/");
}

// ---------------------------------------------------------------- client policy

sockaddr_in v4(const char* a) {
    sockaddr_in s{};
    s.sin_family = AF_INET;
    inet_pton(AF_INET, a, &s.sin_addr);
    return s;
}

sockaddr_in6 v6(const char* a) {
    sockaddr_in6 s{};
    s.sin6_family = AF_INET6;
    inet_pton(AF_INET6, a, &s.sin6_addr);
    return s;
}

ClientRule cidr_rule(int family, const char* addr, int prefix) {
    ClientRule r;
    r.match.kind = ClientRule::Match::Cidr;
    r.match.family = family;
    r.match.prefix = prefix;
    inet_pton(family, addr, r.match.addr.data());
    return r;
}

ClientRule host_rule(const char* pattern) {
    ClientRule r;
    r.match.kind = ClientRule::Match::Hostname;
    r.match.hostname = pattern;
    return r;
}

const sockaddr* sa(const auto& s) {
    return reinterpret_cast<const sockaddr*>(&s);
}

TEST(Policy, Ipv4Cidr) {
    const auto m = cidr_rule(AF_INET, "10.1.0.0", 16).match;
    EXPECT_TRUE(matches(m, sa(v4("10.1.2.3")), ""));
    EXPECT_TRUE(matches(m, sa(v4("10.1.255.255")), ""));
    EXPECT_FALSE(matches(m, sa(v4("10.2.0.1")), ""));
    EXPECT_FALSE(matches(m, sa(v6("2001:db8::1")), ""));
    EXPECT_TRUE(matches(cidr_rule(AF_INET, "192.168.1.7", 32).match, sa(v4("192.168.1.7")), ""));
    EXPECT_FALSE(matches(cidr_rule(AF_INET, "192.168.1.7", 32).match, sa(v4("192.168.1.6")), ""));
    EXPECT_TRUE(matches(cidr_rule(AF_INET, "0.0.0.0", 0).match, sa(v4("8.8.8.8")), ""));
    EXPECT_TRUE(matches(cidr_rule(AF_INET, "10.0.0.0", 9).match, sa(v4("10.127.0.1")), ""));
    EXPECT_FALSE(matches(cidr_rule(AF_INET, "10.0.0.0", 9).match, sa(v4("10.128.0.1")), ""));
}

TEST(Policy, Ipv4MappedIpv6PeerMatchesIpv4Rule) {
    const auto m = cidr_rule(AF_INET, "10.1.0.0", 16).match;
    EXPECT_TRUE(matches(m, sa(v6("::ffff:10.1.2.3")), ""));
    EXPECT_FALSE(matches(m, sa(v6("::ffff:10.2.2.3")), ""));
    EXPECT_FALSE(matches(m, sa(v6("::10.1.2.3")), ""));  // IPv4-compatible, not mapped
    // And an IPv4 peer matches a mapped IPv6 rule.
    EXPECT_TRUE(matches(cidr_rule(AF_INET6, "::ffff:10.1.0.0", 112).match, sa(v4("10.1.9.9")), ""));
}

TEST(Policy, Ipv6Cidr) {
    const auto m = cidr_rule(AF_INET6, "2001:db8::", 32).match;
    EXPECT_TRUE(matches(m, sa(v6("2001:db8:1234::1")), ""));
    EXPECT_FALSE(matches(m, sa(v6("2001:db9::1")), ""));
    EXPECT_FALSE(matches(m, sa(v4("10.0.0.1")), ""));
    EXPECT_FALSE(matches(m, nullptr, ""));
}

TEST(Policy, HostnameWildcards) {
    const auto m = host_rule("*.example.com").match;
    EXPECT_TRUE(matches(m, nullptr, "host1.example.com"));
    EXPECT_TRUE(matches(m, nullptr, "Host1.EXAMPLE.com."));
    EXPECT_FALSE(matches(m, nullptr, "example.com"));
    EXPECT_FALSE(matches(m, nullptr, "host.example.org"));
    EXPECT_FALSE(matches(m, nullptr, ""));
    EXPECT_TRUE(matches(host_rule("node?").match, nullptr, "node7"));
    EXPECT_FALSE(matches(host_rule("node?").match, nullptr, "node17"));
}

TEST(Policy, FirstMatchingRuleWins) {
    ExportSpec spec;
    spec.rules.push_back(cidr_rule(AF_INET, "10.0.0.0", 8));
    spec.rules[0].read_write = true;
    spec.rules.push_back(host_rule("*.lab"));
    ClientRule any;
    spec.rules.push_back(any);
    spec.rules[2].read_write = false;

    const auto p1 = v4("10.9.9.9");
    EXPECT_EQ(match(spec, sa(p1), "x.lab"), &spec.rules[0]);
    const auto p2 = v4("192.0.2.1");
    EXPECT_EQ(match(spec, sa(p2), "x.lab"), &spec.rules[1]);
    EXPECT_EQ(match(spec, sa(p2), "x.org"), &spec.rules[2]);

    ExportSpec restricted;
    restricted.rules.push_back(cidr_rule(AF_INET, "10.0.0.0", 8));
    EXPECT_EQ(match(restricted, sa(p2), ""), nullptr);
}

TEST(Policy, Squash) {
    ClientRule r;
    r.anonuid = 65534;
    r.anongid = 65533;
    const Identity root_caller{0, 0, {0, 5}};
    const Identity user{1000, 100, {100, 0, 7}};

    r.squash = ClientRule::Root;
    EXPECT_EQ(squash(r, root_caller), (Identity{65534, 65533, {65533, 5}}));
    EXPECT_EQ(squash(r, user), (Identity{1000, 100, {100, 65533, 7}}));

    r.squash = ClientRule::All;
    EXPECT_EQ(squash(r, user), (Identity{65534, 65533, {}}));

    r.squash = ClientRule::None;
    EXPECT_EQ(squash(r, root_caller), root_caller);
    EXPECT_EQ(squash(r, user, kAuthNone), (Identity{65534, 65533, {}}));
    // A Kerberos principal with no local user acts as the export's anonymous id.
    EXPECT_EQ(squash(r, user, kAuthSys, /*anonymous=*/true), (Identity{65534, 65533, {}}));
}

TEST(Policy, Flavors) {
    ClientRule r;
    EXPECT_TRUE(flavor_allowed(r, kAuthSys));
    EXPECT_FALSE(flavor_allowed(r, kAuthNone));
    EXPECT_FALSE(flavor_allowed(r, kAuthKrb5));
    r.flavors = {kAuthKrb5, kAuthKrb5p};
    EXPECT_TRUE(flavor_allowed(r, kAuthKrb5p));
    EXPECT_FALSE(flavor_allowed(r, kAuthSys));
}

// ---------------------------------------------------------------- identity

TEST(Identity, ScopeSwitchesAndRestores) {
    ASSERT_EQ(current_fsuid(), 0u);
    {
        auto scope = IdentityScope::enter(Identity{1234, 4321, {7, 8}});
        ASSERT_TRUE(scope.ok()) << describe_error(scope.error());
        EXPECT_EQ(current_fsuid(), 1234u);
        EXPECT_EQ(current_fsgid(), 4321u);
        gid_t groups[4];
        ASSERT_EQ(::getgroups(4, groups), 2);
        EXPECT_EQ(groups[0], 7u);
        EXPECT_EQ(groups[1], 8u);
        EXPECT_EQ(IdentityScope::enter(kRoot).error(), EBUSY);  // not reentrant
        EXPECT_EQ(::geteuid(), 0u);                             // only fs ids change
    }
    EXPECT_EQ(current_fsuid(), 0u);
    EXPECT_EQ(current_fsgid(), 0u);
}

// Groups are set only when a scope's differ from what the thread has, and ids are read
// back only the first time a pair is assumed (identity.cpp): each scope must still see
// exactly its own caller's credentials, whatever came before it.
TEST(Identity, EachScopeHasItsOwnCallersGroupsAndIds) {
    auto groups_now = [] {
        gid_t g[8];
        const int n = ::getgroups(8, g);
        return std::vector<gid_t>(g, g + std::max(n, 0));
    };
    const Identity a{1234, 4321, {7, 8}}, a_no_groups{1234, 4321, {}}, b{5, 6, {9}};
    for (const Identity* id : {&a, &a, &a_no_groups, &b, &a, &b}) {
        auto scope = IdentityScope::enter(*id);
        ASSERT_TRUE(scope.ok()) << describe_error(scope.error());
        EXPECT_EQ(current_fsuid(), id->uid);
        EXPECT_EQ(current_fsgid(), id->gid);
        EXPECT_EQ(groups_now(), std::vector<gid_t>(id->groups.begin(), id->groups.end()));
    }
    EXPECT_EQ(current_fsuid(), 0u);
    EXPECT_EQ(current_fsgid(), 0u);
}

// setfsuid(2) reports no failure: an id the kernel cannot take ((uid_t)-1 is never one)
// must fail the scope, also right after another pair was read back and remembered.
TEST(Identity, AnIdThatDoesNotTakeFailsTheScope) {
    {
        auto ok = IdentityScope::enter(Identity{1234, 4321, {}});
        ASSERT_TRUE(ok.ok());
    }
    auto bad_uid = IdentityScope::enter(Identity{0xFFFFFFFFu, 4321, {}});
    ASSERT_FALSE(bad_uid.ok());
    EXPECT_EQ(bad_uid.error(), EPERM);
    EXPECT_EQ(current_fsuid(), 0u);
    auto bad_gid = IdentityScope::enter(Identity{1234, 0xFFFFFFFFu, {}});
    ASSERT_FALSE(bad_gid.ok());
    EXPECT_EQ(bad_gid.error(), EPERM);
    EXPECT_EQ(current_fsuid(), 0u);
    EXPECT_EQ(current_fsgid(), 0u);
}

// A caller who is who the thread is outside a scope (root, not squashed) needs no switch:
// no setfsuid/setfsgid going in or out. Its groups are still its own, and a user after it
// is switched as ever.
TEST(Identity, RootNeedsNoSwitch) {
    const uint64_t before = identity_switches_on_this_thread();
    {
        auto scope = IdentityScope::enter(Identity{0, 0, {5}});
        ASSERT_TRUE(scope.ok());
        EXPECT_EQ(current_fsuid(), 0u);
        gid_t g[4];
        ASSERT_EQ(::getgroups(4, g), 1);
        EXPECT_EQ(g[0], 5u);
        EXPECT_EQ(IdentityScope::enter(kRoot).error(), EBUSY);  // still a scope
    }
    EXPECT_EQ(identity_switches_on_this_thread(), before);
    {
        auto scope = IdentityScope::enter(kUser1234);
        ASSERT_TRUE(scope.ok());
        EXPECT_EQ(current_fsuid(), 1234u);
    }
    EXPECT_EQ(identity_switches_on_this_thread(), before + 1);
    EXPECT_EQ(current_fsuid(), 0u);
    {
        auto scope = IdentityScope::enter(Identity{0, 1, {}});  // root's uid, another gid
        ASSERT_TRUE(scope.ok());
        EXPECT_EQ(current_fsgid(), 1u);
    }
    EXPECT_EQ(identity_switches_on_this_thread(), before + 2);
    EXPECT_EQ(current_fsgid(), 0u);
}

// A thread that never changed its credentials may act for an RDMA reactor
// (rpc/thread_credentials.h): a scope that switches nothing leaves it so, and any switch of
// fsuid, fsgid or groups ends it for good, even once switched back.
TEST(Identity, ThreadsThatSwitchedAreKnown) {
    auto on_new_thread = [](auto fn) {
        bool unchanged_before = false, unchanged_after = false;
        std::thread t([&] {
            unchanged_before = nfsrdmad::rpc::credentials_unchanged();
            fn();
            unchanged_after = nfsrdmad::rpc::credentials_unchanged();
        });
        t.join();
        EXPECT_TRUE(unchanged_before);
        return unchanged_after;
    };
    std::vector<uint32_t> own(static_cast<size_t>(::getgroups(0, nullptr)));
    ::getgroups(static_cast<int>(own.size()), reinterpret_cast<gid_t*>(own.data()));
    Identity root_as_is{0, 0, {}};
    root_as_is.groups.assign(own.begin(), own.end());
    EXPECT_TRUE(on_new_thread([&] {
        for (int i = 0; i < 3; ++i) ASSERT_TRUE(IdentityScope::enter(root_as_is).ok());
    }));
    EXPECT_FALSE(on_new_thread([] { ASSERT_TRUE(IdentityScope::enter(kUser1234).ok()); }));
    EXPECT_FALSE(on_new_thread([] { ASSERT_TRUE(IdentityScope::enter(Identity{0, 1, {}}).ok()); }));
    Identity more = root_as_is;
    more.groups.push_back(4242);
    EXPECT_FALSE(on_new_thread([&] { ASSERT_TRUE(IdentityScope::enter(more).ok()); }));
    EXPECT_FALSE(on_new_thread([&] {
        ASSERT_TRUE(IdentityScope::enter(kUser1234).ok());
        ASSERT_TRUE(IdentityScope::enter(root_as_is).ok());
    }));
}

TEST(Identity, OtherThreadsAreUnaffected) {
    // A thread inherits its creator's credentials, so start it before entering the scope.
    std::promise<void> entered;
    std::promise<uid_t> seen;
    std::thread other([&] {
        entered.get_future().wait();
        seen.set_value(current_fsuid());
    });
    {
        auto scope = IdentityScope::enter(kUser1234);
        ASSERT_TRUE(scope.ok());
        entered.set_value();
        EXPECT_EQ(seen.get_future().get(), 0u);
        EXPECT_EQ(current_fsuid(), 1234u);
    }
    other.join();
}

TEST(Identity, InGroup) {
    const Identity id{1, 10, {20, 30}};
    EXPECT_TRUE(id.in_group(10));
    EXPECT_TRUE(id.in_group(30));
    EXPECT_FALSE(id.in_group(40));
}

// ---------------------------------------------------------------- names

TEST(Names, Validation) {
    EXPECT_EQ(validate_name("").error(), EINVAL);
    EXPECT_EQ(validate_name("a/b").error(), EINVAL);
    EXPECT_EQ(validate_name(std::string_view("a\0b", 3)).error(), EINVAL);
    EXPECT_EQ(validate_name(std::string(256, 'x')).error(), ENAMETOOLONG);
    EXPECT_TRUE(validate_name(std::string(255, 'x')).ok());
    EXPECT_TRUE(validate_name("..").ok());
    EXPECT_EQ(validate_new_name(".").error(), EEXIST);
    EXPECT_EQ(validate_existing_name("..").error(), EINVAL);
}

}  // namespace
}  // namespace nfsrdmad::vfs::testing
