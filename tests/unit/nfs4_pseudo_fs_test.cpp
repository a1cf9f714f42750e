// The NFSv4 pseudo file system (RFC 8881 §7.3): directories above the exports, and
// their filehandles.
#include <gtest/gtest.h>

#include "nfs/v4/pseudo_fs.h"
#include "nfs/vfs/handle.h"

using namespace nfsrdmad;
using namespace nfsrdmad::nfs::v4;
using Entry = PseudoFs::Entry;

namespace {

PseudoFs two_exports() {
    return PseudoFs({{"/srv/data", 11}, {"/srv/backup/x", 22}});
}

Entry walk(const PseudoFs& fs, std::vector<std::string> names) {
    Entry e = fs.root();
    for (auto& n : names) {
        auto next = fs.lookup(e.node, n);
        EXPECT_TRUE(next) << n;
        if (!next) return {};
        e = *next;
    }
    return e;
}

}  // namespace

TEST(PseudoFs, WalkingDownReachesEachExportRoot) {
    auto fs = two_exports();
    EXPECT_EQ(fs.root().kind, Entry::Directory);
    EXPECT_EQ(walk(fs, {"srv", "data"}), (Entry{Entry::ExportRoot, 0, 11}));
    EXPECT_EQ(walk(fs, {"srv", "backup", "x"}), (Entry{Entry::ExportRoot, 0, 22}));
    EXPECT_FALSE(fs.lookup(fs.root().node, "etc"));
    EXPECT_FALSE(fs.lookup(walk(fs, {"srv"}).node, "dat"));
}

TEST(PseudoFs, DirectoriesListOnlyTheWayToExports) {
    auto fs = two_exports();
    auto srv = walk(fs, {"srv"});
    auto names = fs.list(srv.node);
    ASSERT_EQ(names.size(), 2u);
    EXPECT_EQ(names[0].first, "backup");
    EXPECT_EQ(names[0].second.kind, Entry::Directory);
    EXPECT_EQ(names[1].first, "data");
    EXPECT_EQ(fs.list(fs.root().node).size(), 1u);
    EXPECT_EQ(fs.path(srv.node), "/srv");
}

TEST(PseudoFs, ParentsWalkBackUpAndStopAtTheRoot) {
    auto fs = two_exports();
    auto srv = walk(fs, {"srv"});
    auto backup = walk(fs, {"srv", "backup"});
    EXPECT_EQ(fs.parent(backup.node), srv.node);
    EXPECT_EQ(fs.parent(srv.node), fs.root().node);
    EXPECT_FALSE(fs.parent(fs.root().node));
    EXPECT_EQ(fs.parent_of_export(22), backup.node);
    EXPECT_EQ(fs.parent_of_export(11), srv.node);
    EXPECT_FALSE(fs.parent_of_export(99));
}

TEST(PseudoFs, IdsAreTheSameAcrossRebuilds) {
    auto a = two_exports();
    auto b = PseudoFs({{"/srv/backup/x", 22}, {"/srv/data", 11}, {"/home", 5}});
    EXPECT_EQ(walk(a, {"srv", "backup"}).node, walk(b, {"srv", "backup"}).node);
    EXPECT_EQ(a.root().node, b.root().node);
    EXPECT_EQ(a.root().node, PseudoFs::id_of("/"));
}

TEST(PseudoFs, AnExportAtTheRootIsTheRoot) {
    PseudoFs fs({{"/", 7}, {"/srv/data", 11}});
    EXPECT_EQ(fs.root(), (Entry{Entry::ExportRoot, 0, 7}));
    EXPECT_FALSE(fs.has(PseudoFs::id_of("/")));
    EXPECT_FALSE(fs.parent_of_export(11));  // reached through the root export's tree
}

TEST(PseudoFs, AnExportInsideAnotherIsReachedThroughTheOuterOne) {
    for (auto order : {0, 1}) {
        std::vector<PseudoFs::ExportPoint> e{{"/srv", 1}, {"/srv/data", 2}};
        if (order) std::swap(e[0], e[1]);
        PseudoFs fs(e);
        EXPECT_EQ(walk(fs, {"srv"}), (Entry{Entry::ExportRoot, 0, 1})) << order;
        EXPECT_FALSE(fs.has(PseudoFs::id_of("/srv"))) << order;
        EXPECT_FALSE(fs.parent_of_export(2)) << order;
        EXPECT_EQ(fs.parent_of_export(1), fs.root().node) << order;
    }
}

TEST(PseudoFs, RelativeOrEmptyPathsAreSkipped) {
    PseudoFs fs({{"srv/data", 1}, {"", 2}});
    EXPECT_TRUE(fs.list(fs.root().node).empty());
}

TEST(PseudoHandle, RoundTripsAndRefusesForgeries) {
    vfs::HandleKey key{};
    key[0] = 1;
    auto h = encode_pseudo_handle(key, 0x0123456789abcdefull);
    ASSERT_EQ(h.size, kPseudoHandleSize);
    EXPECT_TRUE(is_pseudo_handle(h.data()));
    EXPECT_EQ(decode_pseudo_handle(key, h.data()), 0x0123456789abcdefull);
    // Another key, a flipped bit anywhere, a wrong length: refused.
    vfs::HandleKey other = key;
    other[15] = 9;
    EXPECT_FALSE(decode_pseudo_handle(other, h.data()));
    for (size_t i = 1; i < h.size; ++i) {
        auto bad = h;
        bad.bytes[i] ^= 0x10;
        EXPECT_FALSE(decode_pseudo_handle(key, bad.data())) << i;
    }
    EXPECT_FALSE(decode_pseudo_handle(key, h.data().first(16)));
    // A version-1 (regular) handle is not a pseudo one, and the v3 decoder refuses ours.
    auto regular = vfs::encode_handle(key, 5, vfs::KernelHandle{1, 8, {}});
    EXPECT_FALSE(is_pseudo_handle(regular.data()));
    EXPECT_FALSE(decode_pseudo_handle(key, regular.data()));
    EXPECT_FALSE(vfs::decode_handle(key, h.data()));
}
