// handle.h — the wire file handle: format, MAC, and the kernel handle inside it.
//
// RFC 1813 §2.5 / §2.3.3: nfs_fh3 is opaque, at most NFS3_FHSIZE (64) bytes, and must
// keep identifying the same object across server restarts. We wrap the kernel's
// persistent handle from name_to_handle_at(2) and authenticate it, because
// open_by_handle_at(2) would otherwise open *any* inode of the filesystem, including
// ones outside the export.
//
//   byte 0        1        2               6                        6+N              14+N
//   +--------+--------+--------+--...--+--------+---- ... ----+--------+--...--+--------+
//   |version | ktype  |   fsid (u32, big-endian)  | kernel handle |  MAC (u64, LE)     |
//   |  = 1   | (u8)   |                           | N bytes       |                    |
//   +--------+--------+--------+--...--+--------+---- ... ----+--------+--...--+--------+
//
//   version  kHandleVersion; anything else is a bad handle.
//   ktype    struct file_handle.handle_type (must fit a byte, checked at export setup).
//   fsid     the export's fsid (ExportSpec::fsid); unknown fsid => stale.
//   N        1..50 = total length - 14 (no explicit length byte: nfs_fh3 is counted).
//   MAC      SipHash-2-4 over bytes [0, 6+N), keyed by the server's 128-bit handle key
//            (secret.h). Wrong MAC => bad handle.
//
// Total size 14 + N <= 64, so the kernel part may be at most 50 bytes (ext4: 8,
// xfs: 8-24, btrfs: 8-40). An export whose root handle does not fit is refused.
#pragma once

#include <array>
#include <cstddef>
#include <cstdint>
#include <optional>
#include <span>

#include "nfs/vfs/result.h"
#include "nfs/vfs/secret.h"
#include "nfs/vfs/unique_fd.h"

namespace nfsrdmad::vfs {

inline constexpr size_t kMaxHandleSize = 64;  // NFS3_FHSIZE
inline constexpr uint8_t kHandleVersion = 1;
inline constexpr size_t kHandleHeaderSize = 6;  // version, ktype, fsid
inline constexpr size_t kHandleMacSize = 8;
inline constexpr size_t kHandleOverhead = kHandleHeaderSize + kHandleMacSize;
inline constexpr size_t kMaxKernelHandleBytes = kMaxHandleSize - kHandleOverhead;  // 50

// The kernel's persistent identifier of an inode (struct file_handle payload).
struct KernelHandle {
    uint8_t type = 0;
    uint8_t size = 0;
    std::array<uint8_t, kMaxKernelHandleBytes> bytes{};

    std::span<const uint8_t> data() const { return {bytes.data(), size}; }
    bool operator==(const KernelHandle& o) const;
};

// An encoded wire handle (nfs_fh3 payload).
struct FileHandle {
    uint8_t size = 0;
    std::array<uint8_t, kMaxHandleSize> bytes{};

    std::span<const uint8_t> data() const { return {bytes.data(), size}; }
    bool operator==(const FileHandle& o) const;
    // Copies wire bytes; fails with kBadHandle if longer than 64 bytes.
    static Result<FileHandle> from(std::span<const uint8_t> wire);
};

struct DecodedHandle {
    uint32_t fsid = 0;
    KernelHandle kernel;
};

FileHandle encode_handle(const HandleKey& key, uint32_t fsid, const KernelHandle& kernel);

// Checks length, version and MAC. Fails with kBadHandle; never touches the filesystem.
Result<DecodedHandle> decode_handle(const HandleKey& key, std::span<const uint8_t> wire);

// name_to_handle_at(fd, "", AT_EMPTY_PATH). Fails with EOVERFLOW if the kernel handle is
// larger than kMaxKernelHandleBytes or its type does not fit a byte, EOPNOTSUPP if the
// filesystem cannot export handles.
Result<KernelHandle> kernel_handle_of(int fd);
// The handle of `name` in the directory `dirfd`, a symlink's own (not followed).
Result<KernelHandle> kernel_handle_at(int dirfd, const char* name);

// The inode number a kernel handle names, for the two layouts whose place of it is known
// (Linux include/linux/exportfs.h): FILEID_INO32_GEN, 8 bytes {u32 ino, u32 generation}
// (ext4 and every filesystem on the generic encoder; xfs below 2^32), and xfs's
// FILEID_INO32_GEN | XFS_FILEID_TYPE_64FLAG, 12 bytes {u64 ino, u32 generation}. Any
// other (btrfs, tmpfs, overlayfs...): nullopt. Host byte order, as the kernel wrote it.
std::optional<uint64_t> inode_of(const KernelHandle& kernel);

// open_by_handle_at(mount_fd, handle, flags). Needs CAP_DAC_READ_SEARCH, i.e. call it as
// root, *outside* any IdentityScope. mount_fd must not be an O_PATH descriptor.
// ENOENT/ESTALE (inode deleted or reused) and EINVAL (type unknown to this filesystem)
// are reported as ESTALE.
Result<UniqueFd> open_kernel_handle(int mount_fd, const KernelHandle& handle, int flags);

}  // namespace nfsrdmad::vfs
