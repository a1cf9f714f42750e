// NFSv4.1 namespace and file operations through Nfs4Program (RFC 8881 §18): OPEN,
// READ, WRITE, CLOSE and their stateids, share reservations, files unlinked while open,
// LOOKUP/LOOKUPP/READDIR/GETATTR in the pseudo file system and in an export, and the
// errors of each.
#include <gtest/gtest.h>
#include <sys/stat.h>
#include <unistd.h>

#include <algorithm>
#include <fstream>
#include <iterator>
#include <string>
#include <vector>

#include "nfs/v4/attrs/object_attrs.h"
#include "nfs/vfs/durability.h"
#include "tests/unit/nfs4_ops_util.h"

namespace nfsrdmad::nfs::v4::testing {
namespace {

class Nfs4Files : public Nfs4OpsFixture {
  protected:
    void SetUp() override {
        Nfs4OpsFixture::SetUp();
        establish();
        root_fh_ = exp_->root_handle();
    }
    x4::nfs_argop4 put_root() { return op_putfh(root_fh_.data()); }
    std::span<const uint8_t> s(const std::string& v) { return keep(v); }

    // OPEN (create) + WRITE of `content`; the stateid.
    x4::stateid4 create_file(const std::string& name, const std::string& content,
                             const std::string& owner = "owner-a") {
        Reply r = seq({put_root(), op_open(s(owner), s(name), true, x4::OPEN4_SHARE_ACCESS_BOTH)});
        EXPECT_EQ(r.status(), x4::NFS4_OK);
        if (r.status() != x4::NFS4_OK) return {};
        x4::stateid4 sid = r.op(2).opopen().resok4().stateid;
        Reply w = seq({put_root(), op_lookup(s(name)), op_write(sid, 0, s(content))});
        EXPECT_EQ(w.status(), x4::NFS4_OK);
        return sid;
    }

    vfs::FileHandle root_fh_;
};

TEST_F(Nfs4Files, CreateWriteReadClose) {
    x4::stateid4 sid = create_file("f", "hello, v4");
    std::ifstream in(path("f"));
    std::string on_disk((std::istreambuf_iterator<char>(in)), std::istreambuf_iterator<char>());
    EXPECT_EQ(on_disk, "hello, v4");
    EXPECT_EQ(sid.seqid, 1u);

    Reply r = seq({put_root(), op_lookup(s("f")), op_read(sid, 7, 100)});
    ASSERT_EQ(r.status(), x4::NFS4_OK);
    const auto& rd = r.op(3).opread().resok4();
    EXPECT_TRUE(rd.eof);
    EXPECT_EQ(std::string(rd.data.begin(), rd.data.end()), "v4");

    Reply c = seq({put_root(), op_lookup(s("f")), op_close(sid)});
    ASSERT_EQ(c.status(), x4::NFS4_OK);
    EXPECT_EQ(c.op(3).opclose().open_stateid().seqid, 0xffffffffu);
    // The stateid is gone.
    Reply again = seq({put_root(), op_lookup(s("f")), op_read(sid, 0, 10)});
    EXPECT_EQ(again.status(), x4::NFS4ERR_BAD_STATEID);
}

TEST_F(Nfs4Files, OpenErrors) {
    write_file("exists", "x");
    ASSERT_EQ(::mkdir(path("d").c_str(), 0755), 0);
    EXPECT_EQ(seq({put_root(), op_open(s("o"), s("nope"), false, 1)}).status(), x4::NFS4ERR_NOENT);
    EXPECT_EQ(seq({put_root(), op_open(s("o"), s("d"), false, 1)}).status(), x4::NFS4ERR_ISDIR);
    EXPECT_EQ(seq({put_root(), op_open(s("o"), s("exists"), true, 1, 0, x4::GUARDED4)}).status(),
              x4::NFS4ERR_EXIST);
    EXPECT_EQ(seq({put_root(), op_open(s("o"), s("exists"), false, 0)}).status(),
              x4::NFS4ERR_INVAL);
    EXPECT_EQ(seq({put_root(), op_open(s("o"), s("exists"), false, 1, 4)}).status(),
              x4::NFS4ERR_INVAL);
    EXPECT_EQ(seq({put_root(), op_open(s("o"), s(".."), false, 1)}).status(), x4::NFS4ERR_BADNAME);
    // The pseudo root is read-only.
    EXPECT_EQ(seq({op_putrootfh(), op_open(s("o"), s("new"), true, 3)}).status(), x4::NFS4ERR_ROFS);
}

TEST_F(Nfs4Files, ShareReservations) {
    write_file("shared", "x", 0666);
    Reply a = seq({put_root(), op_open(s("a"), s("shared"), false, 1, x4::OPEN4_SHARE_DENY_WRITE)});
    ASSERT_EQ(a.status(), x4::NFS4_OK);
    // Another owner asking to write is denied; asking to read is not.
    EXPECT_EQ(seq({put_root(), op_open(s("b"), s("shared"), false, 2)}).status(),
              x4::NFS4ERR_SHARE_DENIED);
    EXPECT_EQ(seq({put_root(), op_open(s("b"), s("shared"), false, 1)}).status(), x4::NFS4_OK);
    // A READ-only open cannot write (§9.1.4 OPENMODE).
    x4::stateid4 sid = a.op(2).opopen().resok4().stateid;
    EXPECT_EQ(seq({put_root(), op_lookup(s("shared")), op_write(sid, 0, s("y"))}).status(),
              x4::NFS4ERR_OPENMODE);
    // The same owner opening again upgrades its open: same stateid, next seqid.
    Reply up = seq({put_root(), op_open(s("a"), s("shared"), false, 1)});
    ASSERT_EQ(up.status(), x4::NFS4_OK);
    EXPECT_EQ(up.op(2).opopen().resok4().stateid.other, sid.other);
    EXPECT_EQ(up.op(2).opopen().resok4().stateid.seqid, 2u);
    // The old seqid is now OLD_STATEID.
    EXPECT_EQ(seq({put_root(), op_lookup(s("shared")), op_read(sid, 0, 1)}).status(),
              x4::NFS4ERR_OLD_STATEID);
}

TEST_F(Nfs4Files, UnlinkedWhileOpenStaysUsable) {
    x4::stateid4 sid = create_file("gone", "still here");
    Reply fh = seq({put_root(), op_lookup(s("gone")), op_getfh()});
    ASSERT_EQ(fh.status(), x4::NFS4_OK);
    std::vector<uint8_t> handle(fh.op(3).opgetfh().resok4().object.begin(),
                                fh.op(3).opgetfh().resok4().object.end());
    x4::nfs_argop4 rm(x4::OP_REMOVE);
    rm.opremove().target = s("gone");
    ASSERT_EQ(seq({put_root(), rm}).status(), x4::NFS4_OK);
    struct stat st;
    EXPECT_NE(::stat(path("gone").c_str(), &st), 0);
    Reply r = seq({op_putfh(handle), op_read(sid, 0, 100)});
    ASSERT_EQ(r.status(), x4::NFS4_OK);
    const auto& d = r.op(2).opread().resok4().data;
    EXPECT_EQ(std::string(d.begin(), d.end()), "still here");
    // CLOSE matches the handle against the open without opening the object: the removed
    // file's open is released (not NFS4ERR_STALE, which would leave it to lease expiry).
    const size_t opens = program_->services().opens.size();
    Reply c = seq({op_putfh(handle), op_close(sid)});
    ASSERT_EQ(c.status(), x4::NFS4_OK);
    EXPECT_EQ(program_->services().opens.size(), opens - 1);
}

// Under AUTH_SYS the owner and owner_group are the ids in decimal (RFC 8881 §5.9), each
// made only when asked for.
TEST_F(Nfs4Files, OwnerAndGroupAreTheIdsInDecimal) {
    create_file("owned", "x");
    ASSERT_EQ(::chown(path("owned").c_str(), 4321, 98765), 0);
    auto strings = [&](std::initializer_list<uint32_t> want) {
        Reply r = seq({put_root(), op_lookup(s("owned")), op_getattr(want)});
        EXPECT_EQ(r.status(), x4::NFS4_OK);
        std::vector<std::string> out;
        if (r.status() != x4::NFS4_OK) return out;
        xdr::Decoder d(r.op(3).opgetattr().resok4().obj_attributes.attr_vals);
        while (d.remaining() > 0 && d.ok()) out.emplace_back(d.get_string(1024));
        EXPECT_TRUE(d.ok());
        return out;
    };
    EXPECT_EQ(strings({x4::FATTR4_OWNER, x4::FATTR4_OWNER_GROUP}),
              (std::vector<std::string>{"4321", "98765"}));
    EXPECT_EQ(strings({x4::FATTR4_OWNER_GROUP}), (std::vector<std::string>{"98765"}));
    EXPECT_EQ(strings({x4::FATTR4_OWNER}), (std::vector<std::string>{"4321"}));
    ASSERT_EQ(::chown(path("owned").c_str(), 0, 0), 0);
    EXPECT_EQ(strings({x4::FATTR4_OWNER, x4::FATTR4_OWNER_GROUP}),
              (std::vector<std::string>{"0", "0"}));
}

// GETATTR answers with the attributes read when its own operation resolved the handle
// (one statx, not two), never with those an earlier operation of the COMPOUND read: after
// a WRITE, the size is the written one.
TEST_F(Nfs4Files, GetattrAfterWriteInOneCompoundSeesTheWrite) {
    x4::stateid4 sid = create_file("grow", "1234");
    Reply fh = seq({put_root(), op_lookup(s("grow")), op_getfh()});
    ASSERT_EQ(fh.status(), x4::NFS4_OK);
    std::vector<uint8_t> handle(fh.op(3).opgetfh().resok4().object.begin(),
                                fh.op(3).opgetfh().resok4().object.end());
    auto size_in = [](const Reply& r, size_t op) {
        xdr::Decoder d(r.op(op).opgetattr().resok4().obj_attributes.attr_vals);
        return d.get_u64();
    };
    // PUTFH + GETATTR: resolved in GETATTR itself.
    Reply before = seq({op_putfh(handle), op_getattr({x4::FATTR4_SIZE})});
    ASSERT_EQ(before.status(), x4::NFS4_OK);
    EXPECT_EQ(size_in(before, 2), 4u);
    // WRITE resolves the handle (and reads its attributes) first; GETATTR must not use them.
    Reply after =
        seq({op_putfh(handle), op_write(sid, 0, s("0123456789")), op_getattr({x4::FATTR4_SIZE})});
    ASSERT_EQ(after.status(), x4::NFS4_OK);
    EXPECT_EQ(size_in(after, 3), 10u);
    // Two GETATTRs of one handle in one COMPOUND, a SETATTR between them.
    x4::nfs_argop4 trunc(x4::OP_SETATTR);
    auto& sa = trunc.opsetattr();
    sa.stateid = sid;
    sa.obj_attributes.attrmask = {1u << x4::FATTR4_SIZE};
    static const uint8_t kTwo[8] = {0, 0, 0, 0, 0, 0, 0, 2};
    sa.obj_attributes.attr_vals = kTwo;
    Reply both = seq(
        {op_putfh(handle), op_getattr({x4::FATTR4_SIZE}), trunc, op_getattr({x4::FATTR4_SIZE})});
    ASSERT_EQ(both.status(), x4::NFS4_OK);
    EXPECT_EQ(size_in(both, 2), 10u);
    EXPECT_EQ(size_in(both, 4), 2u);
}

// LOOKUP and OPEN hand the attributes they read on to a GETATTR or ACCESS after them with
// only GETFH between (the Linux client's order: one statx fewer), never past an operation
// that changed the file, nor from an OPEN that set attributes after it read them.
TEST_F(Nfs4Files, AttributesReadByLookupOrOpenAreNotUsedPastAChange) {
    x4::stateid4 sid = create_file("g", "1234");
    auto size_in = [](const Reply& r, size_t op) {
        xdr::Decoder d(r.op(op).opgetattr().resok4().obj_attributes.attr_vals);
        return d.get_u64();
    };
    Reply r = seq({put_root(), op_lookup(s("g")), op_getfh(), op_getattr({x4::FATTR4_SIZE})});
    ASSERT_EQ(r.status(), x4::NFS4_OK);
    EXPECT_EQ(size_in(r, 4), 4u);
    Reply w = seq({put_root(), op_lookup(s("g")), op_write(sid, 0, s("0123456789")),
                   op_getattr({x4::FATTR4_SIZE})});
    ASSERT_EQ(w.status(), x4::NFS4_OK);
    EXPECT_EQ(size_in(w, 4), 10u);
    // A new file created with a size: the attributes read at its creation are not its own
    // any more once the size is set.
    static const uint8_t kFive[8] = {0, 0, 0, 0, 0, 0, 0, 5};
    x4::nfs_argop4 open = op_open(s("owner-s"), s("sized"), true, x4::OPEN4_SHARE_ACCESS_BOTH);
    auto& attrs = open.opopen().openhow.how().createattrs();
    attrs.attrmask = {1u << x4::FATTR4_SIZE};
    attrs.attr_vals = kFive;
    Reply o = seq({put_root(), open, op_getfh(), op_getattr({x4::FATTR4_SIZE})});
    ASSERT_EQ(o.status(), x4::NFS4_OK);
    EXPECT_EQ(size_in(o, 4), 5u);
}

// The Linux client's O_TRUNC comes as a size of 0 with the OPEN that creates the file: a
// file just made is empty, so that size changes nothing and costs no truncate and no
// commit of its own; it is still reported set, and a size other than 0 is applied.
TEST_F(Nfs4Files, ASizeOfZeroOnACreatedFileCommitsNothingMore) {
    auto open_with_size = [&](const char* name, uint64_t size) {
        x4::nfs_argop4 open = op_open(s("owner-z"), s(name), true, x4::OPEN4_SHARE_ACCESS_BOTH);
        auto& attrs = open.opopen().openhow.how().createattrs();
        attrs.attrmask = {1u << x4::FATTR4_SIZE};
        std::vector<uint8_t> v(8);
        for (int i = 0; i < 8; ++i) v[i] = static_cast<uint8_t>(size >> (56 - 8 * i));
        attrs.attr_vals = v;
        const uint64_t before = vfs::metadata_commits();
        Reply r = seq({put_root(), open, op_getattr({x4::FATTR4_SIZE})});
        EXPECT_EQ(r.status(), x4::NFS4_OK) << name;
        if (r.status() != x4::NFS4_OK) return uint64_t{~0ull};
        EXPECT_EQ(r.op(2).opopen().resok4().attrset, std::vector<uint32_t>{1u << x4::FATTR4_SIZE});
        xdr::Decoder d(r.op(3).opgetattr().resok4().obj_attributes.attr_vals);
        EXPECT_EQ(d.get_u64(), size) << name;
        return vfs::metadata_commits() - before;
    };
    EXPECT_EQ(open_with_size("empty", 0), 1u);  // the directory's, for the new name
    EXPECT_EQ(open_with_size("five", 5), 2u);   // and the size's
}

TEST_F(Nfs4Files, StateidForAnotherFileIsBad) {
    x4::stateid4 sid = create_file("one", "1");
    create_file("two", "2", "owner-b");
    EXPECT_EQ(seq({put_root(), op_lookup(s("two")), op_read(sid, 0, 1)}).status(),
              x4::NFS4ERR_BAD_STATEID);
    // The current stateid (seqid 1, other zero) after OPEN in the same COMPOUND.
    x4::stateid4 current{1, {}};
    Reply r = seq({put_root(), op_open(s("owner-c"), s("one"), false, 1), op_read(current, 0, 1)});
    ASSERT_EQ(r.status(), x4::NFS4_OK);
    // Without one it is BAD_STATEID.
    EXPECT_EQ(seq({put_root(), op_lookup(s("one")), op_read(current, 0, 1)}).status(),
              x4::NFS4ERR_BAD_STATEID);
}

TEST_F(Nfs4Files, PseudoRootAndLookups) {
    // PUTROOTFH: a pseudo directory in the pseudo fsid.
    Reply r = seq({op_putrootfh(), op_getattr({x4::FATTR4_TYPE, x4::FATTR4_FSID})});
    ASSERT_EQ(r.status(), x4::NFS4_OK);
    const auto& f = r.op(2).opgetattr().resok4().obj_attributes;
    xdr::Decoder d(f.attr_vals);
    EXPECT_EQ(d.get_u32(), static_cast<uint32_t>(x4::NF4DIR));
    EXPECT_EQ(d.get_u64(), kPseudoFsid.major);
    EXPECT_EQ(d.get_u64(), kPseudoFsid.minor);
    // Walking down the export's path component by component reaches its root.
    std::vector<x4::nfs_argop4> ops{op_putrootfh()};
    std::string p = export_dir_.substr(1);
    for (size_t at = 0; at != std::string::npos;) {
        size_t next = p.find('/', at);
        ops.push_back(op_lookup(s(p.substr(at, next == std::string::npos ? next : next - at))));
        at = next == std::string::npos ? next : next + 1;
    }
    ops.push_back(op_getfh());
    Reply walk = seq(ops);
    ASSERT_EQ(walk.status(), x4::NFS4_OK);
    auto got = walk.op(walk.count() - 1).opgetfh().resok4().object;
    EXPECT_TRUE(std::equal(got.begin(), got.end(), root_fh_.data().begin(), root_fh_.data().end()));
    // LOOKUPP at the export root goes back up into the pseudo file system.
    x4::nfs_argop4 up(x4::OP_LOOKUPP);
    Reply back = seq({put_root(), up, op_getfh()});
    ASSERT_EQ(back.status(), x4::NFS4_OK);
    EXPECT_TRUE(is_pseudo_handle(back.op(3).opgetfh().resok4().object));
    // Errors: a name that is not there, a file as a directory, "." and "".
    write_file("plain", "x");
    EXPECT_EQ(seq({op_putrootfh(), op_lookup(s("nope"))}).status(), x4::NFS4ERR_NOENT);
    EXPECT_EQ(seq({put_root(), op_lookup(s("plain")), op_lookup(s("x"))}).status(),
              x4::NFS4ERR_NOTDIR);
    EXPECT_EQ(seq({put_root(), op_lookup(s("."))}).status(), x4::NFS4ERR_BADNAME);
    EXPECT_EQ(seq({put_root(), op_lookup(s(""))}).status(), x4::NFS4ERR_INVAL);
    // LOOKUPP at the pseudo root: NOENT.
    EXPECT_EQ(seq({op_putrootfh(), up}).status(), x4::NFS4ERR_NOENT);
}

TEST_F(Nfs4Files, ReaddirListsWithoutDotsAndChecksCookies) {
    write_file("a", "1");
    write_file("b", "2");
    x4::nfs_argop4 rd(x4::OP_READDIR);
    rd.opreaddir().maxcount = 8192;
    rd.opreaddir().dircount = 8192;
    rd.opreaddir().attr_request = {1u << x4::FATTR4_TYPE};
    Reply r = seq({put_root(), rd});
    ASSERT_EQ(r.status(), x4::NFS4_OK);
    const auto& list = r.op(2).opreaddir().resok4().reply;
    EXPECT_TRUE(list.eof);
    std::vector<std::string> names;
    for (const auto& e : list.entries) names.emplace_back(e.name.begin(), e.name.end());
    std::sort(names.begin(), names.end());
    EXPECT_EQ(names, (std::vector<std::string>{"a", "b"}));
    // Cookies 1 and 2 are reserved; a tiny maxcount fits nothing.
    rd.opreaddir().cookie = 1;
    EXPECT_EQ(seq({put_root(), rd}).status(), x4::NFS4ERR_BAD_COOKIE);
    rd.opreaddir().cookie = 0;
    rd.opreaddir().maxcount = 20;
    EXPECT_EQ(seq({put_root(), rd}).status(), x4::NFS4ERR_TOOSMALL);
}

TEST_F(Nfs4Files, ReaddirLooksEntriesUpWithoutAnIdentitySwitchEach) {
    // Each entry's attributes need its lookup as the caller; the one permission that takes
    // is search on the directory, asked once (vfs::may_search).
    ASSERT_EQ(::mkdir(path("d").c_str(), 0755), 0);
    for (int i = 0; i < 20; ++i) write_file("d/f" + std::to_string(i), "x");
    ASSERT_EQ(::mkdir(path("r").c_str(), 0744), 0);  // readable, not searchable by others
    write_file("r/f", "x");
    cred.sys.uid = 1234;
    cred.sys.gid = 1234;
    x4::nfs_argop4 rd(x4::OP_READDIR);
    rd.opreaddir().maxcount = 65536;
    rd.opreaddir().dircount = 65536;
    rd.opreaddir().attr_request = {1u << x4::FATTR4_TYPE | 1u << x4::FATTR4_RDATTR_ERROR};
    const uint64_t before = vfs::identity_switches_on_this_thread();
    Reply r = seq({put_root(), op_lookup(s("d")), rd});
    const uint64_t switches = vfs::identity_switches_on_this_thread() - before;
    ASSERT_EQ(r.status(), x4::NFS4_OK);
    EXPECT_EQ(r.op(3).opreaddir().resok4().reply.entries.size(), 20u);
    EXPECT_LE(switches, 3u);  // LOOKUP's, the directory's opening for reading; none per entry
    // No search permission: each entry says ACCESS (rdattr_error), as its lookup would.
    Reply n = seq({put_root(), op_lookup(s("r")), rd});
    ASSERT_EQ(n.status(), x4::NFS4_OK);
    const auto& entries = n.op(3).opreaddir().resok4().reply.entries;
    ASSERT_EQ(entries.size(), 1u);
    const auto& vals = entries[0].attrs.attr_vals;
    ASSERT_EQ(vals.size(), 4u);
    EXPECT_EQ(uint32_t(vals[0]) << 24 | uint32_t(vals[1]) << 16 | uint32_t(vals[2]) << 8 | vals[3],
              uint32_t(x4::NFS4ERR_ACCESS));
}

// READDIR's attributes (read by name where that is exact, vfs::lookup_listed) are byte
// for byte what LOOKUP + GETATTR of each name returns, with and without the file system's
// counts (statfs, which needs the object opened); a directory that is another export's
// root is that export's, with its own handle and fsid, as LOOKUP gives it.
TEST_F(Nfs4Files, ReaddirAttributesAreWhatGetattrOfEachNameGives) {
    ASSERT_EQ(::mkdir(path("d").c_str(), 0755), 0);
    write_file("d/f", "12345");
    ASSERT_EQ(::mkdir(path("d/sub").c_str(), 0700), 0);
    ASSERT_EQ(::mkdir(path("d/inner").c_str(), 0755), 0);
    ASSERT_EQ(::symlink("f", path("d/link").c_str()), 0);
    ASSERT_EQ(::mkfifo(path("d/fifo").c_str(), 0600), 0);
    vfs::ClientRule rule;
    rule.read_write = true;
    rule.squash = vfs::ClientRule::None;
    rule.secure = false;
    std::string why;
    auto two = vfs::ExportTable::create(
        {vfs::ExportSpec{export_dir_, 0, {rule}}, vfs::ExportSpec{path("d/inner"), 0, {rule}}},
        key_, &why);
    ASSERT_TRUE(two.ok()) << why;
    registry_->replace(*two);
    const std::initializer_list<uint32_t> plain = {
        x4::FATTR4_TYPE,          x4::FATTR4_CHANGE,       x4::FATTR4_SIZE,
        x4::FATTR4_FSID,          x4::FATTR4_RDATTR_ERROR, x4::FATTR4_FILEHANDLE,
        x4::FATTR4_FILEID,        x4::FATTR4_MODE,         x4::FATTR4_NUMLINKS,
        x4::FATTR4_OWNER,         x4::FATTR4_OWNER_GROUP,  x4::FATTR4_SPACE_USED,
        x4::FATTR4_TIME_METADATA, x4::FATTR4_TIME_MODIFY,  x4::FATTR4_MOUNTED_ON_FILEID};
    std::initializer_list<uint32_t> counts = {x4::FATTR4_TYPE, x4::FATTR4_FILEHANDLE,
                                              x4::FATTR4_FILEID, x4::FATTR4_SPACE_TOTAL,
                                              x4::FATTR4_FILES_TOTAL};
    for (const auto& want : {plain, counts}) {
        x4::nfs_argop4 rd(x4::OP_READDIR);
        rd.opreaddir().maxcount = 65536;
        rd.opreaddir().dircount = 65536;
        rd.opreaddir().attr_request = op_getattr(want).opgetattr().attr_request;
        Reply r = seq({put_root(), op_lookup(s("d")), rd});
        ASSERT_EQ(r.status(), x4::NFS4_OK);
        const auto& entries = r.op(3).opreaddir().resok4().reply.entries;
        ASSERT_EQ(entries.size(), 5u);
        for (const auto& e : entries) {
            const std::string name(e.name.begin(), e.name.end());
            SCOPED_TRACE(name);
            Reply g = seq({put_root(), op_lookup(s("d")), op_lookup(s(name)), op_getattr(want)});
            ASSERT_EQ(g.status(), x4::NFS4_OK);
            const auto& attrs = g.op(4).opgetattr().resok4().obj_attributes;
            EXPECT_EQ(e.attrs.attrmask, attrs.attrmask);
            EXPECT_EQ(std::vector<uint8_t>(e.attrs.attr_vals.begin(), e.attrs.attr_vals.end()),
                      std::vector<uint8_t>(attrs.attr_vals.begin(), attrs.attr_vals.end()));
        }
    }
}

// §8.2.3: the READ bypass stateid (all ones) in WRITE is the anonymous stateid (pynfs WRT2):
// it writes, and a DENY_WRITE another owner holds makes it NFS4ERR_LOCKED; in READ it passes
// share reservations.
TEST_F(Nfs4Files, TheReadBypassStateidWritesAsTheAnonymousOne) {
    x4::stateid4 bypass{0xffffffffu, {}};
    bypass.other.fill(0xff);
    const x4::stateid4 made = create_file("bypass", "0123456789");
    ASSERT_EQ(seq({put_root(), op_lookup(s("bypass")), op_close(made)}).status(), x4::NFS4_OK);
    Reply w = seq({put_root(), op_lookup(s("bypass")), op_write(bypass, 0, s("ab"))});
    ASSERT_EQ(w.status(), x4::NFS4_OK);
    std::ifstream in(path("bypass"));
    std::string on_disk((std::istreambuf_iterator<char>(in)), std::istreambuf_iterator<char>());
    EXPECT_EQ(on_disk, "ab23456789");

    Reply deny = seq({put_root(), op_open(s("denier"), s("bypass"), false,
                                          x4::OPEN4_SHARE_ACCESS_READ, x4::OPEN4_SHARE_DENY_BOTH)});
    ASSERT_EQ(deny.status(), x4::NFS4_OK);
    EXPECT_EQ(seq({put_root(), op_lookup(s("bypass")), op_write(bypass, 0, s("cd"))}).status(),
              x4::NFS4ERR_LOCKED);
    EXPECT_EQ(seq({put_root(), op_lookup(s("bypass")), op_read(bypass, 0, 2)}).status(),
              x4::NFS4_OK);
}

// OPEN_DOWNGRADE (§18.18.3): to an access and a deny some OPEN of the stateid asked for
// (pynfs OPDG2: one OPEN of BOTH cannot go down to READ); the delegation wants in
// share_access are ignored (not INVAL), anything beyond what it holds is INVAL.
TEST_F(Nfs4Files, OpenDowngradeGoesToWhatAnOpenAskedAndIgnoresDelegationWants) {
    const x4::stateid4 both = create_file("down", "x");
    auto downgrade = [&](const x4::stateid4& from, uint32_t access) {
        x4::nfs_argop4 op(x4::OP_OPEN_DOWNGRADE);
        op.opopen_downgrade().open_stateid = from;
        op.opopen_downgrade().seqid = 0;
        op.opopen_downgrade().share_access = access;
        op.opopen_downgrade().share_deny = x4::OPEN4_SHARE_DENY_NONE;
        return seq({put_root(), op_lookup(s("down")), op});
    };
    EXPECT_EQ(downgrade(both, x4::OPEN4_SHARE_ACCESS_READ).status(), x4::NFS4ERR_INVAL);
    // The same owner opens it for reading too (the same stateid, upgraded): READ is an
    // access an OPEN asked for.
    Reply again =
        seq({put_root(), op_open(s("owner-a"), s("down"), false, x4::OPEN4_SHARE_ACCESS_READ)});
    ASSERT_EQ(again.status(), x4::NFS4_OK);
    const x4::stateid4 sid = again.op(2).opopen().resok4().stateid;
    ASSERT_EQ(sid.other, both.other);
    Reply r = downgrade(sid, x4::OPEN4_SHARE_ACCESS_READ | x4::OPEN4_SHARE_ACCESS_WANT_NO_DELEG);
    ASSERT_EQ(r.status(), x4::NFS4_OK);
    const x4::stateid4 now = r.op(3).opopen_downgrade().resok4().open_stateid;
    EXPECT_EQ(now.seqid, sid.seqid + 1);
    EXPECT_EQ(downgrade(now, x4::OPEN4_SHARE_ACCESS_WRITE).status(), x4::NFS4ERR_INVAL);
    EXPECT_EQ(downgrade(now, x4::OPEN4_SHARE_ACCESS_READ | 0x4).status(), x4::NFS4ERR_INVAL);
}

TEST_F(Nfs4Files, ReclaimCompleteOnce) {
    // The fixture's establish() sent the first (NFS4_OK, asserted there).
    x4::nfs_argop4 rc(x4::OP_RECLAIM_COMPLETE);
    EXPECT_EQ(seq({rc}).status(), x4::NFS4ERR_COMPLETE_ALREADY);
}

// §18.51.3: a non-reclaim OPEN before the client's RECLAIM_COMPLETE is NFS4ERR_GRACE, outside
// any grace period too (pynfs RECC3); after it the OPEN goes through. OPEN4_CREATE with a
// claim other than CLAIM_NULL is INVAL (§18.16.3), whatever the grace.
TEST_F(Nfs4Files, OpenBeforeReclaimCompleteIsGrace) {
    reclaim_complete_ = false;
    establish("no-reclaim-complete-yet");
    const std::string name = "before-recc";
    auto open = [&] {
        return seq({put_root(), op_open(s("o"), s(name), true, x4::OPEN4_SHARE_ACCESS_BOTH)})
            .status();
    };
    EXPECT_EQ(open(), x4::NFS4ERR_GRACE);
    x4::nfs_argop4 create_by_fh = op_open(s("o"), s(name), true, x4::OPEN4_SHARE_ACCESS_BOTH);
    create_by_fh.opopen().claim.set_claim(x4::CLAIM_FH);
    EXPECT_EQ(seq({put_root(), create_by_fh}).status(), x4::NFS4ERR_INVAL);
    ASSERT_EQ(seq({op_reclaim_complete()}).status(), x4::NFS4_OK);
    EXPECT_EQ(open(), x4::NFS4_OK);
}

TEST_F(Nfs4Files, NonRootCallerIsCheckedByTheKernel) {
    write_file("private", "secret", 0600);
    cred.sys.uid = 1234;
    cred.sys.gid = 1234;
    EXPECT_EQ(seq({put_root(), op_open(s("u"), s("private"), false, 1)}).status(),
              x4::NFS4ERR_ACCESS);
    // OPEN with create on a file that is already there is checked like any OPEN.
    EXPECT_EQ(seq({put_root(), op_open(s("u"), s("private"), true, 3)}).status(),
              x4::NFS4ERR_ACCESS);
}

// REMOVE looks at the name as root (vfs::peek) to find a delegation to recall, then
// removes it as the caller: what the caller may not see or remove fails with the
// caller's own error, as the lookup it replaced failed; a directory is removed as one.
TEST_F(Nfs4Files, RemoveAnswersWithTheCallersErrors) {
    ASSERT_EQ(::mkdir(path("locked").c_str(), 0700), 0);
    write_file("locked/f", "x");
    ASSERT_EQ(::mkdir(path("empty").c_str(), 0755), 0);
    ASSERT_EQ(::mkdir(path("full").c_str(), 0755), 0);
    write_file("full/g", "y");
    Reply fh = seq({put_root(), op_lookup(s("locked")), op_getfh()});
    ASSERT_EQ(fh.status(), x4::NFS4_OK);
    std::vector<uint8_t> locked(fh.op(3).opgetfh().resok4().object.begin(),
                                fh.op(3).opgetfh().resok4().object.end());
    auto remove = [&](const std::string& name) {
        x4::nfs_argop4 rm(x4::OP_REMOVE);
        rm.opremove().target = s(name);
        return rm;
    };

    cred.sys.uid = 1234;
    cred.sys.gid = 1234;
    EXPECT_EQ(seq({op_putfh(locked), remove("f")}).status(), x4::NFS4ERR_ACCESS);
    EXPECT_EQ(seq({op_putfh(locked), remove("nothing")}).status(), x4::NFS4ERR_ACCESS);
    struct stat st;
    EXPECT_EQ(::stat(path("locked/f").c_str(), &st), 0);
    EXPECT_EQ(seq({put_root(), remove("nothing")}).status(), x4::NFS4ERR_NOENT);

    cred.sys.uid = 0;
    cred.sys.gid = 0;
    EXPECT_EQ(seq({put_root(), remove("full")}).status(), x4::NFS4ERR_NOTEMPTY);
    EXPECT_EQ(seq({put_root(), remove("empty")}).status(), x4::NFS4_OK);
    EXPECT_NE(::stat(path("empty").c_str(), &st), 0);
    EXPECT_EQ(seq({op_putfh(locked), remove("f")}).status(), x4::NFS4_OK);
    EXPECT_NE(::stat(path("locked/f").c_str(), &st), 0);
}

// change_info4 (RFC 8881 §3.3.8) of CREATE, OPEN, REMOVE, RENAME and LINK is atomic
// (vfs/dir_change.h), and each "before" is the last one's "after": nothing else changed
// the directory. The Linux client keeps its caches of the directory only then. The last
// "after" is the directory's change attribute (its ctime) now.
TEST_F(Nfs4Files, ChangeInfoIsAtomicAndChains) {
    std::vector<x4::change_info4> seen;
    auto op = [&](x4::nfs_opnum4 n) { return x4::nfs_argop4(n); };

    x4::nfs_argop4 mk = op(x4::OP_CREATE);
    mk.opcreate().objtype.set_type(x4::NF4DIR);
    mk.opcreate().objname = s("d");
    Reply r = seq({put_root(), mk});
    ASSERT_EQ(r.status(), x4::NFS4_OK);
    seen.push_back(r.op(2).opcreate().resok4().cinfo);

    r = seq({put_root(), op_open(s("o"), s("f"), true, x4::OPEN4_SHARE_ACCESS_BOTH)});
    ASSERT_EQ(r.status(), x4::NFS4_OK);
    seen.push_back(r.op(2).opopen().resok4().cinfo);

    x4::nfs_argop4 ln = op(x4::OP_LINK);
    ln.oplink().newname = s("g");
    r = seq({put_root(), op_lookup(s("f")), op_savefh(), put_root(), ln});
    ASSERT_EQ(r.status(), x4::NFS4_OK);
    seen.push_back(r.op(5).oplink().resok4().cinfo);

    x4::nfs_argop4 mv = op(x4::OP_RENAME);
    mv.oprename().oldname = s("g");
    mv.oprename().newname = s("h");
    r = seq({put_root(), op_savefh(), mv});
    ASSERT_EQ(r.status(), x4::NFS4_OK);
    const auto& moved = r.op(3).oprename().resok4();
    EXPECT_EQ(moved.source_cinfo.before, moved.target_cinfo.before);  // one directory
    EXPECT_EQ(moved.source_cinfo.after, moved.target_cinfo.after);
    seen.push_back(moved.source_cinfo);

    x4::nfs_argop4 rm = op(x4::OP_REMOVE);
    rm.opremove().target = s("h");
    r = seq({put_root(), rm});
    ASSERT_EQ(r.status(), x4::NFS4_OK);
    seen.push_back(r.op(2).opremove().resok4().cinfo);

    for (size_t i = 0; i < seen.size(); ++i) {
        EXPECT_TRUE(seen[i].atomic) << i;
        EXPECT_LE(seen[i].before, seen[i].after) << i;
        if (i > 0) {
            EXPECT_EQ(seen[i].before, seen[i - 1].after) << i;
        }
    }
    struct stat st {};
    ASSERT_EQ(::stat(export_dir_.c_str(), &st), 0);
    EXPECT_EQ(seen.back().after,
              static_cast<uint64_t>(st.st_ctim.tv_sec) * 1000000000u + st.st_ctim.tv_nsec);
}

// OPEN's create, CREATE, REMOVE and RENAME take a directory the descriptor cache holds
// without a statx (Request::current_for_change); the change's own reading of it under its
// lock finds one removed since (STALE, where the kernel would say NOENT of a name in it).
// A regular file as the current filehandle is still NOTDIR.
TEST_F(Nfs4Files, AChangeInADirectoryRemovedMeanwhileIsStale) {
    ASSERT_EQ(::mkdir(path("gone").c_str(), 0777), 0);
    ASSERT_EQ(::mkdir(path("kept").c_str(), 0777), 0);
    write_file("kept/x", "x");
    auto handle_of = [&](const std::string& name) {
        Reply fh = seq({put_root(), op_lookup(s(name)), op_getfh()});
        EXPECT_EQ(fh.status(), x4::NFS4_OK);
        const auto& o = fh.op(3).opgetfh().resok4().object;
        return std::vector<uint8_t>(o.begin(), o.end());
    };
    const std::vector<uint8_t> gone = handle_of("gone"), kept = handle_of("kept");
    Reply made = seq({op_putfh(gone), op_open(s("o"), s("f"), true, x4::OPEN4_SHARE_ACCESS_BOTH)});
    ASSERT_EQ(made.status(), x4::NFS4_OK);  // the directory is in the cache now
    EXPECT_TRUE(made.op(2).opopen().resok4().cinfo.atomic);
    const x4::stateid4 sid = made.op(2).opopen().resok4().stateid;
    x4::nfs_argop4 cl(x4::OP_CLOSE);
    cl.opclose().open_stateid = sid;
    ASSERT_EQ(seq({op_putfh(gone), op_lookup(s("f")), cl}).status(), x4::NFS4_OK);
    ASSERT_EQ(::unlink(path("gone/f").c_str()), 0);
    ASSERT_EQ(::rmdir(path("gone").c_str()), 0);

    EXPECT_EQ(
        seq({op_putfh(gone), op_open(s("o"), s("g"), true, x4::OPEN4_SHARE_ACCESS_BOTH)}).status(),
        x4::NFS4ERR_STALE);
    x4::nfs_argop4 mk(x4::OP_CREATE);
    mk.opcreate().objtype.set_type(x4::NF4DIR);
    mk.opcreate().objname = s("d");
    EXPECT_EQ(seq({op_putfh(gone), mk}).status(), x4::NFS4ERR_STALE);
    x4::nfs_argop4 rm(x4::OP_REMOVE);
    rm.opremove().target = s("f");
    EXPECT_EQ(seq({op_putfh(gone), rm}).status(), x4::NFS4ERR_STALE);
    x4::nfs_argop4 mv(x4::OP_RENAME);
    mv.oprename().oldname = s("x");
    mv.oprename().newname = s("x");
    EXPECT_EQ(seq({op_putfh(kept), op_savefh(), op_putfh(gone), mv}).status(), x4::NFS4ERR_STALE);
    struct stat st {};
    EXPECT_EQ(::stat(path("kept/x").c_str(), &st), 0);  // not moved

    // A regular file the cache holds (just opened) as the directory: NOTDIR, as before.
    create_file("plain", "p");
    const std::vector<uint8_t> plain = handle_of("plain");
    EXPECT_EQ(seq({op_putfh(plain), rm}).status(), x4::NFS4ERR_NOTDIR);
}

// READs in a COMPOUND the slot caches: the retransmission gets the data too (the slot
// keeps the whole reply), and out of line again, each READ's data its own payload, as
// the first reply carried it (RFC 8267 §4): over RDMA a retransmission that came on a
// new connection is answered through its own write chunks (RFC 8166 §3.4.6).
TEST_F(Nfs4Files, CachedReadIsReplayedWithItsDataOutOfLine) {
    x4::stateid4 sid = create_file("cached", "replayed bytes");
    auto reads = [&] {
        return std::vector<x4::nfs_argop4>{put_root(), op_lookup(s("cached")), op_read(sid, 0, 100),
                                           op_read(sid, 9, 3), op_read(sid, 100, 10)};
    };
    Reply first = seq(reads(), true);
    ASSERT_EQ(first.status(), x4::NFS4_OK);
    ASSERT_EQ(first.payloads.size(), 2u);  // the READ at the end of the file has no data
    --seqid_;
    Reply again = seq(reads(), true);
    ASSERT_TRUE(again.decoded);
    EXPECT_EQ(*again.bytes, *first.bytes);
    ASSERT_EQ(again.payloads.size(), 2u);
    EXPECT_EQ(std::string(again.payloads[0].begin(), again.payloads[0].end()), "replayed bytes");
    EXPECT_EQ(std::string(again.payloads[1].begin(), again.payloads[1].end()), "byt");
    const auto& rd = again.op(3).opread().resok4();
    EXPECT_EQ(std::string(rd.data.begin(), rd.data.end()), "replayed bytes");
    EXPECT_EQ(again.op(4).opread().resok4().data.size(), 3u);
    EXPECT_TRUE(again.op(5).opread().resok4().eof);
}

}  // namespace
}  // namespace nfsrdmad::nfs::v4::testing

namespace nfsrdmad::nfs::v4::testing {
namespace {

// SETATTR of a mode (mode_bytes) with the anonymous stateid (pynfs's clean_dir sends 0755 to every
// entry before REMOVE).
x4::nfs_argop4 setattr_mode(std::span<const uint8_t> vals) {
    x4::nfs_argop4 op(x4::OP_SETATTR);
    auto& a = op.opsetattr();
    a.stateid = {0, {}};
    a.obj_attributes.attrmask = {0, 1u << (x4::FATTR4_MODE - 32)};
    a.obj_attributes.attr_vals = vals;
    return op;
}
std::string mode_bytes(uint32_t mode) {
    return {static_cast<char>(mode >> 24), static_cast<char>(mode >> 16),
            static_cast<char>(mode >> 8), static_cast<char>(mode)};
}

std::string xdr_string(const std::string& v) {
    std::string out = mode_bytes(static_cast<uint32_t>(v.size())) + v;
    out.resize((out.size() + 3) & ~size_t{3}, '\0');
    return out;
}

// §18.30.3: of several attributes, one refused is the answer (BADOWNER for an owner no one
// has), not BADXDR for the values after it, which still decode (`chown nosuch:group`).
// An attribute no RFC defines is ATTRNOTSUPP; a read-only one INVAL.
TEST_F(Nfs4Files, SetattrAnswersTheRefusedAttributeNotBadxdr) {
    std::ofstream(path("owned")) << "x";
    x4::nfs_argop4 op(x4::OP_SETATTR);
    auto& a = op.opsetattr();
    a.stateid = {0, {}};
    a.obj_attributes.attrmask = {
        0, 1u << (x4::FATTR4_OWNER - 32) | 1u << (x4::FATTR4_OWNER_GROUP - 32)};
    const std::string vals = xdr_string("nosuch@nowhere.example") + xdr_string("0");
    a.obj_attributes.attr_vals = s(vals);
    EXPECT_EQ(seq({put_root(), op_lookup(s("owned")), op}).status(), x4::NFS4ERR_BADOWNER);
    a.obj_attributes.attrmask = {0, 0, 1u << (90 - 64)};  // bit 90: no attribute
    a.obj_attributes.attr_vals = {};
    EXPECT_EQ(seq({put_root(), op_lookup(s("owned")), op}).status(), x4::NFS4ERR_ATTRNOTSUPP);
    a.obj_attributes.attrmask = {1u << x4::FATTR4_TYPE};  // read-only
    a.obj_attributes.attr_vals = s(mode_bytes(1));
    EXPECT_EQ(seq({put_root(), op_lookup(s("owned")), op}).status(), x4::NFS4ERR_INVAL);
}

// pynfs OPEN2: OPEN UNCHECKED4 of an existing file does not use its createattrs (§18.16.3),
// but a size of 0 truncates it.
TEST_F(Nfs4Files, OpenUncheckedOfAnExistingFileIgnoresItsAttributes) {
    write_file("there", "0123456789");
    ASSERT_EQ(::chmod(path("there").c_str(), 0644), 0);
    auto open_with = [&](const std::string& owner, uint64_t size) {
        x4::nfs_argop4 op = op_open(s(owner), s("there"), true, x4::OPEN4_SHARE_ACCESS_BOTH);
        auto& ca = op.opopen().openhow.how().createattrs();
        ca.attrmask = {1u << x4::FATTR4_SIZE, 1u << (x4::FATTR4_MODE - 32)};
        std::string v(8, '\0');
        for (int i = 0; i < 8; ++i) v[i] = static_cast<char>(size >> (56 - 8 * i));
        ca.attr_vals = s(v + mode_bytes(0600));
        return seq({put_root(), op});
    };
    Reply r = open_with("o1", 4);
    ASSERT_EQ(r.status(), x4::NFS4_OK);
    EXPECT_TRUE(AttrMask::from_wire(r.op(2).opopen().resok4().attrset).empty());
    struct stat st {};
    ASSERT_EQ(::stat(path("there").c_str(), &st), 0);
    EXPECT_EQ(st.st_size, 10) << "a size other than 0 was applied to an existing file";
    EXPECT_EQ(st.st_mode & 07777, 0644u) << "the mode was applied to an existing file";
    Reply z = open_with("o2", 0);
    ASSERT_EQ(z.status(), x4::NFS4_OK);
    ASSERT_EQ(::stat(path("there").c_str(), &st), 0);
    EXPECT_EQ(st.st_size, 0) << "size 0 truncates";
    EXPECT_EQ(st.st_mode & 07777, 0644u);
    EXPECT_EQ(AttrMask::from_wire(z.op(2).opopen().resok4().attrset), AttrMask{x4::FATTR4_SIZE});
}

// pynfs RDDR8: maxcount 15 is TOOSMALL even for an empty directory; 16 holds its reply.
TEST_F(Nfs4Files, ReaddirMaxcountBelowSixteenIsTooSmall) {
    ASSERT_EQ(::mkdir(path("empty").c_str(), 0755), 0);
    x4::nfs_argop4 rd(x4::OP_READDIR);
    rd.opreaddir().dircount = 8192;
    rd.opreaddir().maxcount = 15;
    EXPECT_EQ(seq({put_root(), op_lookup(s("empty")), rd}).status(), x4::NFS4ERR_TOOSMALL);
    rd.opreaddir().maxcount = 16;
    EXPECT_EQ(seq({put_root(), op_lookup(s("empty")), rd}).status(), x4::NFS4_OK);
}

TEST_F(Nfs4Files, SetattrModeOfASymlinkIsDropped) {
    // knfsd drops a mode change of a symlink (Linux keeps none) and answers OK.
    ASSERT_EQ(::symlink("/etc/X11", path("l").c_str()), 0);
    Reply r = seq({put_root(), op_lookup(s("l")), setattr_mode(s(mode_bytes(0755)))});
    ASSERT_EQ(r.status(), x4::NFS4_OK);
    struct stat st {};
    ASSERT_EQ(::lstat(path("l").c_str(), &st), 0);
    EXPECT_TRUE(S_ISLNK(st.st_mode));
    // A regular file still gets its mode.
    std::ofstream(path("m")) << "x";
    Reply m = seq({put_root(), op_lookup(s("m")), setattr_mode(s(mode_bytes(0600)))});
    ASSERT_EQ(m.status(), x4::NFS4_OK);
    ASSERT_EQ(::stat(path("m").c_str(), &st), 0);
    EXPECT_EQ(st.st_mode & 07777, 0600u);
    // Not the owner: PERM, as chmod.
    ASSERT_EQ(::lchown(path("l").c_str(), 4242, 4242), 0);
    cred.sys.uid = 1234;
    cred.sys.gid = 1234;
    Reply p = seq({put_root(), op_lookup(s("l")), setattr_mode(s(mode_bytes(0755)))});
    EXPECT_EQ(p.status(), x4::NFS4ERR_PERM);
}

}  // namespace
}  // namespace nfsrdmad::nfs::v4::testing
