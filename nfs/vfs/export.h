// export.h — the export table: which directories are served, under which fsid, to whom.
#pragma once

#include <sys/socket.h>
#include <sys/types.h>

#include <array>
#include <atomic>
#include <cstdint>
#include <memory>
#include <span>
#include <string>
#include <string_view>
#include <vector>

#include "nfs/vfs/export_registry.h"
#include "nfs/vfs/handle.h"
#include "nfs/vfs/node.h"
#include "nfs/vfs/result.h"
#include "nfs/vfs/secret.h"
#include "nfs/vfs/unique_fd.h"

namespace nfsrdmad::vfs {

// RPC authentication flavor numbers (RFC 5531 §8.2, RFC 2623 §2.2).
inline constexpr uint32_t kAuthNone = 0;
inline constexpr uint32_t kAuthSys = 1;
inline constexpr uint32_t kAuthKrb5 = 390003;
inline constexpr uint32_t kAuthKrb5i = 390004;
inline constexpr uint32_t kAuthKrb5p = 390005;

struct ClientRule {
    struct Match {
        enum Kind { Any, Cidr, Hostname };
        Kind kind = Any;
        int family = 0;                  // Cidr: AF_INET or AF_INET6
        std::array<uint8_t, 16> addr{};  // Cidr: network; AF_INET uses the first 4 bytes
        int prefix = 0;                  // Cidr: 0..32 (AF_INET) / 0..128 (AF_INET6)
        std::string hostname;            // Hostname: may contain * and ? (fnmatch, no case)
    } match;
    bool read_write = false;
    enum Squash { None, Root, All };
    Squash squash = Root;
    uint32_t anonuid = 65534;
    uint32_t anongid = 65534;
    std::vector<uint32_t> flavors;  // accepted flavors; empty means {kAuthSys}
    bool secure = true;             // only calls from a reserved port (< 1024)
};

// A client match as an administrator writes it: "*", "10.0.0.0/8", "10.1.2.3",
// "*.lab.example" (MOUNT's EXPORT list, `nfsrdmad exports`).
std::string to_string(const ClientRule::Match& m);
// "sys", "krb5p", ... (the words of `sec=`); the number for any other flavor.
std::string flavor_name(uint32_t flavor);

struct ExportSpec {
    std::string path;
    uint32_t fsid = 0;  // 0: derived, from the filesystem's identity or the path
    std::vector<ClientRule> rules;
    // Where its calls are counted (rpc::ExportStats slot, CallReport::export_slot); 0: none.
    uint32_t stats_slot = 0;
};

// A stable fsid for a path: SipHash-2-4 of the path under a fixed key, folded to 32 bits,
// never 0. Stable across restarts and hosts. Used when the filesystem has no identity
// (fs_identity.h).
uint32_t derive_fsid(std::string_view canonical_path);
// The fsid of the export directory `dir` (its kernel handle) on the filesystem named
// `fs_id` (FsIdentity::id): the same wherever that filesystem is mounted, different for
// two directories of one filesystem.
uint32_t derive_fsid(std::string_view fs_id, const KernelHandle& dir);

// One served directory. Holds its root open for the lifetime of the table generation.
class Export : public std::enable_shared_from_this<Export> {
  public:
    const ExportSpec& spec() const { return spec_; }  // spec().fsid is the resolved fsid
    uint32_t fsid() const { return spec_.fsid; }
    // Where the fsid comes from, for the log: "configured", "uuid ...", "the path".
    const std::string& fsid_source() const { return fsid_source_; }
    const std::string& path() const { return canonical_path_; }  // realpath of spec.path
    int root_fd() const { return root_.get(); }                  // O_PATH|O_DIRECTORY
    int mount_fd() const { return mount_.get(); }  // O_RDONLY|O_DIRECTORY, for open_by_handle_at
    dev_t dev() const { return dev_; }
    uint64_t root_ino() const { return root_ino_; }
    const FileHandle& root_handle() const { return root_handle_; }
    const HandleKey& key() const { return key_; }

    bool is_root(const struct statx& st) const;
    // The export is on a local disk or memory file system (ext2-4, XFS, btrfs, f2fs,
    // tmpfs), where a statx of a held descriptor and a read from the page cache wait on
    // nothing remote: calls that must not block (rpc::CallContext::nowait) may use it.
    // Not a network or FUSE file system, whose every call may wait on a peer.
    bool local() const { return local_; }
    FileHandle encode(const KernelHandle& kernel) const {
        return encode_handle(key_, fsid(), kernel);
    }

    // A Node for the export root (MOUNT's reply, RFC 1813 §5.2.1).
    Result<Node> root() const;

  private:
    friend class ExportTable;
    Export() = default;

    ExportSpec spec_;
    std::string fsid_source_;
    std::string canonical_path_;
    UniqueFd root_;
    UniqueFd mount_;
    dev_t dev_ = 0;
    uint64_t root_ino_ = 0;
    bool local_ = false;
    FileHandle root_handle_;
    HandleKey key_{};
};

// A wire handle whose length, version and MAC checked out, and the export its fsid
// names. Nothing has been opened yet: authorize the caller against `exp` first.
struct HandleRef {
    std::shared_ptr<const Export> exp;
    DecodedHandle decoded;
    FileHandle handle;  // the wire bytes
};

// An immutable set of exports. Build a new one to reload; see ExportRegistry.
class ExportTable {
  public:
    // Opens and validates every export. Fails (with *why set) on: a path that cannot be
    // opened as a directory; a filesystem without persistent handles (EOPNOTSUPP) or
    // with handles too large for 64-byte NFS handles (EOVERFLOW); duplicate fsid, path or
    // directory (EEXIST); an invalid client rule (EINVAL).
    static Result<std::shared_ptr<const ExportTable>> create(std::vector<ExportSpec> specs,
                                                             const HandleKey& key,
                                                             std::string* why = nullptr);

    const std::vector<std::shared_ptr<const Export>>& exports() const { return exports_; }
    const HandleKey& key() const { return key_; }

    // nullptr if not found.
    std::shared_ptr<const Export> find_by_fsid(uint32_t fsid) const;
    // For MOUNT (RFC 1813 §5.2.1): matches the configured path or its realpath, after
    // lexical normalisation ("//", trailing "/", "." components). nullptr if not found.
    std::shared_ptr<const Export> find_by_path(std::string_view path) const;

    // Wire handle -> its export, without touching the filesystem:
    //   kBadHandle  wrong length/version/MAC (NFS3ERR_BADHANDLE);
    //   ESTALE      unknown fsid.
    Result<HandleRef> find_by_handle(std::span<const uint8_t> wire) const;

    // The object a checked handle names, as an O_PATH Node; as root (call outside any
    // IdentityScope). ESTALE: object deleted (also when nlink is 0 but some process still
    // holds it open), or not on the export's filesystem. `attrs`, when given, receives
    // the attributes that check read (one statx fewer for a caller that needs them).
    static Result<Node> open(const HandleRef& ref, struct statx* attrs = nullptr);

    // find_by_handle + open.
    // Handles are not subtree-checked (like Linux nfsd's default no_subtree_check): a
    // file renamed out of the export directory, but on the same filesystem, stays
    // reachable through a handle obtained while it was inside.
    Result<Node> resolve(std::span<const uint8_t> wire) const;

  private:
    ExportTable() = default;
    HandleKey key_{};
    std::vector<std::shared_ptr<const Export>> exports_;
};

// Lexical path normalisation used by find_by_path: collapses "//", drops "." and a
// trailing "/". Returns "" for relative paths or paths containing "..".
std::string normalize_path(std::string_view path);

}  // namespace nfsrdmad::vfs
