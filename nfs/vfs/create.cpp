#include "nfs/vfs/create.h"

#include <fcntl.h>
#include <limits.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cerrno>
#include <string>

#include "nfs/vfs/durability.h"
#include "nfs/vfs/fd_pressure.h"
#include "nfs/vfs/names.h"
#include "nfs/vfs/sys.h"

namespace nfsrdmad::vfs {
namespace {

struct ExclusiveStamp {
    int64_t mtime_sec;
    int64_t atime_sec;
};

// Linux nfsd's encoding; the high bits are cleared because some clients and filesystems
// (32-bit time) mishandle them.
ExclusiveStamp stamp_of(uint64_t verifier) {
    return {static_cast<int64_t>((verifier >> 32) & 0x7fffffff),
            static_cast<int64_t>(verifier & 0x7fffffff)};
}

bool carries_verifier(const struct statx& st, uint64_t verifier) {
    const ExclusiveStamp s = stamp_of(verifier);
    return S_ISREG(st.stx_mode) && st.stx_size == 0 && st.stx_mtime.tv_sec == s.mtime_sec &&
           st.stx_atime.tv_sec == s.atime_sec;
}

Result<void> store_verifier(int fd, uint64_t verifier) {
    const ExclusiveStamp s = stamp_of(verifier);
    const struct timespec times[2] = {{s.atime_sec, 0}, {s.mtime_sec, 0}};
    return check_syscall(::futimens(fd, times));
}

// CREATE found an existing name (Unchecked / Exclusive).
Result<Entry> existing_file(const Node& dir, const char* name, CreateHow how, uint64_t verifier) {
    auto fd = sys::open_child_path(dir.fd.get(), name);
    if (!fd) return fd.failure();
    auto entry = make_entry(dir.exp, std::move(*fd));
    if (!entry) return entry.failure();
    if (!S_ISREG(entry->attr.stx_mode)) return fail(EEXIST);
    if (how == CreateHow::Exclusive && !carries_verifier(entry->attr, verifier))
        return fail(EEXIST);
    return entry;
}

Result<Entry> create_file(const Node& dir, const char* name, uint32_t mode, CreateHow how,
                          uint64_t verifier, bool* created, bool writable) {
    const int access = writable ? O_RDWR | O_NONBLOCK : O_RDONLY;
    auto fd = sys::openat2(dir.fd.get(), name, O_CREAT | O_EXCL | access | O_NOFOLLOW,
                           sys::kResolveBeneath, mode & 07777);
    if (!fd) {
        if (fd.error() != EEXIST || how == CreateHow::Guarded) return fd.failure();
        return existing_file(dir, name, how, verifier);
    }
    if (created) *created = true;
    if (how == CreateHow::Exclusive) {
        if (auto r = store_verifier(fd->get(), verifier); !r) {
            ::unlinkat(dir.fd.get(), name, 0);
            return r.failure();
        }
    }
    return make_entry(dir.exp, std::move(*fd));
}

// After mkdirat/symlinkat/mknodat: pick up what was created. If the name was swapped in
// the meantime and is now of another type, report EEXIST rather than a foreign object.
Result<Entry> created_entry(const Node& dir, const char* name, mode_t expected_type) {
    auto fd = sys::open_child_path(dir.fd.get(), name);
    if (!fd) return fd.failure();
    auto entry = make_entry(dir.exp, std::move(*fd));
    if (!entry) return entry.failure();
    if ((entry->attr.stx_mode & S_IFMT) != expected_type) return fail(EEXIST);
    return entry;
}

Result<void> validate_symlink_target(std::string_view target) {
    if (target.empty() || target.find('\0') != std::string_view::npos) return fail(EINVAL);
    if (target.size() >= PATH_MAX) return fail(ENAMETOOLONG);
    return {};
}

mode_t file_type_of(SpecialType type) {
    switch (type) {
        case SpecialType::Fifo:
            return S_IFIFO;
        case SpecialType::Socket:
            return S_IFSOCK;
        case SpecialType::CharDevice:
            return S_IFCHR;
        case SpecialType::BlockDevice:
            return S_IFBLK;
    }
    return S_IFIFO;
}

// The new entry reaches stable storage before the reply (durability.h). The directory's
// commit descriptor is taken before anything changes: running out of descriptors then
// stops the operation while there is nothing to undo, and the reply is NFS3ERR_JUKEBOX.
template <class Make>
Result<Entry> durable(const Node& dir, Make&& make) {
    auto commit_fd = open_directory_for_commit(dir);
    if (!commit_fd) return commit_fd.failure();
    auto e = make();
    if (!e) return e;
    if (auto r = commit_opened(commit_fd->get()); !r) return r.failure();
    return e;
}

// mkdirat/symlinkat/mknodat done, directory committed: pick up the new object. Its O_PATH
// descriptor is the one thing still to open, and the commit descriptor has just been
// given back for it. Should the process still be out of descriptors (EMFILE/ENFILE, after
// the caches were asked), the object is removed again, so that the client's retry after
// NFS3ERR_JUKEBOX (RFC 1813 §2.6) creates it instead of finding it (NFS3ERR_EXIST). A
// directory is removed only while empty.
Result<Entry> pick_up_created(const Node& dir, const char* name, mode_t type, const Identity& id) {
    auto e = with_identity(id, [&] { return created_entry(dir, name, type); });
    if (!e && is_fd_exhaustion(e.error())) {
        struct statx st {};
        if (::statx(dir.fd.get(), name, AT_SYMLINK_NOFOLLOW, STATX_TYPE, &st) == 0 &&
            (st.stx_mode & S_IFMT) == type)
            ::unlinkat(dir.fd.get(), name, type == S_IFDIR ? AT_REMOVEDIR : 0);
    }
    return e;
}

// mkdirat/symlinkat/mknodat (`make`, under the caller's identity), the directory's
// commit, then the new object.
template <class Make>
Result<Entry> make_special(const Node& dir, const char* name, mode_t type, const Identity& id,
                           DirChange* change, Make&& make) {
    auto commit_fd = open_directory_for_commit(dir);
    if (!commit_fd) return commit_fd.failure();
    if (auto r = change_directory(dir, change, [&] { return with_identity(id, make); }); !r)
        return r.failure();
    if (auto r = commit_opened(commit_fd->get()); !r) return r.failure();
    commit_fd->reset();
    return pick_up_created(dir, name, type, id);
}

}  // namespace

Result<Entry> create(const Node& dir, std::string_view name, uint32_t mode, CreateHow how,
                     uint64_t verifier, const Identity& id, bool* created, DirChange* change,
                     bool writable) {
    if (created) *created = false;
    if (auto r = validate_new_name(name); !r) return r.failure();
    const auto n = sys::name_buf(name);
    // The O_CREAT|O_EXCL openat2 is the creation itself: the kernel takes the descriptor
    // slot before it creates anything, so EMFILE there leaves no file behind, and GUARDED
    // and EXCLUSIVE retries see the same state as the first attempt (RFC 1813 §3.3.8).
    return durable(dir, [&] {
        return change_directory(dir, change, [&] {
            return with_identity(id, [&] {
                return create_file(dir, n.c_str(), mode, how, verifier, created, writable);
            });
        });
    });
}

Result<Entry> mkdir(const Node& dir, std::string_view name, uint32_t mode, const Identity& id,
                    DirChange* change) {
    if (auto r = validate_new_name(name); !r) return r.failure();
    const auto n = sys::name_buf(name);
    return make_special(dir, n.c_str(), S_IFDIR, id, change, [&] {
        return check_syscall(::mkdirat(dir.fd.get(), n.c_str(), mode & 07777));
    });
}

Result<Entry> symlink(const Node& dir, std::string_view name, std::string_view target,
                      uint32_t /*mode*/, const Identity& id, DirChange* change) {
    if (auto r = validate_new_name(name); !r) return r.failure();
    if (auto r = validate_symlink_target(target); !r) return r.failure();
    const auto n = sys::name_buf(name);
    const std::string target_z(target);
    return make_special(dir, n.c_str(), S_IFLNK, id, change, [&] {
        return check_syscall(::symlinkat(target_z.c_str(), dir.fd.get(), n.c_str()));
    });
}

Result<Entry> mknod(const Node& dir, std::string_view name, SpecialType type, uint32_t mode,
                    dev_t rdev, const Identity& id, DirChange* change) {
    if (auto r = validate_new_name(name); !r) return r.failure();
    const auto n = sys::name_buf(name);
    const mode_t ftype = file_type_of(type);
    const bool device = ftype == S_IFCHR || ftype == S_IFBLK;
    return make_special(dir, n.c_str(), ftype, id, change, [&] {
        return check_syscall(
            ::mknodat(dir.fd.get(), n.c_str(), ftype | (mode & 07777), device ? rdev : 0));
    });
}

}  // namespace nfsrdmad::vfs
