#include "tests/e2e/raw_nfs.h"

#include <poll.h>

#include <cerrno>
#include <chrono>
#include <cstdio>
#include <cstring>
#include <sstream>

namespace nfsrdmad::e2e {

namespace {

struct CallState {
    bool done = false;
    bool abandoned = false;  // the waiter gave up; the state is leaked on purpose
    std::string err;
    std::function<void(void*)> on_reply;
};

void Trampoline(rpc_context* /*rpc*/, int status, void* data, void* priv) {
    auto* st = static_cast<CallState*>(priv);
    if (st->abandoned) return;  // late callback after a timeout: nothing to report to
    st->done = true;
    switch (status) {
        case RPC_STATUS_SUCCESS:
            if (st->on_reply) st->on_reply(data);
            break;
        case RPC_STATUS_ERROR:
            st->err = std::string("RPC_STATUS_ERROR: ") +
                      (data != nullptr ? static_cast<const char*>(data) : "(no text)");
            break;
        case RPC_STATUS_CANCEL:
            st->err = "RPC_STATUS_CANCEL";
            break;
        case RPC_STATUS_TIMEOUT:
            st->err = "RPC_STATUS_TIMEOUT";
            break;
        default:
            st->err = "unknown RPC status " + std::to_string(status);
    }
}

std::string RpcErr(rpc_context* rpc) {
    const char* e = rpc_get_error(rpc);
    return e ? e : "(no error text)";
}

// libnfs's XDR decoder places nested list nodes (entry3, exportnode, ...) at 4-byte aligned
// addresses; reading them in place is undefined behaviour (UBSan aborts the sanitizer build).
// Copy each node into a properly aligned local first.
template <class T>
T Load(const T* p) {
    T v;
    std::memcpy(static_cast<void*>(&v), static_cast<const void*>(p), sizeof v);
    return v;
}

// Owns mutable copies of strings that libnfs's XDR structs want as char*.
struct Strs {
    std::vector<std::unique_ptr<std::string>> keep;
    char* operator()(const std::string& s) {
        keep.push_back(std::make_unique<std::string>(s));
        return keep.back()->data();
    }
};

void CopyPostOp(const post_op_attr& p, bool* has, fattr3* out) {
    *has = p.attributes_follow != 0;
    if (*has) *out = p.post_op_attr_u.attributes;
}

void CopyPostOpFh(const post_op_fh3& p, bool* has, Fh* out) {
    *has = p.handle_follows != 0;
    if (*has) *out = Fh::From(p.post_op_fh3_u.handle);
}

diropargs3 DirOp(const Fh& dir, const std::string& name, Strs& s) {
    diropargs3 d{};
    d.dir = dir.xdr();
    d.name = s(name);
    return d;
}

// Runs an NFS call whose result type is ResT with a `status` member as first field.
template <class Out, class ResT, class Fill>
Out Call(rpc_context* rpc, const std::function<int(rpc_cb, void*)>& issue, Fill fill) {
    Out out;
    out.rpc_error = RunRpc(rpc, issue, [&](void* data) {
        auto* r = static_cast<ResT*>(data);
        out.status = static_cast<int>(r->status);
        fill(*r, out);
    });
    return out;
}

}  // namespace

// ---------------------------------------------------------------------------------------------

nfs_fh3 Fh::xdr() const {
    nfs_fh3 f{};
    f.data.data_len = static_cast<u_int>(data.size());
    f.data.data_val = const_cast<char*>(data.data());
    return f;
}

std::string Fh::hex() const {
    std::string out;
    char b[3];
    for (char c : data) {
        std::snprintf(b, sizeof b, "%02x", static_cast<unsigned char>(c));
        out += b;
    }
    return out;
}

Fh Fh::From(const nfs_fh3& f) {
    return From(f.data.data_val, f.data.data_len);
}

Fh Fh::From(const char* p, size_t n) {
    Fh h;
    if (p != nullptr) h.data.assign(p, p + n);
    return h;
}

std::string HexVerf(const Verf8& v) {
    std::string out;
    char b[3];
    for (char c : v) {
        std::snprintf(b, sizeof b, "%02x", static_cast<unsigned char>(c));
        out += b;
    }
    return out;
}

std::string NfsStatName(int status) {
    if (status < 0) return "(no status)";
    const char* s = nfsstat3_to_str(status);
    return std::string(s ? s : "?") + "(" + std::to_string(status) + ")";
}

std::string MountStatName(int status) {
    if (status < 0) return "(no status)";
    const char* s = mountstat3_to_str(status);
    return std::string(s ? s : "?") + "(" + std::to_string(status) + ")";
}

std::string RunRpc(rpc_context* rpc, const std::function<int(rpc_cb, void*)>& issue,
                   const std::function<void(void*)>& on_reply, int timeout_ms) {
    auto* st = new CallState;
    st->on_reply = on_reply;
    if (issue(Trampoline, st) != 0) {
        std::string e = "failed to queue the RPC: " + RpcErr(rpc);
        delete st;
        return e;
    }
    const auto deadline = std::chrono::steady_clock::now() + std::chrono::milliseconds(timeout_ms);
    std::string err;
    while (!st->done) {
        pollfd p{};
        p.fd = rpc_get_fd(rpc);
        p.events = static_cast<short>(rpc_which_events(rpc));
        int n = ::poll(&p, 1, 100);
        if (n < 0) {
            if (errno == EINTR) continue;
            err = std::string("poll: ") + std::strerror(errno);
            break;
        }
        if (rpc_service(rpc, n > 0 ? p.revents : 0) < 0) {
            if (!st->done) err = "rpc_service failed (connection lost?): " + RpcErr(rpc);
            break;
        }
        if (!st->done && std::chrono::steady_clock::now() > deadline) {
            err = "no reply within " + std::to_string(timeout_ms) + " ms";
            break;
        }
    }
    if (st->done) {
        std::string e = st->err;
        delete st;
        return e;
    }
    st->abandoned = true;  // libnfs still holds the pointer; leak it
    st->on_reply = nullptr;
    return err;
}

std::unique_ptr<RpcConn> RpcConn::Connect(uint16_t port, int program, int version, std::string* why,
                                          int uid, int gid) {
    rpc_context* r = rpc_init_context();
    if (r == nullptr) {
        *why = "rpc_init_context failed";
        return nullptr;
    }
    if (uid >= 0) rpc_set_uid(r, uid);
    if (gid >= 0) rpc_set_gid(r, gid);
    std::string err = RunRpc(
        r,
        [&](rpc_cb cb, void* p) {
            return rpc_connect_port_async(r, "127.0.0.1", port, program, version, cb, p);
        },
        nullptr, 15000);
    if (!err.empty()) {
        *why = "connect to 127.0.0.1:" + std::to_string(port) + " program " +
               std::to_string(program) + " v" + std::to_string(version) + ": " + err;
        rpc_destroy_context(r);
        return nullptr;
    }
    return std::unique_ptr<RpcConn>(new RpcConn(r));
}

RpcConn::~RpcConn() {
    if (rpc_ != nullptr) rpc_destroy_context(rpc_);
}

sattr3 SetAttrs::xdr() const {
    sattr3 s;
    std::memset(&s, 0, sizeof s);
    if (mode) {
        s.mode.set_it = 1;
        s.mode.set_mode3_u.mode = *mode;
    }
    if (uid) {
        s.uid.set_it = 1;
        s.uid.set_uid3_u.uid = *uid;
    }
    if (gid) {
        s.gid.set_it = 1;
        s.gid.set_gid3_u.gid = *gid;
    }
    if (size) {
        s.size.set_it = 1;
        s.size.set_size3_u.size = *size;
    }
    auto how = [](Time t) {
        switch (t) {
            case Time::Server:
                return SET_TO_SERVER_TIME;
            case Time::Client:
                return SET_TO_CLIENT_TIME;
            default:
                return DONT_CHANGE;
        }
    };
    s.atime.set_it = how(atime_how);
    if (atime_how == Time::Client) s.atime.set_atime_u.atime = atime;
    s.mtime.set_it = how(mtime_how);
    if (mtime_how == Time::Client) s.mtime.set_mtime_u.mtime = mtime;
    return s;
}

// ---------------------------------------------------------------------------------------------
// NFS v3

std::string Null3(rpc_context* rpc) {
    return RunRpc(
        rpc, [&](rpc_cb cb, void* p) { return rpc_nfs3_null_async(rpc, cb, p); }, nullptr);
}

GetattrRes Getattr(rpc_context* rpc, const Fh& fh) {
    GETATTR3args a{};
    a.object = fh.xdr();
    return Call<GetattrRes, GETATTR3res>(
        rpc, [&](rpc_cb cb, void* p) { return rpc_nfs3_getattr_async(rpc, cb, &a, p); },
        [](GETATTR3res& r, GetattrRes& o) {
            if (r.status == NFS3_OK) o.attr = r.GETATTR3res_u.resok.obj_attributes;
        });
}

StatusRes Setattr(rpc_context* rpc, const Fh& fh, const SetAttrs& attrs,
                  std::optional<nfstime3> guard_ctime) {
    SETATTR3args a;
    std::memset(&a, 0, sizeof a);
    a.object = fh.xdr();
    a.new_attributes = attrs.xdr();
    if (guard_ctime) {
        a.guard.check = 1;
        a.guard.sattrguard3_u.obj_ctime = *guard_ctime;
    }
    return Call<StatusRes, SETATTR3res>(
        rpc, [&](rpc_cb cb, void* p) { return rpc_nfs3_setattr_async(rpc, cb, &a, p); },
        [](SETATTR3res& r, StatusRes& o) {
            const wcc_data& w = r.status == NFS3_OK ? r.SETATTR3res_u.resok.obj_wcc
                                                    : r.SETATTR3res_u.resfail.obj_wcc;
            CopyPostOp(w.after, &o.has_attr, &o.attr);
        });
}

LookupRes Lookup(rpc_context* rpc, const Fh& dir, const std::string& name) {
    Strs s;
    LOOKUP3args a{};
    a.what = DirOp(dir, name, s);
    return Call<LookupRes, LOOKUP3res>(
        rpc, [&](rpc_cb cb, void* p) { return rpc_nfs3_lookup_async(rpc, cb, &a, p); },
        [](LOOKUP3res& r, LookupRes& o) {
            if (r.status != NFS3_OK) return;
            o.fh = Fh::From(r.LOOKUP3res_u.resok.object);
            CopyPostOp(r.LOOKUP3res_u.resok.obj_attributes, &o.has_obj_attr, &o.obj_attr);
        });
}

AccessRes Access(rpc_context* rpc, const Fh& fh, uint32_t mask) {
    ACCESS3args a{};
    a.object = fh.xdr();
    a.access = mask;
    return Call<AccessRes, ACCESS3res>(
        rpc, [&](rpc_cb cb, void* p) { return rpc_nfs3_access_async(rpc, cb, &a, p); },
        [](ACCESS3res& r, AccessRes& o) {
            if (r.status == NFS3_OK) o.access = r.ACCESS3res_u.resok.access;
        });
}

ReadlinkRes Readlink(rpc_context* rpc, const Fh& fh) {
    READLINK3args a{};
    a.symlink = fh.xdr();
    return Call<ReadlinkRes, READLINK3res>(
        rpc, [&](rpc_cb cb, void* p) { return rpc_nfs3_readlink_async(rpc, cb, &a, p); },
        [](READLINK3res& r, ReadlinkRes& o) {
            if (r.status == NFS3_OK && r.READLINK3res_u.resok.data != nullptr)
                o.target = r.READLINK3res_u.resok.data;
        });
}

ReadRes Read(rpc_context* rpc, const Fh& fh, uint64_t offset, uint32_t count) {
    READ3args a{};
    a.file = fh.xdr();
    a.offset = offset;
    a.count = count;
    return Call<ReadRes, READ3res>(
        rpc, [&](rpc_cb cb, void* p) { return rpc_nfs3_read_async(rpc, cb, &a, p); },
        [](READ3res& r, ReadRes& o) {
            if (r.status != NFS3_OK) {
                CopyPostOp(r.READ3res_u.resfail.file_attributes, &o.has_attr, &o.attr);
                return;
            }
            const READ3resok& ok = r.READ3res_u.resok;
            o.count = ok.count;
            o.eof = ok.eof != 0;
            if (ok.data.data_val != nullptr) o.data.assign(ok.data.data_val, ok.data.data_len);
            CopyPostOp(ok.file_attributes, &o.has_attr, &o.attr);
        });
}

WriteRes Write(rpc_context* rpc, const Fh& fh, uint64_t offset, const std::string& data,
               stable_how stable) {
    std::string buf = data;
    WRITE3args a{};
    a.file = fh.xdr();
    a.offset = offset;
    a.count = static_cast<count3>(buf.size());
    a.stable = stable;
    a.data.data_len = static_cast<u_int>(buf.size());
    a.data.data_val = buf.data();
    return Call<WriteRes, WRITE3res>(
        rpc, [&](rpc_cb cb, void* p) { return rpc_nfs3_write_async(rpc, cb, &a, p); },
        [](WRITE3res& r, WriteRes& o) {
            if (r.status != NFS3_OK) {
                CopyPostOp(r.WRITE3res_u.resfail.file_wcc.after, &o.has_after, &o.after);
                return;
            }
            const WRITE3resok& ok = r.WRITE3res_u.resok;
            o.count = ok.count;
            o.committed = static_cast<int>(ok.committed);
            std::memcpy(o.verf.data(), ok.verf, 8);
            CopyPostOp(ok.file_wcc.after, &o.has_after, &o.after);
        });
}

NewObjRes Create(rpc_context* rpc, const Fh& dir, const std::string& name, createmode3 how,
                 const SetAttrs& attrs, const Verf8& verf) {
    Strs s;
    CREATE3args a;
    std::memset(&a, 0, sizeof a);
    a.where = DirOp(dir, name, s);
    a.how.mode = how;
    switch (how) {
        case UNCHECKED:
            a.how.createhow3_u.obj_attributes = attrs.xdr();
            break;
        case GUARDED:
            a.how.createhow3_u.g_obj_attributes = attrs.xdr();
            break;
        case EXCLUSIVE:
            std::memcpy(a.how.createhow3_u.verf, verf.data(), 8);
            break;
    }
    return Call<NewObjRes, CREATE3res>(
        rpc, [&](rpc_cb cb, void* p) { return rpc_nfs3_create_async(rpc, cb, &a, p); },
        [](CREATE3res& r, NewObjRes& o) {
            if (r.status != NFS3_OK) return;
            CopyPostOpFh(r.CREATE3res_u.resok.obj, &o.has_fh, &o.fh);
            CopyPostOp(r.CREATE3res_u.resok.obj_attributes, &o.has_attr, &o.attr);
        });
}

NewObjRes Mkdir(rpc_context* rpc, const Fh& dir, const std::string& name, const SetAttrs& attrs) {
    Strs s;
    MKDIR3args a;
    std::memset(&a, 0, sizeof a);
    a.where = DirOp(dir, name, s);
    a.attributes = attrs.xdr();
    return Call<NewObjRes, MKDIR3res>(
        rpc, [&](rpc_cb cb, void* p) { return rpc_nfs3_mkdir_async(rpc, cb, &a, p); },
        [](MKDIR3res& r, NewObjRes& o) {
            if (r.status != NFS3_OK) return;
            CopyPostOpFh(r.MKDIR3res_u.resok.obj, &o.has_fh, &o.fh);
            CopyPostOp(r.MKDIR3res_u.resok.obj_attributes, &o.has_attr, &o.attr);
        });
}

NewObjRes Symlink(rpc_context* rpc, const Fh& dir, const std::string& name,
                  const std::string& target, const SetAttrs& attrs) {
    Strs s;
    SYMLINK3args a;
    std::memset(&a, 0, sizeof a);
    a.where = DirOp(dir, name, s);
    a.symlink.symlink_attributes = attrs.xdr();
    a.symlink.symlink_data = s(target);
    return Call<NewObjRes, SYMLINK3res>(
        rpc, [&](rpc_cb cb, void* p) { return rpc_nfs3_symlink_async(rpc, cb, &a, p); },
        [](SYMLINK3res& r, NewObjRes& o) {
            if (r.status != NFS3_OK) return;
            CopyPostOpFh(r.SYMLINK3res_u.resok.obj, &o.has_fh, &o.fh);
            CopyPostOp(r.SYMLINK3res_u.resok.obj_attributes, &o.has_attr, &o.attr);
        });
}

NewObjRes Mknod(rpc_context* rpc, const Fh& dir, const std::string& name, ftype3 type,
                const SetAttrs& attrs, specdata3 spec) {
    Strs s;
    MKNOD3args a;
    std::memset(&a, 0, sizeof a);
    a.where = DirOp(dir, name, s);
    a.what.type = type;
    switch (type) {
        case NF3CHR:
            a.what.mknoddata3_u.chr_device.dev_attributes = attrs.xdr();
            a.what.mknoddata3_u.chr_device.spec = spec;
            break;
        case NF3BLK:
            a.what.mknoddata3_u.blk_device.dev_attributes = attrs.xdr();
            a.what.mknoddata3_u.blk_device.spec = spec;
            break;
        case NF3SOCK:
            a.what.mknoddata3_u.sock_attributes = attrs.xdr();
            break;
        case NF3FIFO:
            a.what.mknoddata3_u.pipe_attributes = attrs.xdr();
            break;
        default:
            break;
    }
    return Call<NewObjRes, MKNOD3res>(
        rpc, [&](rpc_cb cb, void* p) { return rpc_nfs3_mknod_async(rpc, cb, &a, p); },
        [](MKNOD3res& r, NewObjRes& o) {
            if (r.status != NFS3_OK) return;
            CopyPostOpFh(r.MKNOD3res_u.resok.obj, &o.has_fh, &o.fh);
            CopyPostOp(r.MKNOD3res_u.resok.obj_attributes, &o.has_attr, &o.attr);
        });
}

StatusRes Remove(rpc_context* rpc, const Fh& dir, const std::string& name) {
    Strs s;
    REMOVE3args a{};
    a.object = DirOp(dir, name, s);
    return Call<StatusRes, REMOVE3res>(
        rpc, [&](rpc_cb cb, void* p) { return rpc_nfs3_remove_async(rpc, cb, &a, p); },
        [](REMOVE3res&, StatusRes&) {});
}

StatusRes Rmdir(rpc_context* rpc, const Fh& dir, const std::string& name) {
    Strs s;
    RMDIR3args a{};
    a.object = DirOp(dir, name, s);
    return Call<StatusRes, RMDIR3res>(
        rpc, [&](rpc_cb cb, void* p) { return rpc_nfs3_rmdir_async(rpc, cb, &a, p); },
        [](RMDIR3res&, StatusRes&) {});
}

StatusRes Rename(rpc_context* rpc, const Fh& from_dir, const std::string& from_name,
                 const Fh& to_dir, const std::string& to_name) {
    Strs s;
    RENAME3args a{};
    a.from = DirOp(from_dir, from_name, s);
    a.to = DirOp(to_dir, to_name, s);
    return Call<StatusRes, RENAME3res>(
        rpc, [&](rpc_cb cb, void* p) { return rpc_nfs3_rename_async(rpc, cb, &a, p); },
        [](RENAME3res&, StatusRes&) {});
}

StatusRes Link(rpc_context* rpc, const Fh& file, const Fh& dir, const std::string& name) {
    Strs s;
    LINK3args a{};
    a.file = file.xdr();
    a.link = DirOp(dir, name, s);
    return Call<StatusRes, LINK3res>(
        rpc, [&](rpc_cb cb, void* p) { return rpc_nfs3_link_async(rpc, cb, &a, p); },
        [](LINK3res& r, StatusRes& o) {
            const post_op_attr& pa = r.status == NFS3_OK ? r.LINK3res_u.resok.file_attributes
                                                         : r.LINK3res_u.resfail.file_attributes;
            CopyPostOp(pa, &o.has_attr, &o.attr);
        });
}

ReaddirRes Readdir(rpc_context* rpc, const Fh& dir, uint64_t cookie, const Verf8& verf,
                   uint32_t count) {
    READDIR3args a;
    std::memset(&a, 0, sizeof a);
    a.dir = dir.xdr();
    a.cookie = cookie;
    std::memcpy(a.cookieverf, verf.data(), 8);
    a.count = count;
    return Call<ReaddirRes, READDIR3res>(
        rpc, [&](rpc_cb cb, void* p) { return rpc_nfs3_readdir_async(rpc, cb, &a, p); },
        [](READDIR3res& r, ReaddirRes& o) {
            if (r.status != NFS3_OK) {
                CopyPostOp(r.READDIR3res_u.resfail.dir_attributes, &o.has_dir_attr, &o.dir_attr);
                return;
            }
            const READDIR3resok& ok = r.READDIR3res_u.resok;
            CopyPostOp(ok.dir_attributes, &o.has_dir_attr, &o.dir_attr);
            std::memcpy(o.cookieverf.data(), ok.cookieverf, 8);
            for (const entry3* p = ok.reply.entries; p != nullptr;) {
                const entry3 e = Load(p);
                DirEntry d;
                d.fileid = e.fileid;
                d.name = e.name ? e.name : "";
                d.cookie = e.cookie;
                o.entries.push_back(std::move(d));
                p = e.nextentry;
            }
            o.eof = ok.reply.eof != 0;
        });
}

ReaddirRes Readdirplus(rpc_context* rpc, const Fh& dir, uint64_t cookie, const Verf8& verf,
                       uint32_t dircount, uint32_t maxcount) {
    READDIRPLUS3args a;
    std::memset(&a, 0, sizeof a);
    a.dir = dir.xdr();
    a.cookie = cookie;
    std::memcpy(a.cookieverf, verf.data(), 8);
    a.dircount = dircount;
    a.maxcount = maxcount;
    return Call<ReaddirRes, READDIRPLUS3res>(
        rpc, [&](rpc_cb cb, void* p) { return rpc_nfs3_readdirplus_async(rpc, cb, &a, p); },
        [](READDIRPLUS3res& r, ReaddirRes& o) {
            if (r.status != NFS3_OK) {
                CopyPostOp(r.READDIRPLUS3res_u.resfail.dir_attributes, &o.has_dir_attr,
                           &o.dir_attr);
                return;
            }
            const READDIRPLUS3resok& ok = r.READDIRPLUS3res_u.resok;
            CopyPostOp(ok.dir_attributes, &o.has_dir_attr, &o.dir_attr);
            std::memcpy(o.cookieverf.data(), ok.cookieverf, 8);
            for (const entryplus3* p = ok.reply.entries; p != nullptr;) {
                const entryplus3 e = Load(p);
                DirEntry d;
                d.fileid = e.fileid;
                d.name = e.name ? e.name : "";
                d.cookie = e.cookie;
                CopyPostOp(e.name_attributes, &d.has_attr, &d.attr);
                CopyPostOpFh(e.name_handle, &d.has_fh, &d.fh);
                o.entries.push_back(std::move(d));
                p = e.nextentry;
            }
            o.eof = ok.reply.eof != 0;
        });
}

FsstatRes Fsstat(rpc_context* rpc, const Fh& root) {
    FSSTAT3args a{};
    a.fsroot = root.xdr();
    return Call<FsstatRes, FSSTAT3res>(
        rpc, [&](rpc_cb cb, void* p) { return rpc_nfs3_fsstat_async(rpc, cb, &a, p); },
        [](FSSTAT3res& r, FsstatRes& o) {
            if (r.status == NFS3_OK) o.ok = r.FSSTAT3res_u.resok;
        });
}

FsinfoRes Fsinfo(rpc_context* rpc, const Fh& root) {
    FSINFO3args a{};
    a.fsroot = root.xdr();
    return Call<FsinfoRes, FSINFO3res>(
        rpc, [&](rpc_cb cb, void* p) { return rpc_nfs3_fsinfo_async(rpc, cb, &a, p); },
        [](FSINFO3res& r, FsinfoRes& o) {
            if (r.status == NFS3_OK) o.ok = r.FSINFO3res_u.resok;
        });
}

PathconfRes Pathconf(rpc_context* rpc, const Fh& fh) {
    PATHCONF3args a{};
    a.object = fh.xdr();
    return Call<PathconfRes, PATHCONF3res>(
        rpc, [&](rpc_cb cb, void* p) { return rpc_nfs3_pathconf_async(rpc, cb, &a, p); },
        [](PATHCONF3res& r, PathconfRes& o) {
            if (r.status == NFS3_OK) o.ok = r.PATHCONF3res_u.resok;
        });
}

CommitRes Commit(rpc_context* rpc, const Fh& fh, uint64_t offset, uint32_t count) {
    COMMIT3args a{};
    a.file = fh.xdr();
    a.offset = offset;
    a.count = count;
    return Call<CommitRes, COMMIT3res>(
        rpc, [&](rpc_cb cb, void* p) { return rpc_nfs3_commit_async(rpc, cb, &a, p); },
        [](COMMIT3res& r, CommitRes& o) {
            if (r.status == NFS3_OK) std::memcpy(o.verf.data(), r.COMMIT3res_u.resok.verf, 8);
        });
}

LookupRes LookupPath(rpc_context* rpc, const Fh& dir, const std::string& path) {
    LookupRes cur;
    cur.status = NFS3_OK;
    cur.fh = dir;
    std::stringstream ss(path);
    std::string part;
    while (std::getline(ss, part, '/')) {
        if (part.empty()) continue;
        cur = Lookup(rpc, cur.fh, part);
        if (!cur.rpc_error.empty() || cur.status != NFS3_OK) return cur;
    }
    return cur;
}

namespace {

template <class PageFn>
ReaddirRes ReadAllPages(PageFn page, size_t* pages, size_t max_pages) {
    ReaddirRes all;
    uint64_t cookie = 0;
    Verf8 verf{};
    size_t n = 0;
    for (;;) {
        if (n >= max_pages) {
            all.rpc_error =
                "directory listing did not reach eof after " + std::to_string(max_pages) + " pages";
            break;
        }
        ReaddirRes r = page(cookie, verf);
        ++n;
        all.status = r.status;
        if (!r.rpc_error.empty() || r.status != NFS3_OK) {
            all.rpc_error = r.rpc_error;
            break;
        }
        all.cookieverf = r.cookieverf;
        verf = r.cookieverf;
        if (r.entries.empty() && !r.eof) {
            all.rpc_error = "server returned an empty page without eof at cookie " +
                            std::to_string(cookie) + " (client would loop forever)";
            break;
        }
        if (!r.entries.empty()) cookie = r.entries.back().cookie;
        for (auto& e : r.entries) all.entries.push_back(std::move(e));
        if (r.eof) {
            all.eof = true;
            break;
        }
    }
    if (pages) *pages = n;
    return all;
}

}  // namespace

ReaddirRes ReaddirAll(rpc_context* rpc, const Fh& dir, uint32_t count, size_t* pages,
                      size_t max_pages) {
    return ReadAllPages(
        [&](uint64_t cookie, const Verf8& verf) { return Readdir(rpc, dir, cookie, verf, count); },
        pages, max_pages);
}

ReaddirRes ReaddirplusAll(rpc_context* rpc, const Fh& dir, uint32_t dircount, uint32_t maxcount,
                          size_t* pages, size_t max_pages) {
    return ReadAllPages(
        [&](uint64_t cookie, const Verf8& verf) {
            return Readdirplus(rpc, dir, cookie, verf, dircount, maxcount);
        },
        pages, max_pages);
}

// ---------------------------------------------------------------------------------------------
// MOUNT

std::string MountNull(rpc_context* rpc, int version) {
    return RunRpc(
        rpc,
        [&](rpc_cb cb, void* p) {
            return version == 1 ? rpc_mount1_null_async(rpc, cb, p)
                                : rpc_mount3_null_async(rpc, cb, p);
        },
        nullptr);
}

MntRes Mnt3(rpc_context* rpc, const std::string& path) {
    std::string buf = path;
    MntRes out;
    out.rpc_error = RunRpc(
        rpc, [&](rpc_cb cb, void* p) { return rpc_mount3_mnt_async(rpc, cb, buf.data(), p); },
        [&](void* data) {
            auto* r = static_cast<mountres3*>(data);
            out.status = static_cast<int>(r->fhs_status);
            if (r->fhs_status != MNT3_OK) return;
            const mountres3_ok& ok = r->mountres3_u.mountinfo;
            out.fh = Fh::From(ok.fhandle.fhandle3_val, ok.fhandle.fhandle3_len);
            for (u_int i = 0; i < ok.auth_flavors.auth_flavors_len; ++i)
                out.flavors.push_back(ok.auth_flavors.auth_flavors_val[i]);
        });
    return out;
}

MntRes Mnt1(rpc_context* rpc, const std::string& path) {
    std::string buf = path;
    MntRes out;
    out.rpc_error = RunRpc(
        rpc, [&](rpc_cb cb, void* p) { return rpc_mount1_mnt_async(rpc, cb, buf.data(), p); },
        [&](void* data) {
            auto* r = static_cast<mountres1*>(data);
            out.status = static_cast<int>(r->fhs_status);
            if (r->fhs_status != MNT1_OK) return;
            out.fh = Fh::From(r->mountres1_u.mountinfo.fhandle, FHSIZE);
        });
    return out;
}

DumpRes MountDump(rpc_context* rpc, int version) {
    DumpRes out;
    out.rpc_error = RunRpc(
        rpc,
        [&](rpc_cb cb, void* p) {
            return version == 1 ? rpc_mount1_dump_async(rpc, cb, p)
                                : rpc_mount3_dump_async(rpc, cb, p);
        },
        [&](void* data) {
            out.status = 0;
            mountlist ml = data ? Load(static_cast<mountlist*>(data)) : nullptr;
            while (ml != nullptr) {
                const mountbody b = Load(ml);
                out.entries.push_back(
                    {b.ml_hostname ? b.ml_hostname : "", b.ml_directory ? b.ml_directory : ""});
                ml = b.ml_next;
            }
        });
    return out;
}

std::string MountUmnt(rpc_context* rpc, int version, const std::string& path) {
    std::string buf = path;
    return RunRpc(
        rpc,
        [&](rpc_cb cb, void* p) {
            return version == 1 ? rpc_mount1_umnt_async(rpc, cb, buf.data(), p)
                                : rpc_mount3_umnt_async(rpc, cb, buf.data(), p);
        },
        nullptr);
}

std::string MountUmntall(rpc_context* rpc, int version) {
    return RunRpc(
        rpc,
        [&](rpc_cb cb, void* p) {
            return version == 1 ? rpc_mount1_umntall_async(rpc, cb, p)
                                : rpc_mount3_umntall_async(rpc, cb, p);
        },
        nullptr);
}

ExportRes MountExport(rpc_context* rpc, int version) {
    ExportRes out;
    out.rpc_error = RunRpc(
        rpc,
        [&](rpc_cb cb, void* p) {
            return version == 1 ? rpc_mount1_export_async(rpc, cb, p)
                                : rpc_mount3_export_async(rpc, cb, p);
        },
        [&](void* data) {
            out.status = 0;
            exports ex = data ? Load(static_cast<exports*>(data)) : nullptr;
            while (ex != nullptr) {
                const exportnode n = Load(ex);
                ExportEntry e;
                e.dir = n.ex_dir ? n.ex_dir : "";
                for (groups g = n.ex_groups; g != nullptr;) {
                    const groupnode gn = Load(g);
                    e.groups.push_back(gn.gr_name ? gn.gr_name : "");
                    g = gn.gr_next;
                }
                out.exports.push_back(std::move(e));
                ex = n.ex_next;
            }
        });
    return out;
}

}  // namespace nfsrdmad::e2e
