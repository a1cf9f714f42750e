#include "nfs/vfs/handle.h"

#include <fcntl.h>

#include <cerrno>
#include <cstring>

#include "nfs/vfs/fd_pressure.h"

namespace nfsrdmad::vfs {
namespace {

// struct file_handle with room for MAX_HANDLE_SZ (128) bytes of payload.
struct alignas(struct file_handle) KernelHandleBuffer {
    unsigned char storage[sizeof(struct file_handle) + 128];
    struct file_handle* get() {
        return reinterpret_cast<struct file_handle*>(storage);
    }
};

uint64_t compute_mac(const HandleKey& key, std::span<const uint8_t> covered) {
    return siphash24(key, covered);
}

bool macs_equal(uint64_t a, const uint8_t* wire) {
    uint8_t diff = 0;  // constant time: do not leak how many bytes matched
    for (size_t i = 0; i < kHandleMacSize; ++i)
        diff |= static_cast<uint8_t>(a >> (8 * i)) ^ wire[i];
    return diff == 0;
}

// The handles whose MAC this thread verified last, one per slot (issue 13: the SipHash was
// the largest single cost of a GETATTR, and clients send the same handles again and
// again: a directory's for each name in it, a file's for each READ and WRITE). A hit is
// the same bytes under the same key, which the MAC check would pass again: the memo
// changes no answer. What a slot is chosen by, and how a hit is compared, do not depend on
// the MAC sent, so that guessing one of a remembered handle takes as long whatever it
// matches (the MAC bytes are compared in constant time, as macs_equal does).
struct Verified {
    HandleKey key;
    uint8_t size = 0;  // 0: empty
    std::array<uint8_t, kMaxHandleSize> bytes;
};
constexpr size_t kVerifiedSlots = 64;
thread_local std::array<Verified, kVerifiedSlots> t_verified{};

// From the last 16 bytes the MAC covers (the kernel handle's end: ext4's and xfs's inode
// and generation), as two words that overlap when there are fewer. A collision costs a
// SipHash, no more.
size_t verified_slot(std::span<const uint8_t> covered) {
    uint64_t a = 0, b = 0;
    const size_t n = covered.size();  // at least 7: the header and one kernel handle byte
    if (n >= 8) {
        std::memcpy(&a, covered.data() + (n >= 16 ? n - 16 : 0), 8);
        std::memcpy(&b, covered.data() + n - 8, 8);
    } else {
        for (size_t i = 0; i < n; ++i) a = a << 8 | covered[i];
    }
    const uint64_t h = (a * 0x9e3779b97f4a7c15ULL) ^ (b * 0xc2b2ae3d27d4eb4fULL) ^ n;
    return static_cast<size_t>(h >> 58);  // 64 slots
}

bool same_key(const HandleKey& a, const HandleKey& b) {
    uint64_t a0, a1, b0, b1;
    std::memcpy(&a0, a.data(), 8);
    std::memcpy(&a1, a.data() + 8, 8);
    std::memcpy(&b0, b.data(), 8);
    std::memcpy(&b1, b.data() + 8, 8);
    return ((a0 ^ b0) | (a1 ^ b1)) == 0;
}

bool mac_verified(const HandleKey& key, std::span<const uint8_t> wire) {
    static_assert(kVerifiedSlots == 64 && kHandleMacSize == sizeof(uint64_t));
    const size_t covered = wire.size() - kHandleMacSize;
    Verified& v = t_verified[verified_slot(wire.first(covered))];
    if (v.size == wire.size() && std::memcmp(v.bytes.data(), wire.data(), covered) == 0 &&
        same_key(v.key, key)) {
        // One 64-bit compare: no early exit to time.
        uint64_t mine, sent;
        std::memcpy(&mine, v.bytes.data() + covered, sizeof mine);
        std::memcpy(&sent, wire.data() + covered, sizeof sent);
        if (mine == sent) return true;
    }
    if (!macs_equal(compute_mac(key, wire.first(covered)), wire.data() + covered)) return false;
    v.key = key;
    v.size = static_cast<uint8_t>(wire.size());
    std::memcpy(v.bytes.data(), wire.data(), wire.size());
    return true;
}

}  // namespace

bool KernelHandle::operator==(const KernelHandle& o) const {
    return type == o.type && size == o.size && std::memcmp(bytes.data(), o.bytes.data(), size) == 0;
}

bool FileHandle::operator==(const FileHandle& o) const {
    return size == o.size && std::memcmp(bytes.data(), o.bytes.data(), size) == 0;
}

Result<FileHandle> FileHandle::from(std::span<const uint8_t> wire) {
    if (wire.size() > kMaxHandleSize) return fail(kBadHandle);
    FileHandle fh;
    fh.size = static_cast<uint8_t>(wire.size());
    std::memcpy(fh.bytes.data(), wire.data(), wire.size());
    return fh;
}

FileHandle encode_handle(const HandleKey& key, uint32_t fsid, const KernelHandle& kernel) {
    FileHandle fh;
    uint8_t* p = fh.bytes.data();
    p[0] = kHandleVersion;
    p[1] = kernel.type;
    p[2] = static_cast<uint8_t>(fsid >> 24);
    p[3] = static_cast<uint8_t>(fsid >> 16);
    p[4] = static_cast<uint8_t>(fsid >> 8);
    p[5] = static_cast<uint8_t>(fsid);
    std::memcpy(p + kHandleHeaderSize, kernel.bytes.data(), kernel.size);
    const size_t covered = kHandleHeaderSize + kernel.size;
    const uint64_t mac = compute_mac(key, {p, covered});
    for (size_t i = 0; i < kHandleMacSize; ++i)
        p[covered + i] = static_cast<uint8_t>(mac >> (8 * i));
    fh.size = static_cast<uint8_t>(covered + kHandleMacSize);
    return fh;
}

Result<DecodedHandle> decode_handle(const HandleKey& key, std::span<const uint8_t> wire) {
    if (wire.size() <= kHandleOverhead || wire.size() > kMaxHandleSize) return fail(kBadHandle);
    if (wire[0] != kHandleVersion) return fail(kBadHandle);
    const size_t covered = wire.size() - kHandleMacSize;
    if (!mac_verified(key, wire)) return fail(kBadHandle);
    DecodedHandle d;
    d.fsid = uint32_t{wire[2]} << 24 | uint32_t{wire[3]} << 16 | uint32_t{wire[4]} << 8 | wire[5];
    d.kernel.type = wire[1];
    d.kernel.size = static_cast<uint8_t>(covered - kHandleHeaderSize);
    std::memcpy(d.kernel.bytes.data(), wire.data() + kHandleHeaderSize, d.kernel.size);
    return d;
}

namespace {

Result<KernelHandle> name_to_handle(int fd, const char* name, int flags) {
    KernelHandleBuffer buf;
    struct file_handle* fh = buf.get();
    fh->handle_bytes = sizeof(buf.storage) - sizeof(struct file_handle);
    int mount_id = 0;
    if (::name_to_handle_at(fd, name, fh, &mount_id, flags) != 0) return fail(errno);
    if (fh->handle_bytes == 0 || fh->handle_bytes > kMaxKernelHandleBytes) return fail(EOVERFLOW);
    if (fh->handle_type < 0 || fh->handle_type > 0xff) return fail(EOVERFLOW);
    KernelHandle kh;
    kh.type = static_cast<uint8_t>(fh->handle_type);
    kh.size = static_cast<uint8_t>(fh->handle_bytes);
    std::memcpy(kh.bytes.data(), fh->f_handle, fh->handle_bytes);
    return kh;
}

}  // namespace

Result<KernelHandle> kernel_handle_of(int fd) {
    return name_to_handle(fd, "", AT_EMPTY_PATH);
}

Result<KernelHandle> kernel_handle_at(int dirfd, const char* name) {
    return name_to_handle(dirfd, name, 0);
}

std::optional<uint64_t> inode_of(const KernelHandle& kernel) {
    constexpr uint8_t kIno32Gen = 1;        // FILEID_INO32_GEN
    constexpr uint8_t kXfsIno64Gen = 0x81;  // FILEID_INO32_GEN | XFS_FILEID_TYPE_64FLAG
    if (kernel.type == kIno32Gen && kernel.size == 8) {
        uint32_t ino;
        std::memcpy(&ino, kernel.bytes.data(), sizeof ino);
        return ino;
    }
    if (kernel.type == kXfsIno64Gen && kernel.size == 12) {
        uint64_t ino;
        std::memcpy(&ino, kernel.bytes.data(), sizeof ino);
        return ino;
    }
    return std::nullopt;
}

Result<UniqueFd> open_kernel_handle(int mount_fd, const KernelHandle& handle, int flags) {
    KernelHandleBuffer buf;
    struct file_handle* fh = buf.get();
    fh->handle_bytes = handle.size;
    fh->handle_type = handle.type;
    std::memcpy(fh->f_handle, handle.bytes.data(), handle.size);
    const int fd = open_reclaiming([&] {
        int r;
        do {
            r = ::open_by_handle_at(mount_fd, fh, flags | O_CLOEXEC);
        } while (r < 0 && errno == EINTR);
        return r;
    });
    if (fd < 0) {
        if (errno == ENOENT || errno == ESTALE || errno == EINVAL) return fail(ESTALE);
        return fail(errno);
    }
    return UniqueFd(fd);
}

}  // namespace nfsrdmad::vfs
