#include "nfs/v4/attrs/fattr.h"

#include <sys/sysmacros.h>

#include <cstring>
#include <vector>

#include "nfs/v4/attrs/acl.h"

namespace nfsrdmad::nfs::v4 {

namespace {

constexpr AttrMask kSupported{
    // §5.6 REQUIRED
    x4::FATTR4_SUPPORTED_ATTRS, x4::FATTR4_TYPE, x4::FATTR4_FH_EXPIRE_TYPE, x4::FATTR4_CHANGE,
    x4::FATTR4_SIZE, x4::FATTR4_LINK_SUPPORT, x4::FATTR4_SYMLINK_SUPPORT, x4::FATTR4_NAMED_ATTR,
    x4::FATTR4_FSID, x4::FATTR4_UNIQUE_HANDLES, x4::FATTR4_LEASE_TIME, x4::FATTR4_RDATTR_ERROR,
    x4::FATTR4_FILEHANDLE, x4::FATTR4_SUPPATTR_EXCLCREAT,
    // §5.7 RECOMMENDED
    x4::FATTR4_ACL, x4::FATTR4_ACLSUPPORT, x4::FATTR4_CANSETTIME, x4::FATTR4_CASE_INSENSITIVE,
    x4::FATTR4_CASE_PRESERVING, x4::FATTR4_CHOWN_RESTRICTED, x4::FATTR4_FILEID,
    x4::FATTR4_FILES_AVAIL, x4::FATTR4_FILES_FREE, x4::FATTR4_FILES_TOTAL, x4::FATTR4_HOMOGENEOUS,
    x4::FATTR4_MAXFILESIZE, x4::FATTR4_MAXLINK, x4::FATTR4_MAXNAME, x4::FATTR4_MAXREAD,
    x4::FATTR4_MAXWRITE, x4::FATTR4_MODE, x4::FATTR4_NO_TRUNC, x4::FATTR4_NUMLINKS,
    x4::FATTR4_OWNER, x4::FATTR4_OWNER_GROUP, x4::FATTR4_RAWDEV, x4::FATTR4_SPACE_AVAIL,
    x4::FATTR4_SPACE_FREE, x4::FATTR4_SPACE_TOTAL, x4::FATTR4_SPACE_USED, x4::FATTR4_TIME_ACCESS,
    x4::FATTR4_TIME_ACCESS_SET, x4::FATTR4_TIME_DELTA, x4::FATTR4_TIME_METADATA,
    x4::FATTR4_TIME_MODIFY, x4::FATTR4_TIME_MODIFY_SET, x4::FATTR4_MOUNTED_ON_FILEID};

constexpr AttrMask kWriteOnly{x4::FATTR4_TIME_ACCESS_SET, x4::FATTR4_TIME_MODIFY_SET};

// Settable with EXCLUSIVE4_1 (§5.8.1.14, §18.16.3): not the times, which a server may
// use to keep the verifier (the Linux server does).
constexpr AttrMask kExclCreat{x4::FATTR4_SIZE, x4::FATTR4_MODE, x4::FATTR4_OWNER,
                              x4::FATTR4_OWNER_GROUP};

// The values of a fattr4 are many small words: they are stored through a buffer on the
// stack and appended to the reply a few hundred bytes at a time, one capacity check each,
// instead of one append per word.
class ValueWriter {
  public:
    explicit ValueWriter(xdr::Encoder& e) : e_(e) {}
    ValueWriter(const ValueWriter&) = delete;
    ValueWriter& operator=(const ValueWriter&) = delete;

    [[gnu::always_inline]] void u32(uint32_t v) {
        room(4);
        xdr::store_u32(buf_ + n_, v);
        n_ += 4;
    }
    [[gnu::always_inline]] void u64(uint64_t v) {
        room(8);
        xdr::store_u64(buf_ + n_, v);
        n_ += 8;
    }
    [[gnu::always_inline]] void boolean(bool v) { u32(v ? 1 : 0); }
    // nfstime4: seconds (int64), nseconds (uint32).
    [[gnu::always_inline]] void time(int64_t sec, uint32_t nsec) {
        room(12);
        xdr::store_u64(buf_ + n_, static_cast<uint64_t>(sec));
        xdr::store_u32(buf_ + n_ + 8, nsec);
        n_ += 12;
    }
    // bitmap4: uint32_t<>; trailing zero words left off (§3.3.7 allows any length).
    void mask(const AttrMask& m) {
        const auto w = m.words();
        size_t len = w.size();
        while (len > 0 && w[len - 1] == 0) --len;
        room(4 + 4 * w.size());
        xdr::store_u32(buf_ + n_, static_cast<uint32_t>(len));
        for (size_t i = 0; i < len; ++i) xdr::store_u32(buf_ + n_ + 4 + 4 * i, w[i]);
        n_ += 4 + 4 * len;
    }
    void opaque(std::span<const uint8_t> d) {
        const size_t pad = xdr::pad4(d.size());
        if (d.size() > sizeof buf_ - 4 - pad) {
            flush().put_opaque(d);
            return;
        }
        room(4 + d.size() + pad);
        xdr::store_u32(buf_ + n_, static_cast<uint32_t>(d.size()));
        if (!d.empty()) std::memcpy(buf_ + n_ + 4, d.data(), d.size());
        std::memset(buf_ + n_ + 4 + d.size(), 0, pad);
        n_ += 4 + d.size() + pad;
    }
    void string(std::string_view s) {
        opaque({reinterpret_cast<const uint8_t*>(s.data()), s.size()});
    }
    // Where the next value starts in the encoder's stream.
    size_t offset() const { return e_.size() + n_; }
    // What is buffered goes to the encoder, which is returned for a value written there.
    xdr::Encoder& flush() {
        if (n_) e_.put_fixed(buf_, n_);  // whole words: no padding
        n_ = 0;
        return e_;
    }

  private:
    [[gnu::always_inline]] void room(size_t k) {
        if (sizeof buf_ - n_ < k) flush();
    }
    xdr::Encoder& e_;
    size_t n_ = 0;
    uint8_t buf_[512];
};

void put_time(ValueWriter& w, const struct statx_timestamp& t) {
    w.time(t.tv_sec, t.tv_nsec);
}

// One attribute's value (§5.6, §5.7 give each one's XDR type).
void put_value(uint32_t attr, const ObjectAttrs& o, ValueWriter& w) {
    const struct statx& st = o.st;
    const FsAttrs& fs = *o.fs;
    switch (attr) {
        case x4::FATTR4_SUPPORTED_ATTRS:
            w.mask(kSupported);
            break;
        case x4::FATTR4_TYPE:
            w.u32(file_type(st.stx_mode));
            break;
        case x4::FATTR4_FH_EXPIRE_TYPE:
            w.u32(x4::FH4_PERSISTENT);
            break;
        case x4::FATTR4_CHANGE:
            w.u64(o.change);
            break;
        case x4::FATTR4_SIZE:
            w.u64(st.stx_size);
            break;
        case x4::FATTR4_LINK_SUPPORT:
            w.boolean(true);
            break;
        case x4::FATTR4_SYMLINK_SUPPORT:
            w.boolean(true);
            break;
        case x4::FATTR4_NAMED_ATTR:
            w.boolean(false);
            break;
        case x4::FATTR4_FSID:  // fsid4: major, minor
            w.u64(fs.fsid.major);
            w.u64(fs.fsid.minor);
            break;
        case x4::FATTR4_UNIQUE_HANDLES:
            w.boolean(true);
            break;
        case x4::FATTR4_LEASE_TIME:
            w.u32(fs.lease_time);
            break;
        case x4::FATTR4_RDATTR_ERROR:
            w.u32(x4::NFS4_OK);
            break;
        case x4::FATTR4_FILEHANDLE:
            w.opaque(o.fh);
            break;
        case x4::FATTR4_SUPPATTR_EXCLCREAT:
            w.mask(kExclCreat);
            break;
        case x4::FATTR4_ACL:
            encode_mode_acl(st.stx_mode, w.flush());
            break;
        case x4::FATTR4_ACLSUPPORT:
            w.u32(kAclSupport);
            break;
        case x4::FATTR4_CANSETTIME:
            w.boolean(true);
            break;
        case x4::FATTR4_CASE_INSENSITIVE:
            w.boolean(false);
            break;
        case x4::FATTR4_CASE_PRESERVING:
            w.boolean(true);
            break;
        case x4::FATTR4_CHOWN_RESTRICTED:
            w.boolean(true);
            break;
        case x4::FATTR4_FILEID:
            w.u64(st.stx_ino);
            break;
        case x4::FATTR4_FILES_AVAIL:
            w.u64(fs.files_avail);
            break;
        case x4::FATTR4_FILES_FREE:
            w.u64(fs.files_free);
            break;
        case x4::FATTR4_FILES_TOTAL:
            w.u64(fs.files_total);
            break;
        case x4::FATTR4_HOMOGENEOUS:
            w.boolean(true);
            break;
        case x4::FATTR4_MAXFILESIZE:
            w.u64(fs.maxfilesize);
            break;
        case x4::FATTR4_MAXLINK:
            w.u32(fs.maxlink);
            break;
        case x4::FATTR4_MAXNAME:
            w.u32(fs.maxname);
            break;
        case x4::FATTR4_MAXREAD:
            w.u64(fs.maxread);
            break;
        case x4::FATTR4_MAXWRITE:
            w.u64(fs.maxwrite);
            break;
        case x4::FATTR4_MODE:
            w.u32(st.stx_mode & 07777);
            break;
        case x4::FATTR4_NO_TRUNC:
            w.boolean(true);
            break;
        case x4::FATTR4_NUMLINKS:
            w.u32(st.stx_nlink);
            break;
        case x4::FATTR4_OWNER:
            w.string(o.owner);
            break;
        case x4::FATTR4_OWNER_GROUP:
            w.string(o.owner_group);
            break;
        case x4::FATTR4_RAWDEV:  // specdata4: specdata1, specdata2
            w.u32(st.stx_rdev_major);
            w.u32(st.stx_rdev_minor);
            break;
        case x4::FATTR4_SPACE_AVAIL:
            w.u64(fs.space_avail);
            break;
        case x4::FATTR4_SPACE_FREE:
            w.u64(fs.space_free);
            break;
        case x4::FATTR4_SPACE_TOTAL:
            w.u64(fs.space_total);
            break;
        case x4::FATTR4_SPACE_USED:
            w.u64(st.stx_blocks * 512);
            break;
        case x4::FATTR4_TIME_ACCESS:
            put_time(w, st.stx_atime);
            break;
        case x4::FATTR4_TIME_DELTA:
            w.time(0, 1);
            break;
        case x4::FATTR4_TIME_METADATA:
            put_time(w, st.stx_ctime);
            break;
        case x4::FATTR4_TIME_MODIFY:
            put_time(w, st.stx_mtime);
            break;
        case x4::FATTR4_MOUNTED_ON_FILEID:
            w.u64(o.mounted_on_fileid);
            break;
        default:
            break;  // not in kSupported: never asked for
    }
}

}  // namespace

AttrMask supported_attrs() {
    return kSupported;
}
AttrMask write_only_attrs() {
    return kWriteOnly;
}
AttrMask exclcreat_attrs() {
    return kExclCreat;
}

x4::nfs_ftype4 file_type(uint32_t mode) {
    switch (mode & S_IFMT) {
        case S_IFDIR:
            return x4::NF4DIR;
        case S_IFLNK:
            return x4::NF4LNK;
        case S_IFBLK:
            return x4::NF4BLK;
        case S_IFCHR:
            return x4::NF4CHR;
        case S_IFSOCK:
            return x4::NF4SOCK;
        case S_IFIFO:
            return x4::NF4FIFO;
        default:
            return x4::NF4REG;
    }
}

namespace {

// One value of `attr` (§5.6, §5.7 give each one's XDR type); false when it does not decode.
bool skip_value(uint32_t attr, xdr::Decoder& d) {
    switch (attr) {
        case x4::FATTR4_SUPPORTED_ATTRS:
        case x4::FATTR4_SUPPATTR_EXCLCREAT: {
            const uint32_t n = d.get_u32();
            if (!d.ok() || n > d.remaining() / 4) return false;
            d.get_fixed(size_t{n} * 4);
            break;
        }
        case x4::FATTR4_ACL: {
            const uint32_t n = d.get_u32();
            if (!d.ok() || n > d.remaining() / 16) return false;
            for (uint32_t i = 0; i < n; ++i) {
                x4::nfsace4 ace;
                if (!x4::xdr_decode(d, ace)) return false;
            }
            break;
        }
        case x4::FATTR4_ACLSUPPORT:
        case x4::FATTR4_TYPE:
        case x4::FATTR4_FH_EXPIRE_TYPE:
        case x4::FATTR4_LEASE_TIME:
        case x4::FATTR4_RDATTR_ERROR:
        case x4::FATTR4_MAXLINK:
        case x4::FATTR4_MAXNAME:
        case x4::FATTR4_MODE:
        case x4::FATTR4_NUMLINKS:
            d.get_u32();
            break;
        case x4::FATTR4_LINK_SUPPORT:
        case x4::FATTR4_SYMLINK_SUPPORT:
        case x4::FATTR4_NAMED_ATTR:
        case x4::FATTR4_UNIQUE_HANDLES:
        case x4::FATTR4_CANSETTIME:
        case x4::FATTR4_CASE_INSENSITIVE:
        case x4::FATTR4_CASE_PRESERVING:
        case x4::FATTR4_CHOWN_RESTRICTED:
        case x4::FATTR4_HOMOGENEOUS:
        case x4::FATTR4_NO_TRUNC:
            d.get_bool();
            break;
        case x4::FATTR4_CHANGE:
        case x4::FATTR4_SIZE:
        case x4::FATTR4_FILEID:
        case x4::FATTR4_FILES_AVAIL:
        case x4::FATTR4_FILES_FREE:
        case x4::FATTR4_FILES_TOTAL:
        case x4::FATTR4_MAXFILESIZE:
        case x4::FATTR4_MAXREAD:
        case x4::FATTR4_MAXWRITE:
        case x4::FATTR4_SPACE_AVAIL:
        case x4::FATTR4_SPACE_FREE:
        case x4::FATTR4_SPACE_TOTAL:
        case x4::FATTR4_SPACE_USED:
        case x4::FATTR4_MOUNTED_ON_FILEID:
            d.get_u64();
            break;
        case x4::FATTR4_FSID: {
            x4::fsid4 v;
            return x4::xdr_decode(d, v);
        }
        case x4::FATTR4_RAWDEV: {
            x4::specdata4 v;
            return x4::xdr_decode(d, v);
        }
        case x4::FATTR4_FILEHANDLE:
            d.get_opaque(x4::NFS4_FHSIZE);
            break;
        case x4::FATTR4_OWNER:
        case x4::FATTR4_OWNER_GROUP:
            d.get_opaque(UINT32_MAX);
            break;
        case x4::FATTR4_TIME_ACCESS:
        case x4::FATTR4_TIME_DELTA:
        case x4::FATTR4_TIME_METADATA:
        case x4::FATTR4_TIME_MODIFY: {
            x4::nfstime4 v;
            return x4::xdr_decode(d, v);
        }
        case x4::FATTR4_TIME_ACCESS_SET:
        case x4::FATTR4_TIME_MODIFY_SET: {
            x4::settime4 v;
            return x4::xdr_decode(d, v);
        }
        default:
            return false;  // not supported: the caller's job
    }
    return d.ok();
}

}  // namespace

bool attrlist_well_formed(const AttrMask& m, std::span<const uint8_t> vals) {
    xdr::Decoder d(vals);
    bool ok = true;
    m.for_each([&](uint32_t a) { ok = ok && skip_value(a, d); });
    return ok && d.ok() && d.remaining() == 0;
}

x4::nfsstat4 encode_fattr(const AttrMask& requested, const ObjectAttrs& o, xdr::Encoder& e) {
    if (!(requested & kWriteOnly).empty()) return x4::NFS4ERR_INVAL;
    AttrMask returned = requested & kSupported;
    ValueWriter w(e);
    w.mask(returned);
    // attr_vals is an opaque whose length comes first: encoded in place, its length
    // patched in after (every value is a whole number of XDR words, so no padding).
    const size_t length_at = w.offset();
    w.u32(0);
    returned.for_each([&](uint32_t a) { put_value(a, o, w); });
    w.flush();
    if (!e.counting()) e.patch_u32(length_at, static_cast<uint32_t>(e.size() - length_at - 4));
    return x4::NFS4_OK;
}

}  // namespace nfsrdmad::nfs::v4
