// Synchronous wrappers around libnfs's raw (async) NFSv3 and MOUNT RPC API, for end-to-end
// tests. Each call queues one RPC on an rpc_context and runs the context's event loop
// (poll on rpc_get_fd / rpc_which_events, rpc_service) until the reply arrives, then copies the
// decoded result into plain C++ values.
//
// Every result carries `rpc_error`: empty when a reply was received and decoded, otherwise a
// description (queueing failure, RPC-level rejection reported by libnfs, disconnect, timeout).
// `status` is the NFSv3 nfsstat3 / MOUNT mountstat3 value of the reply.
#pragma once

#include <array>
#include <cstdint>
#include <functional>
#include <memory>
#include <optional>
#include <string>
#include <vector>

#include <gtest/gtest.h>

// libnfs.h must come before the raw headers (they use its EXTERN and rpc_cb).
#include <nfsc/libnfs.h>

#include <nfsc/libnfs-raw.h>

#include <nfsc/libnfs-raw-mount.h>
#include <nfsc/libnfs-raw-nfs.h>

namespace nfsrdmad::e2e {

inline constexpr int kNfsProgram = 100003;
inline constexpr int kMountProgram = 100005;
inline constexpr uint32_t kAuthSys = 1;

// An NFSv3 / MOUNTv3 file handle (opaque, up to 64 bytes).
struct Fh {
    std::vector<char> data;

    bool empty() const { return data.empty(); }
    size_t size() const { return data.size(); }
    bool operator==(const Fh& o) const { return data == o.data; }
    bool operator!=(const Fh& o) const { return !(*this == o); }
    // Non-owning XDR view; valid while this Fh lives and is not modified.
    nfs_fh3 xdr() const;
    std::string hex() const;
    static Fh From(const nfs_fh3& f);
    static Fh From(const char* p, size_t n);
};

using Verf8 = std::array<char, 8>;
std::string HexVerf(const Verf8& v);

// "NFS3ERR_STALE(70)", "MNT3ERR_NOENT(2)".
std::string NfsStatName(int status);
std::string MountStatName(int status);

// Runs one async call to completion. `issue(cb, private)` must queue exactly one RPC (return 0
// on success); `on_reply(data)` runs inside the callback on RPC_STATUS_SUCCESS (data is only
// valid during that call). Returns "" or an error description.
std::string RunRpc(rpc_context* rpc, const std::function<int(rpc_cb, void*)>& issue,
                   const std::function<void(void*)>& on_reply, int timeout_ms = 60000);

// An rpc_context connected (rpc_connect_port_async, no portmapper) to 127.0.0.1:port for
// program/version. uid/gid >= 0 set the AUTH_SYS credentials used on it.
class RpcConn {
  public:
    static std::unique_ptr<RpcConn> Connect(uint16_t port, int program, int version,
                                            std::string* why, int uid = -1, int gid = -1);
    ~RpcConn();
    RpcConn(const RpcConn&) = delete;
    RpcConn& operator=(const RpcConn&) = delete;
    rpc_context* get() const { return rpc_; }

  private:
    explicit RpcConn(rpc_context* r) : rpc_(r) {}
    rpc_context* rpc_;
};

// sattr3 builder.
struct SetAttrs {
    std::optional<uint32_t> mode, uid, gid;
    std::optional<uint64_t> size;
    enum class Time { DontChange, Server, Client };
    Time atime_how = Time::DontChange, mtime_how = Time::DontChange;
    nfstime3 atime{0, 0}, mtime{0, 0};

    static SetAttrs Mode(uint32_t m) {
        SetAttrs s;
        s.mode = m;
        return s;
    }
    sattr3 xdr() const;
};

struct RpcOutcome {
    std::string rpc_error;
    int status = -1;
};

struct GetattrRes : RpcOutcome {
    fattr3 attr{};
};
struct LookupRes : RpcOutcome {
    Fh fh;
    bool has_obj_attr = false;
    fattr3 obj_attr{};
};
struct AccessRes : RpcOutcome {
    uint32_t access = 0;
};
struct ReadlinkRes : RpcOutcome {
    std::string target;
};
struct ReadRes : RpcOutcome {
    uint32_t count = 0;
    bool eof = false;
    std::string data;
    bool has_attr = false;
    fattr3 attr{};
};
struct WriteRes : RpcOutcome {
    uint32_t count = 0;
    int committed = -1;
    Verf8 verf{};
    bool has_after = false;
    fattr3 after{};
};
struct CommitRes : RpcOutcome {
    Verf8 verf{};
};
// CREATE, MKDIR, SYMLINK, MKNOD
struct NewObjRes : RpcOutcome {
    bool has_fh = false;
    Fh fh;
    bool has_attr = false;
    fattr3 attr{};
};
// SETATTR (attr = wcc after), LINK (attr = file attributes), REMOVE, RMDIR, RENAME
struct StatusRes : RpcOutcome {
    bool has_attr = false;
    fattr3 attr{};
};
struct DirEntry {
    uint64_t fileid = 0;
    std::string name;
    uint64_t cookie = 0;
    // READDIRPLUS only:
    bool has_attr = false;
    fattr3 attr{};
    bool has_fh = false;
    Fh fh;
};
struct ReaddirRes : RpcOutcome {
    bool has_dir_attr = false;  // dir_attributes, of a failed call too
    fattr3 dir_attr{};
    Verf8 cookieverf{};
    std::vector<DirEntry> entries;
    bool eof = false;
};
struct FsstatRes : RpcOutcome {
    FSSTAT3resok ok{};
};
struct FsinfoRes : RpcOutcome {
    FSINFO3resok ok{};
};
struct PathconfRes : RpcOutcome {
    PATHCONF3resok ok{};
};

// ---- NFS v3 (the rpc_context must be connected to the NFS program, version 3) ----
std::string Null3(rpc_context* rpc);
GetattrRes Getattr(rpc_context* rpc, const Fh& fh);
StatusRes Setattr(rpc_context* rpc, const Fh& fh, const SetAttrs& a,
                  std::optional<nfstime3> guard_ctime = std::nullopt);
LookupRes Lookup(rpc_context* rpc, const Fh& dir, const std::string& name);
AccessRes Access(rpc_context* rpc, const Fh& fh, uint32_t mask);
ReadlinkRes Readlink(rpc_context* rpc, const Fh& fh);
ReadRes Read(rpc_context* rpc, const Fh& fh, uint64_t offset, uint32_t count);
WriteRes Write(rpc_context* rpc, const Fh& fh, uint64_t offset, const std::string& data,
               stable_how stable);
NewObjRes Create(rpc_context* rpc, const Fh& dir, const std::string& name, createmode3 how,
                 const SetAttrs& a = {}, const Verf8& verf = {});
NewObjRes Mkdir(rpc_context* rpc, const Fh& dir, const std::string& name, const SetAttrs& a = {});
NewObjRes Symlink(rpc_context* rpc, const Fh& dir, const std::string& name,
                  const std::string& target, const SetAttrs& a = {});
NewObjRes Mknod(rpc_context* rpc, const Fh& dir, const std::string& name, ftype3 type,
                const SetAttrs& a = {}, specdata3 spec = {0, 0});
StatusRes Remove(rpc_context* rpc, const Fh& dir, const std::string& name);
StatusRes Rmdir(rpc_context* rpc, const Fh& dir, const std::string& name);
StatusRes Rename(rpc_context* rpc, const Fh& from_dir, const std::string& from_name,
                 const Fh& to_dir, const std::string& to_name);
StatusRes Link(rpc_context* rpc, const Fh& file, const Fh& dir, const std::string& name);
ReaddirRes Readdir(rpc_context* rpc, const Fh& dir, uint64_t cookie, const Verf8& verf,
                   uint32_t count);
ReaddirRes Readdirplus(rpc_context* rpc, const Fh& dir, uint64_t cookie, const Verf8& verf,
                       uint32_t dircount, uint32_t maxcount);
FsstatRes Fsstat(rpc_context* rpc, const Fh& root);
FsinfoRes Fsinfo(rpc_context* rpc, const Fh& root);
PathconfRes Pathconf(rpc_context* rpc, const Fh& fh);
CommitRes Commit(rpc_context* rpc, const Fh& fh, uint64_t offset, uint32_t count);

// Follows "a/b/c" from `dir` with LOOKUPs. Fails (rpc_error or status) at the first bad step.
LookupRes LookupPath(rpc_context* rpc, const Fh& dir, const std::string& path);

// Reads a whole directory with READDIR (count bytes per page) / READDIRPLUS, following cookies
// and cookie verifiers until eof. `pages` (optional) receives the number of round trips.
// Stops with rpc_error set after `max_pages` pages to avoid looping forever.
ReaddirRes ReaddirAll(rpc_context* rpc, const Fh& dir, uint32_t count, size_t* pages = nullptr,
                      size_t max_pages = 100000);
ReaddirRes ReaddirplusAll(rpc_context* rpc, const Fh& dir, uint32_t dircount, uint32_t maxcount,
                          size_t* pages = nullptr, size_t max_pages = 100000);

// ---- MOUNT (the rpc_context must be connected to program 100005, version 3 or 1) ----
struct MntRes : RpcOutcome {
    Fh fh;
    std::vector<int> flavors;
};
struct MountEntry {
    std::string host, dir;
};
struct DumpRes : RpcOutcome {
    std::vector<MountEntry> entries;
};
struct ExportEntry {
    std::string dir;
    std::vector<std::string> groups;
};
struct ExportRes : RpcOutcome {
    std::vector<ExportEntry> exports;
};

std::string MountNull(rpc_context* rpc, int version);
MntRes Mnt3(rpc_context* rpc, const std::string& path);
MntRes Mnt1(rpc_context* rpc, const std::string& path);  // fh is the fixed 32-byte fhandle
DumpRes MountDump(rpc_context* rpc, int version);
std::string MountUmnt(rpc_context* rpc, int version, const std::string& path);
std::string MountUmntall(rpc_context* rpc, int version);
ExportRes MountExport(rpc_context* rpc, int version);

// gtest predicates: success iff a reply arrived and its status equals `expected`.
template <class R>
::testing::AssertionResult NfsIs(const R& r, int expected) {
    if (!r.rpc_error.empty())
        return ::testing::AssertionFailure() << "RPC failed (no NFS reply): " << r.rpc_error;
    if (r.status != expected)
        return ::testing::AssertionFailure()
               << "got " << NfsStatName(r.status) << ", expected " << NfsStatName(expected);
    return ::testing::AssertionSuccess();
}
template <class R>
::testing::AssertionResult NfsIsOneOf(const R& r, std::initializer_list<int> allowed) {
    if (!r.rpc_error.empty())
        return ::testing::AssertionFailure() << "RPC failed (no NFS reply): " << r.rpc_error;
    std::string list;
    for (int a : allowed) {
        if (r.status == a) return ::testing::AssertionSuccess();
        list += (list.empty() ? "" : " or ") + NfsStatName(a);
    }
    return ::testing::AssertionFailure()
           << "got " << NfsStatName(r.status) << ", expected " << list;
}
// A reply arrived and it is an error (any status but NFS3_OK).
template <class R>
::testing::AssertionResult NfsFailed(const R& r) {
    if (!r.rpc_error.empty())
        return ::testing::AssertionFailure() << "RPC failed (no NFS reply): " << r.rpc_error;
    if (r.status == NFS3_OK)
        return ::testing::AssertionFailure() << "got NFS3_OK, expected an error status";
    return ::testing::AssertionSuccess();
}
template <class R>
::testing::AssertionResult MountIs(const R& r, int expected) {
    if (!r.rpc_error.empty())
        return ::testing::AssertionFailure() << "RPC failed (no MOUNT reply): " << r.rpc_error;
    if (r.status != expected)
        return ::testing::AssertionFailure()
               << "got " << MountStatName(r.status) << ", expected " << MountStatName(expected);
    return ::testing::AssertionSuccess();
}

}  // namespace nfsrdmad::e2e
