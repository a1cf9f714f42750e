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
    if (!macs_equal(compute_mac(key, wire.first(covered)), wire.data() + covered)) {
        return fail(kBadHandle);
    }
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
