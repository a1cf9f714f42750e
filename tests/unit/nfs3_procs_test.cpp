// NFSv3 procedures run in-process (nfs3_calls_util.h), for what a real client cannot show
// of the server: LOOKUP (RFC 1813 §3.3.3) and READDIRPLUS, which looks every entry up for
// its caller (§3.3.17), check search permission on the directory once, without an
// identity switch around each lookup.
#include "nfs/vfs/identity.h"
#include "tests/unit/nfs3_calls_util.h"
#include "xdr/nfs3_prot.h"

using namespace nfsrdmad;
using namespace nfsrdmad::testing;
namespace x3 = xdr::nfs3;

namespace {

constexpr uint32_t kReaddirplus = 17;

struct Nfs3Procs : Nfs3Fixture {
    // A directory under the export with `files` empty files, made by root with `mode`.
    void make_dir(const std::string& name, mode_t mode, int files) {
        const std::string d = base + "/export/" + name;
        ASSERT_EQ(::mkdir(d.c_str(), mode), 0);
        ASSERT_EQ(::chmod(d.c_str(), mode), 0);
        for (int i = 0; i < files; ++i) {
            const int fd = ::open((d + "/f" + std::to_string(i)).c_str(),
                                  O_CREAT | O_WRONLY | O_CLOEXEC, 0644);
            ASSERT_GE(fd, 0);
            ::close(fd);
        }
    }
    // READDIRPLUS of `dir` from cookie 0 as the fixture's caller (uid 1000), decoded.
    x3::READDIRPLUS3res readdirplus(const std::string& dir) {
        auto a = fh_args(dir);
        put(a, 0);  // cookie
        put(a, 0);
        for (int i = 0; i < 8; ++i) a.push_back(0);  // cookieverf
        put(a, 65536);                               // dircount
        put(a, 1 << 20);                             // maxcount
        std::optional<rpc::Reply> r;
        EXPECT_TRUE(run(kReaddirplus, a, false, r));
        x3::READDIRPLUS3res res;
        if (!r) return res;
        bytes = r->bytes;  // the result's views point into it
        xdr::Decoder d(std::span<const uint8_t>(bytes).subspan(24));
        EXPECT_TRUE(x3::xdr_decode(d, res));
        return res;
    }
    std::vector<uint8_t> bytes;
};

}  // namespace

TEST_F(Nfs3Procs, ReaddirplusLooksEntriesUpWithoutAnIdentitySwitchEach) {
    ASSERT_TRUE(local);
    make_dir("d", 0755, 20);
    const uint64_t before = vfs::identity_switches_on_this_thread();
    auto res = readdirplus("d");
    const uint64_t switches = vfs::identity_switches_on_this_thread() - before;
    ASSERT_EQ(res.status(), x3::NFS3_OK);
    const auto& entries = res.resok().reply.entries;
    EXPECT_EQ(entries.size(), 22u);  // f0..f19, ".", ".."
    for (const auto& e : entries) {
        EXPECT_TRUE(e.name_handle.handle_follows()) << e.name;
        EXPECT_TRUE(e.name_attributes.attributes_follow()) << e.name;
    }
    // Opening the directory to read it is the caller's; the lookups are not (one check).
    EXPECT_LE(switches, 2u);
}

TEST_F(Nfs3Procs, ReaddirplusWithoutSearchPermissionListsNamesAlone) {
    // Readable but not searchable by uid 1000: names, no handles and no attributes, as a
    // lookup of each name by the caller would fail.
    ASSERT_TRUE(local);
    make_dir("r", 0744, 3);
    auto res = readdirplus("r");
    ASSERT_EQ(res.status(), x3::NFS3_OK);
    const auto& entries = res.resok().reply.entries;
    EXPECT_EQ(entries.size(), 5u);
    for (const auto& e : entries) {
        EXPECT_FALSE(e.name_handle.handle_follows()) << e.name;
        EXPECT_FALSE(e.name_attributes.attributes_follow()) << e.name;
    }
}

TEST_F(Nfs3Procs, ALookupOnAWorkerSwitchesNoIdentity) {
    ASSERT_TRUE(local);
    make_dir("d", 0755, 1);
    make_dir("p", 0700, 1);
    std::optional<rpc::Reply> r;
    auto args = [&](const std::string& dir, const std::string& name) {
        auto a = fh_args(dir);
        put_opaque(a, {reinterpret_cast<const uint8_t*>(name.data()), name.size()});
        return a;
    };
    const uint64_t before = vfs::identity_switches_on_this_thread();
    ASSERT_TRUE(run(kLookup, args("d", "f0"), false, r));
    EXPECT_EQ(nfsstat(*r), 0u);
    ASSERT_TRUE(run(kLookup, args("p", "f0"), false, r));
    EXPECT_EQ(nfsstat(*r), 13u);  // NFS3ERR_ACCES: uid 1000 may not search root's 0700
    ASSERT_TRUE(run(kLookup, args("d", "absent"), false, r));
    EXPECT_EQ(nfsstat(*r), 2u);  // NFS3ERR_NOENT
    EXPECT_EQ(vfs::identity_switches_on_this_thread(), before);
}

// CREATE, MKDIR, REMOVE and RENAME resolve their directories without a statx
// (Request::resolve_for_change): the change's own reading of the directory under its lock
// gives the wcc pre-op attributes and finds a directory removed since its handle was
// cached (NFS3ERR_STALE, not the NOENT the kernel would say of a name in it).
TEST_F(Nfs3Procs, ANamespaceChangeInADirectoryRemovedMeanwhileIsStale) {
    ASSERT_TRUE(local);
    make_dir("gone", 0777, 0);
    make_dir("kept", 0777, 0);
    const std::vector<uint8_t> gone = handle("gone");
    auto dirop = [&](const std::vector<uint8_t>& dir, const std::string& name) {
        std::vector<uint8_t> a;
        put_opaque(a, dir);
        put_opaque(a, {reinterpret_cast<const uint8_t*>(name.data()), name.size()});
        return a;
    };
    auto create = [&](const std::vector<uint8_t>& dir, const std::string& name) {
        auto a = dirop(dir, name);
        put(a, 0);                              // UNCHECKED
        for (int i = 0; i < 6; ++i) put(a, 0);  // sattr3: nothing set
        return a;
    };
    std::optional<rpc::Reply> r;
    ASSERT_TRUE(run(8, create(gone, "f"), false, r));  // the directory is cached now
    ASSERT_EQ(nfsstat(*r), 0u);
    {
        xdr::Decoder d(std::span<const uint8_t>(r->bytes).subspan(24));
        x3::CREATE3res res;
        ASSERT_TRUE(x3::xdr_decode(d, res));
        EXPECT_TRUE(res.resok().dir_wcc.before.attributes_follow());  // read under the lock
        EXPECT_TRUE(res.resok().dir_wcc.after.attributes_follow());
    }
    ASSERT_EQ(::unlink((base + "/export/gone/f").c_str()), 0);
    ASSERT_EQ(::rmdir((base + "/export/gone").c_str()), 0);
    ASSERT_TRUE(run(8, create(gone, "g"), false, r));
    EXPECT_EQ(nfsstat(*r), 70u);  // NFS3ERR_STALE
    auto mkdir = dirop(gone, "d");
    for (int i = 0; i < 6; ++i) put(mkdir, 0);  // sattr3: nothing set
    ASSERT_TRUE(run(9, mkdir, false, r));
    EXPECT_EQ(nfsstat(*r), 70u);
    ASSERT_TRUE(run(12, dirop(gone, "f"), false, r));  // REMOVE
    EXPECT_EQ(nfsstat(*r), 70u);
    auto rename = dirop(handle("kept"), "x");
    const auto to = dirop(gone, "x");
    rename.insert(rename.end(), to.begin(), to.end());
    const int fd = ::open((base + "/export/kept/x").c_str(), O_CREAT | O_WRONLY | O_CLOEXEC, 0644);
    ASSERT_GE(fd, 0);
    ::close(fd);
    ASSERT_TRUE(run(14, rename, false, r));  // RENAME into it
    EXPECT_EQ(nfsstat(*r), 70u);
    EXPECT_EQ(::access((base + "/export/kept/x").c_str(), F_OK), 0);  // not moved
}
