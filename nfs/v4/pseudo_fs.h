// pseudo_fs.h — the NFSv4 pseudo file system (RFC 8881 §7.3, §7.5): the directories
// above the exports, synthesized so that a v4 client mounts the same paths a v3 client
// mounts (server:/srv/data) by walking down from PUTROOTFH.
//
//   exports /srv/data and /srv/backup/x     pseudo tree
//                                           /            (pseudo)
//                                           └── srv      (pseudo)
//                                               ├── data      -> export root, fsid A
//                                               └── backup    (pseudo)
//                                                   └── x     -> export root, fsid B
//
// Pseudo directories are read-only, owned by root, mode 0555; they contain exactly the
// names on the way to an export. An export at "/" makes the root itself that export.
// An export below another export's directory is reached through the real directory
// tree of the outer export; the LOOKUP that arrives at its root switches fsid (a job
// for the LOOKUP operation, which asks ExportTable by (dev, ino)).
//
// A pseudo directory's id is SipHash of its path under a fixed key: the same across
// restarts and reloads as long as the path is still above some export, so its
// filehandle and fileid stay valid (RFC 8881 §4.2.3 persistent handles).
#pragma once

#include <cstdint>
#include <map>
#include <optional>
#include <span>
#include <string>
#include <string_view>
#include <vector>

#include "nfs/vfs/handle.h"
#include "nfs/vfs/secret.h"

namespace nfsrdmad::nfs::v4 {

class PseudoFs {
  public:
    struct ExportPoint {
        std::string path;  // normalized absolute path (vfs::normalize_path)
        uint32_t fsid = 0;
    };
    // What a name in the pseudo tree stands for.
    struct Entry {
        enum Kind { Directory, ExportRoot } kind = Directory;
        uint64_t node = 0;  // Directory: the pseudo directory's id
        uint32_t fsid = 0;  // ExportRoot: the export's fsid
        bool operator==(const Entry&) const = default;
    };

    // Paths that are not absolute and normalized are skipped.
    explicit PseudoFs(const std::vector<ExportPoint>& exports);

    Entry root() const;  // PUTROOTFH
    // LOOKUP in a pseudo directory: nullopt for an unknown node or name (NOENT).
    std::optional<Entry> lookup(uint64_t dir, std::string_view name) const;
    // LOOKUPP: the pseudo directory above `dir`, or above the export root `fsid`.
    // nullopt at the root (NOENT, RFC 8881 §18.14.3), for an unknown one, and for an
    // export nested in another export's tree (its parent is a real directory).
    std::optional<uint64_t> parent(uint64_t dir) const;
    std::optional<uint64_t> parent_of_export(uint32_t fsid) const;
    // READDIR: the names in a pseudo directory, in name order.
    std::vector<std::pair<std::string, Entry>> list(uint64_t dir) const;
    bool has(uint64_t dir) const { return find(dir) != nullptr; }
    std::string path(uint64_t dir) const;  // "" for an unknown node

    static uint64_t id_of(std::string_view path);  // SipHash of the path

  private:
    struct Dir {
        std::string path;
        bool reachable = false;  // not hidden under an export (then the real tree serves)
        uint64_t parent = 0;     // == own id at the root
        std::map<std::string, Entry, std::less<>> children;
    };
    uint64_t ensure_dir(const std::string& path);
    const Dir* find(uint64_t dir) const;
    void mark_reachable(uint64_t dir);

    uint64_t root_id_ = 0;
    std::optional<uint32_t> root_export_;  // an export at "/"
    std::map<uint64_t, Dir> dirs_;
    std::map<uint32_t, uint64_t> export_parent_;
};

// The wire handle of a pseudo directory (RFC 8881 §4.2: opaque, at most NFS4_FHSIZE):
//   byte 0: kPseudoHandleVersion (2; regular handles are version 1, see vfs/handle.h)
//   bytes 1..8: the node id, big-endian; bytes 9..16: SipHash MAC of bytes 0..8 under
//   the server's handle key, little-endian.
// An NFSv3 client can never use one: decode_handle rejects version 2.
inline constexpr uint8_t kPseudoHandleVersion = 2;
inline constexpr size_t kPseudoHandleSize = 17;

vfs::FileHandle encode_pseudo_handle(const vfs::HandleKey& key, uint64_t node);
// nullopt: not a pseudo handle (another version), or a forged or damaged one.
std::optional<uint64_t> decode_pseudo_handle(const vfs::HandleKey& key,
                                             std::span<const uint8_t> wire);
bool is_pseudo_handle(std::span<const uint8_t> wire);

}  // namespace nfsrdmad::nfs::v4
