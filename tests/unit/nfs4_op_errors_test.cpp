// The errors of NFSv4.1 operations (RFC 8881 §15.2, §18), walked op by op through
// Nfs4Program with the bytes a client sends: each case is one situation and the status the
// RFC gives it, quoted by section in a comment. Where the RFC names no status, the Linux
// server's answer (and what pynfs's server41tests accept) is the one expected, and the
// comment says so.
#include <gtest/gtest.h>
#include <sys/stat.h>
#include <unistd.h>

#include <fstream>
#include <initializer_list>
#include <string>

#include "nfs/v4/attrs/attr_mask.h"
#include "tests/unit/nfs4_ops_util.h"

namespace nfsrdmad::nfs::v4::testing {
namespace {

class Nfs4Errors : public Nfs4OpsFixture {
  protected:
    void SetUp() override {
        Nfs4OpsFixture::SetUp();
        establish();
        root_fh_ = exp_->root_handle();
        std::ofstream(path("file")) << "data";
        ASSERT_EQ(::mkdir(path("dir").c_str(), 0755), 0);
        std::ofstream(path("dir/child")) << "x";
        ASSERT_EQ(::mkdir(path("empty").c_str(), 0755), 0);
        ASSERT_EQ(::symlink("file", path("link").c_str()), 0);
        ASSERT_EQ(::mkfifo(path("fifo").c_str(), 0644), 0);
    }

    std::span<const uint8_t> s(const std::string& v) { return keep(v); }
    x4::nfs_argop4 root() { return op_putfh(root_fh_.data()); }
    // PUTFH of the export root, then LOOKUP of `name`: the current fh is that object.
    std::vector<x4::nfs_argop4> at(const std::string& name) { return {root(), op_lookup(s(name))}; }
    // SEQUENCE + ops: the COMPOUND's status.
    x4::nfsstat4 st(std::vector<x4::nfs_argop4> ops) { return seq(std::move(ops)).status(); }
    static std::vector<x4::nfs_argop4> cat(std::vector<x4::nfs_argop4> a,
                                           std::initializer_list<x4::nfs_argop4> b) {
        a.insert(a.end(), b.begin(), b.end());
        return a;
    }

    x4::nfs_argop4 remove(const std::string& name) {
        x4::nfs_argop4 op(x4::OP_REMOVE);
        op.opremove().target = s(name);
        return op;
    }
    x4::nfs_argop4 rename(const std::string& from, const std::string& to) {
        x4::nfs_argop4 op(x4::OP_RENAME);
        op.oprename().oldname = s(from);
        op.oprename().newname = s(to);
        return op;
    }
    // SAVEFH at the export root, then RENAME within it.
    x4::nfsstat4 rename_in_root(const std::string& from, const std::string& to) {
        return st({root(), op_savefh(), root(), rename(from, to)});
    }
    x4::nfs_argop4 link(const std::string& name) {
        x4::nfs_argop4 op(x4::OP_LINK);
        op.oplink().newname = s(name);
        return op;
    }
    x4::nfs_argop4 create(x4::nfs_ftype4 type, const std::string& name,
                          const std::string& target = "") {
        x4::nfs_argop4 op(x4::OP_CREATE);
        auto& a = op.opcreate();
        a.objtype.set_type(type);
        if (type == x4::NF4LNK) a.objtype.linkdata() = s(target);
        a.objname = s(name);
        return op;
    }
    x4::nfs_argop4 readlink() { return x4::nfs_argop4(x4::OP_READLINK); }
    x4::nfs_argop4 readdir(uint32_t maxcount = 8192) {
        x4::nfs_argop4 op(x4::OP_READDIR);
        op.opreaddir().maxcount = maxcount;
        op.opreaddir().dircount = maxcount;
        return op;
    }
    x4::nfs_argop4 secinfo(const std::string& name) {
        x4::nfs_argop4 op(x4::OP_SECINFO);
        op.opsecinfo().name = s(name);
        return op;
    }
    x4::nfs_argop4 commit() {
        x4::nfs_argop4 op(x4::OP_COMMIT);
        return op;
    }
    // SETATTR of one attribute whose XDR value is `vals`, with the anonymous stateid.
    x4::nfs_argop4 setattr(uint32_t attr, std::vector<uint8_t> vals) {
        x4::nfs_argop4 op(x4::OP_SETATTR);
        auto& f = op.opsetattr().obj_attributes;
        f.attrmask.assign(attr / 32 + 1, 0);
        f.attrmask[attr / 32] = 1u << (attr % 32);
        f.attr_vals = vals_.emplace_back(std::move(vals));
        return op;
    }
    static std::vector<uint8_t> u32(uint32_t v) {
        return {uint8_t(v >> 24), uint8_t(v >> 16), uint8_t(v >> 8), uint8_t(v)};
    }
    static std::vector<uint8_t> str(const std::string& v) {
        std::vector<uint8_t> out = u32(static_cast<uint32_t>(v.size()));
        out.insert(out.end(), v.begin(), v.end());
        while (out.size() % 4) out.push_back(0);
        return out;
    }
    // An OPEN of "file" for `access` by open owner `owner`; its stateid.
    x4::stateid4 open_file(uint32_t access, const std::string& owner = "o") {
        Reply r = seq({root(), op_open(s(owner), s("file"), false, access)});
        EXPECT_EQ(r.status(), x4::NFS4_OK);
        return r.status() == x4::NFS4_OK ? r.op(2).opopen().resok4().stateid : x4::stateid4{};
    }

    const x4::stateid4 anon_{};  // the anonymous stateid (§8.2.3): all zeros
    vfs::FileHandle root_fh_;
    std::deque<std::vector<uint8_t>> vals_;
};

// §18.13.3, §18.13.4.
TEST_F(Nfs4Errors, Lookup) {
    // "For all other non-directory file types, the error NFS4ERR_NOTDIR is returned."
    EXPECT_EQ(st(cat(at("file"), {op_lookup(s("x"))})), x4::NFS4ERR_NOTDIR);
    // "...a symbolic link, the error NFS4ERR_SYMLINK is returned."
    EXPECT_EQ(st(cat(at("link"), {op_lookup(s("x"))})), x4::NFS4ERR_SYMLINK);
    // "If the component is a zero-length string ... NFS4ERR_INVAL".
    EXPECT_EQ(st({root(), op_lookup(s(""))}), x4::NFS4ERR_INVAL);
    // §15.1.7.3: longer than the server's limit (maxname 255).
    EXPECT_EQ(st({root(), op_lookup(s(std::string(256, 'n')))}), x4::NFS4ERR_NAMETOOLONG);
    // "." and "..", and a '/': the RFC allows BADNAME (§14.5); the Linux server answers it.
    EXPECT_EQ(st({root(), op_lookup(s("."))}), x4::NFS4ERR_BADNAME);
    EXPECT_EQ(st({root(), op_lookup(s(".."))}), x4::NFS4ERR_BADNAME);
    EXPECT_EQ(st({root(), op_lookup(s("dir/child"))}), x4::NFS4ERR_BADNAME);
    EXPECT_EQ(st({root(), op_lookup(s("missing"))}), x4::NFS4ERR_NOENT);
}

// §18.14.3.
TEST_F(Nfs4Errors, Lookupp) {
    // "NFS4ERR_NOENT will be returned ... when the current filehandle is at the root".
    EXPECT_EQ(st({op_putrootfh(), x4::nfs_argop4(x4::OP_LOOKUPP)}), x4::NFS4ERR_NOENT);
    // "If the current filehandle is not a directory ... NFS4ERR_NOTDIR"; a symlink: SYMLINK.
    EXPECT_EQ(st(cat(at("file"), {x4::nfs_argop4(x4::OP_LOOKUPP)})), x4::NFS4ERR_NOTDIR);
    EXPECT_EQ(st(cat(at("link"), {x4::nfs_argop4(x4::OP_LOOKUPP)})), x4::NFS4ERR_SYMLINK);
}

// §18.25.3.
TEST_F(Nfs4Errors, Remove) {
    EXPECT_EQ(st({root(), remove("dir")}), x4::NFS4ERR_NOTEMPTY);  // §15.1.4.10
    EXPECT_EQ(st({root(), remove("missing")}), x4::NFS4ERR_NOENT);
    // "If the target has a length of zero ... NFS4ERR_INVAL".
    EXPECT_EQ(st({root(), remove("")}), x4::NFS4ERR_INVAL);
    EXPECT_EQ(st(cat(at("file"), {remove("x")})), x4::NFS4ERR_NOTDIR);
    EXPECT_EQ(st({root(), remove("empty")}), x4::NFS4_OK);
}

// §18.26.3, §18.26.4.
TEST_F(Nfs4Errors, Rename) {
    EXPECT_EQ(rename_in_root("missing", "x"), x4::NFS4ERR_NOENT);
    // "If the source object and the target are not compatible or if the target is a
    // directory but not empty, the server will return the error NFS4ERR_EXIST."
    EXPECT_EQ(rename_in_root("empty", "dir"), x4::NFS4ERR_EXIST);
    EXPECT_EQ(rename_in_root("empty", "file"), x4::NFS4ERR_EXIST);
    EXPECT_EQ(rename_in_root("file", "empty"), x4::NFS4ERR_EXIST);
    // A directory into itself: "Such servers will return the error NFS4ERR_INVAL".
    EXPECT_EQ(st({root(), op_savefh(), root(), op_lookup(s("dir")), rename("dir", "x")}),
              x4::NFS4ERR_INVAL);
    // "If oldname or newname has a length of zero ... NFS4ERR_INVAL".
    EXPECT_EQ(rename_in_root("", "x"), x4::NFS4ERR_INVAL);
    EXPECT_EQ(rename_in_root("file", ""), x4::NFS4ERR_INVAL);
    // Two names of one file: "RENAME MUST perform no action and return NFS4_OK".
    ASSERT_EQ(::link(path("file").c_str(), path("hard").c_str()), 0);
    EXPECT_EQ(rename_in_root("file", "hard"), x4::NFS4_OK);
    struct stat a {
    }, b{};
    EXPECT_EQ(::stat(path("file").c_str(), &a), 0);
    EXPECT_EQ(::stat(path("hard").c_str(), &b), 0);
    EXPECT_EQ(a.st_ino, b.st_ino);
    // Compatible types: a file over a file, an empty directory over an empty directory.
    std::ofstream(path("other")) << "o";
    EXPECT_EQ(rename_in_root("other", "hard"), x4::NFS4_OK);
    ASSERT_EQ(::mkdir(path("empty2").c_str(), 0755), 0);
    EXPECT_EQ(rename_in_root("empty2", "empty"), x4::NFS4_OK);
}

// §18.9.3, §18.9.4.
TEST_F(Nfs4Errors, Link) {
    // The saved filehandle a directory: ISDIR (the Linux server; §15.2 lists it).
    EXPECT_EQ(st(cat(at("dir"), {op_savefh(), root(), link("l")})), x4::NFS4ERR_ISDIR);
    // "...the server must return NFS4ERR_EXIST."
    EXPECT_EQ(st(cat(at("file"), {op_savefh(), root(), link("dir")})), x4::NFS4ERR_EXIST);
    EXPECT_EQ(st(cat(at("file"), {op_savefh(), root(), op_lookup(s("file")), link("l")})),
              x4::NFS4ERR_NOTDIR);
    EXPECT_EQ(st(cat(at("file"), {op_savefh(), root(), link("")})), x4::NFS4ERR_INVAL);
}

// §18.4.3.
TEST_F(Nfs4Errors, Create) {
    // "...ordinary file ... the error NFS4ERR_BADTYPE results."
    EXPECT_EQ(st({root(), create(x4::NF4REG, "r")}), x4::NFS4ERR_BADTYPE);
    EXPECT_EQ(st({root(), create(x4::NF4DIR, "dir")}), x4::NFS4ERR_EXIST);
    // "...any other type of object, the error NFS4ERR_NOTDIR results".
    EXPECT_EQ(st(cat(at("file"), {create(x4::NF4DIR, "d")})), x4::NFS4ERR_NOTDIR);
    // "If the objname has a length of zero ... NFS4ERR_INVAL".
    EXPECT_EQ(st({root(), create(x4::NF4DIR, "")}), x4::NFS4ERR_INVAL);
    // An empty symlink target: the RFC is silent; INVAL (pynfs CR9a takes INVAL or NOENT).
    EXPECT_EQ(st({root(), create(x4::NF4LNK, "sl", "")}), x4::NFS4ERR_INVAL);
}

// §18.16.3, §18.16.4.
TEST_F(Nfs4Errors, Open) {
    // "If the current filehandle is not a directory, the error NFS4ERR_NOTDIR".
    EXPECT_EQ(st(cat(at("file"), {op_open(s("o"), s("x"), false, 1)})), x4::NFS4ERR_NOTDIR);
    // "...is a symbolic link, the error NFS4ERR_SYMLINK"; another non-regular type
    // "NFS4ERR_WRONG_TYPE".
    EXPECT_EQ(st({root(), op_open(s("o"), s("link"), false, 1)}), x4::NFS4ERR_SYMLINK);
    EXPECT_EQ(st({root(), op_open(s("o"), s("fifo"), false, 1)}), x4::NFS4ERR_WRONG_TYPE);
    // "If the component is of zero length, NFS4ERR_INVAL will be returned."
    EXPECT_EQ(st({root(), op_open(s("o"), s(""), false, 1)}), x4::NFS4ERR_INVAL);
    // CLAIM_FH of a directory.
    x4::nfs_argop4 by_fh = op_open(s("o"), s("unused"), false, 1);
    by_fh.opopen().claim.set_claim(x4::CLAIM_FH);
    EXPECT_EQ(st(cat(at("dir"), {by_fh})), x4::NFS4ERR_ISDIR);
    // A want for no delegation on a server that grants none: OK, OPEN_DELEGATE_NONE_EXT
    // ("...it MUST return a delegation type of OPEN_DELEGATE_NONE_EXT").
    Reply w =
        seq({root(), op_open(s("o"), s("file"), false,
                             x4::OPEN4_SHARE_ACCESS_READ | x4::OPEN4_SHARE_ACCESS_WANT_NO_DELEG)});
    ASSERT_EQ(w.status(), x4::NFS4_OK);
    EXPECT_EQ(w.op(2).opopen().resok4().delegation.delegation_type(), x4::OPEN_DELEGATE_NONE_EXT);
}

// §18.22.3 and §18.32.4: "NF4DIR, NFS4ERR_ISDIR ... symbolic link, NFS4ERR_SYMLINK ... In
// all other cases, NFS4ERR_WRONG_TYPE".
TEST_F(Nfs4Errors, ReadAndWriteOfWhatIsNotAFile) {
    EXPECT_EQ(st(cat(at("dir"), {op_read(anon_, 0, 10)})), x4::NFS4ERR_ISDIR);
    EXPECT_EQ(st(cat(at("link"), {op_read(anon_, 0, 10)})), x4::NFS4ERR_SYMLINK);
    EXPECT_EQ(st(cat(at("fifo"), {op_read(anon_, 0, 10)})), x4::NFS4ERR_WRONG_TYPE);
    EXPECT_EQ(st(cat(at("dir"), {op_write(anon_, 0, s("x"))})), x4::NFS4ERR_ISDIR);
    EXPECT_EQ(st(cat(at("link"), {op_write(anon_, 0, s("x"))})), x4::NFS4ERR_SYMLINK);
    EXPECT_EQ(st(cat(at("fifo"), {op_write(anon_, 0, s("x"))})), x4::NFS4ERR_WRONG_TYPE);
    // §15.1.8.8: writing to a file opened for reading only.
    x4::stateid4 rd = open_file(x4::OPEN4_SHARE_ACCESS_READ);
    EXPECT_EQ(st(cat(at("file"), {op_write(rd, 0, s("x"))})), x4::NFS4ERR_OPENMODE);
}

// §18.24.4: "The server should return the error NFS4ERR_WRONG_TYPE if the object is not of
// type NF4LNK."
TEST_F(Nfs4Errors, Readlink) {
    EXPECT_EQ(st(cat(at("file"), {readlink()})), x4::NFS4ERR_WRONG_TYPE);
    EXPECT_EQ(st(cat(at("dir"), {readlink()})), x4::NFS4ERR_WRONG_TYPE);
    EXPECT_EQ(st(cat(at("link"), {readlink()})), x4::NFS4_OK);
}

// §18.23.3.
TEST_F(Nfs4Errors, Readdir) {
    EXPECT_EQ(st(cat(at("file"), {readdir()})), x4::NFS4ERR_NOTDIR);
    // "...unable to return a single directory entry within the maxcount limit, the error
    // NFS4ERR_TOOSMALL MUST be returned".
    EXPECT_EQ(st({root(), readdir(0)}), x4::NFS4ERR_TOOSMALL);
    // "If dircount is zero, the server bounds the reply's size based on maxcount".
    x4::nfs_argop4 zero = readdir();
    zero.opreaddir().dircount = 0;
    EXPECT_EQ(st({root(), zero}), x4::NFS4_OK);
}

// §5.5, §18.30.4, §15.1.15.2.
TEST_F(Nfs4Errors, Setattr) {
    // "If a client attempts to set a get-only attribute ... NFS4ERR_INVAL."
    EXPECT_EQ(st(cat(at("file"), {setattr(x4::FATTR4_TYPE, u32(x4::NF4REG))})), x4::NFS4ERR_INVAL);
    // An attribute the server does not support: "SHOULD return NFS4ERR_ATTRNOTSUPP".
    EXPECT_EQ(st(cat(at("file"), {setattr(x4::FATTR4_TIME_BACKUP, {})})), x4::NFS4ERR_ATTRNOTSUPP);
    // An owner with no local representation.
    EXPECT_EQ(st(cat(at("file"), {setattr(x4::FATTR4_OWNER, str("no-such-user@localdomain"))})),
              x4::NFS4ERR_BADOWNER);
    // §3.3.1: "Values greater than 999,999,999 for nseconds are invalid" (INVAL, as Linux).
    std::vector<uint8_t> t = u32(x4::SET_TO_CLIENT_TIME4);
    for (uint32_t w : {0u, 1000u, 1000000000u}) {
        auto b = u32(w);
        t.insert(t.end(), b.begin(), b.end());
    }
    EXPECT_EQ(st(cat(at("file"), {setattr(x4::FATTR4_TIME_MODIFY_SET, t)})), x4::NFS4ERR_INVAL);
    // A size on a directory: the RFC is silent; the Linux server answers ISDIR.
    std::vector<uint8_t> size = u32(0);
    auto lo = u32(0);
    size.insert(size.end(), lo.begin(), lo.end());
    EXPECT_EQ(st(cat(at("dir"), {setattr(x4::FATTR4_SIZE, size)})), x4::NFS4ERR_ISDIR);
}

// §18.7.3, §5.5.
TEST_F(Nfs4Errors, Getattr) {
    // An unsupported attribute: "MUST NOT return the attribute value and MUST NOT set the
    // attribute bit" — not an error.
    Reply r = seq(cat(at("file"), {op_getattr({x4::FATTR4_TIME_BACKUP, x4::FATTR4_SIZE})}));
    ASSERT_EQ(r.status(), x4::NFS4_OK);
    EXPECT_EQ(AttrMask::from_wire(r.op(3).opgetattr().resok4().obj_attributes.attrmask),
              AttrMask{x4::FATTR4_SIZE});
    // A write-only attribute: INVAL.
    EXPECT_EQ(st(cat(at("file"), {op_getattr({x4::FATTR4_TIME_ACCESS_SET})})), x4::NFS4ERR_INVAL);
}

// §15.1.2.1, §18.19, §18.27.3.
TEST_F(Nfs4Errors, Filehandles) {
    // A handle that fails "internal consistency checks": BADHANDLE, whatever its length.
    std::vector<uint8_t> garbage(32, 0xab);
    EXPECT_EQ(st({op_putfh(garbage)}), x4::NFS4ERR_BADHANDLE);
    EXPECT_EQ(st({op_putfh({})}), x4::NFS4ERR_BADHANDLE);
    // "If there is no saved filehandle, then the server will return the error
    // NFS4ERR_NOFILEHANDLE."
    EXPECT_EQ(st({root(), op_restorefh()}), x4::NFS4ERR_NOFILEHANDLE);
}

// §18.29.3.
TEST_F(Nfs4Errors, Secinfo) {
    EXPECT_EQ(st(cat(at("file"), {secinfo("x")})), x4::NFS4ERR_NOTDIR);
    EXPECT_EQ(st({root(), secinfo("missing")}), x4::NFS4ERR_NOENT);
    // "On success, the current filehandle is consumed ... the next operation after SECINFO
    // ... will fail with the status NFS4ERR_NOFILEHANDLE."
    EXPECT_EQ(st({root(), secinfo("file"), op_getfh()}), x4::NFS4ERR_NOFILEHANDLE);
}

// §18.3: COMMIT of a directory (ISDIR, in §15.2's list).
TEST_F(Nfs4Errors, Commit) {
    EXPECT_EQ(st(cat(at("dir"), {commit()})), x4::NFS4ERR_ISDIR);
    EXPECT_EQ(st(cat(at("file"), {commit()})), x4::NFS4_OK);
}

// §18.10.3, §8.2.4, §18.18.3.
TEST_F(Nfs4Errors, LocksAndOpenStateids) {
    x4::stateid4 open = open_file(x4::OPEN4_SHARE_ACCESS_BOTH);
    const auto owner = s("lock-owner");
    // "The server MUST return NFS4ERR_INVAL ... Length is equal to zero ... sum of length and
    // offset exceeds NFS4_UINT64_MAX."
    EXPECT_EQ(st(cat(at("file"), {op_lock_new(x4::WRITE_LT, 0, 0, open, clientid_, owner)})),
              x4::NFS4ERR_INVAL);
    EXPECT_EQ(
        st(cat(at("file"), {op_lock_new(x4::WRITE_LT, 10, kToEof - 5, open, clientid_, owner)})),
        x4::NFS4ERR_INVAL);
    // "NF4DIR, NFS4ERR_ISDIR is returned."
    EXPECT_EQ(st(cat(at("dir"), {op_lock_new(x4::WRITE_LT, 0, 1, open, clientid_, owner)})),
              x4::NFS4ERR_ISDIR);
    // A lock stateid passed to CLOSE: "MUST return NFS4ERR_BAD_STATEID".
    Reply l = seq(cat(at("file"), {op_lock_new(x4::WRITE_LT, 0, 1, open, clientid_, owner)}));
    ASSERT_EQ(l.status(), x4::NFS4_OK);
    x4::stateid4 lock = l.op(3).oplock().resok4().lock_stateid;
    EXPECT_EQ(st(cat(at("file"), {op_close(lock)})), x4::NFS4ERR_BAD_STATEID);
    // OPEN_DOWNGRADE to what was not opened: "SHOULD return the error NFS4ERR_INVAL". (Another
    // open owner: the first one's opens of the file are one open, for both.)
    x4::stateid4 rd = open_file(x4::OPEN4_SHARE_ACCESS_READ, "reader");
    x4::nfs_argop4 dg(x4::OP_OPEN_DOWNGRADE);
    dg.opopen_downgrade().open_stateid = rd;
    dg.opopen_downgrade().share_access = x4::OPEN4_SHARE_ACCESS_WRITE;
    EXPECT_EQ(st(cat(at("file"), {dg})), x4::NFS4ERR_INVAL);
}

// §15.1.11, §18.46.3.
TEST_F(Nfs4Errors, Sequence) {
    x4::nfs_argop4 bad_slot = sequence_op(false, 1000);
    EXPECT_EQ(raw({bad_slot}).status(), x4::NFS4ERR_BADSLOT);
    --seqid_;
    x4::nfs_argop4 unknown = sequence_op();
    unknown.opsequence().sa_sessionid[0] ^= 0xff;
    EXPECT_EQ(raw({unknown}).status(), x4::NFS4ERR_BADSESSION);
}

}  // namespace
}  // namespace nfsrdmad::nfs::v4::testing
