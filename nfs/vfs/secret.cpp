#include "nfs/vfs/secret.h"

#include <fcntl.h>
#include <sys/random.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cerrno>
#include <cstdio>
#include <cstring>
#include <ctime>

#include "nfs/vfs/unique_fd.h"

namespace nfsrdmad::vfs {
namespace {

void set_why(std::string* why, std::string text) {
    if (why) *why = std::move(text);
}

Result<void> write_all(int fd, const uint8_t* data, size_t len) {
    while (len > 0) {
        ssize_t n = ::write(fd, data, len);
        if (n < 0 && errno == EINTR) continue;
        if (n < 0) return fail(errno);
        data += n;
        len -= static_cast<size_t>(n);
    }
    return {};
}

Result<HandleKey> read_key_file(const std::string& path, std::string* why) {
    UniqueFd fd(::open(path.c_str(), O_RDONLY | O_NOFOLLOW | O_CLOEXEC));
    if (!fd) {
        int e = errno;
        set_why(why, path + ": " + std::strerror(e));
        return fail(e);
    }
    struct stat st {};
    if (::fstat(fd.get(), &st) != 0) return fail(errno);
    if (!S_ISREG(st.st_mode) || st.st_size != static_cast<off_t>(sizeof(HandleKey))) {
        set_why(why, path +
                         ": malformed key file (expected exactly 16 bytes); refusing to "
                         "replace it because that would invalidate every issued handle");
        return fail(EINVAL);
    }
    if ((st.st_mode & 077) != 0) {
        set_why(why, path + ": key file is accessible by group/other (chmod 0600 it)");
        return fail(EPERM);
    }
    if (st.st_uid != ::geteuid()) {
        // Whoever planted it knows the key, and can forge handles to the whole file system.
        set_why(why, path + ": key file is owned by uid " + std::to_string(st.st_uid) +
                         ", not by this daemon's uid " + std::to_string(::geteuid()));
        return fail(EPERM);
    }
    HandleKey key{};
    ssize_t n = ::pread(fd.get(), key.data(), key.size(), 0);
    if (n < 0) return fail(errno);
    if (n != static_cast<ssize_t>(key.size())) {
        set_why(why, path + ": short read");
        return fail(EINVAL);
    }
    return key;
}

// Writes a fresh key to a temporary file, then link(2)s it into place: link fails with
// EEXIST instead of overwriting, so a concurrent creator's key wins and we load it.
Result<void> create_key_file(const std::string& dir, const std::string& path, std::string* why) {
    HandleKey key{};
    if (auto r = random_bytes(key.data(), key.size()); !r) return r;

    std::string tmp = path + ".tmp." + std::to_string(::getpid());
    ::unlink(tmp.c_str());
    UniqueFd fd(::open(tmp.c_str(), O_WRONLY | O_CREAT | O_EXCL | O_NOFOLLOW | O_CLOEXEC, 0600));
    if (!fd) {
        int e = errno;
        set_why(why, tmp + ": " + std::strerror(e));
        return fail(e);
    }
    Result<void> r = write_all(fd.get(), key.data(), key.size());
    if (r && ::fchmod(fd.get(), 0600) != 0) r = fail(errno);  // umask-proof
    if (r && ::fsync(fd.get()) != 0) r = fail(errno);
    if (r && ::link(tmp.c_str(), path.c_str()) != 0 && errno != EEXIST) r = fail(errno);
    ::unlink(tmp.c_str());
    if (!r) {
        set_why(why, path + ": cannot create key: " + describe_error(r.error()));
        return r;
    }
    UniqueFd dirfd(::open(dir.c_str(), O_RDONLY | O_DIRECTORY | O_CLOEXEC));
    if (dirfd) ::fsync(dirfd.get());
    return {};
}

// The directory holding the key must be ours and closed to others: anyone who may write
// in it may replace the key (or the file it is linked from).
Result<void> check_state_dir(const std::string& dir, std::string* why) {
    struct stat st {};
    if (::stat(dir.c_str(), &st) != 0) {
        int e = errno;
        set_why(why, dir + ": " + std::strerror(e));
        return fail(e);
    }
    if (!S_ISDIR(st.st_mode)) {
        set_why(why, dir + ": not a directory");
        return fail(ENOTDIR);
    }
    if (st.st_uid != ::geteuid()) {
        set_why(why, "state directory " + dir + " is owned by uid " + std::to_string(st.st_uid) +
                         ", not by this daemon's uid " + std::to_string(::geteuid()));
        return fail(EPERM);
    }
    if ((st.st_mode & 022) != 0) {
        set_why(why, "state directory " + dir + " is writable by group/other (chmod 0700 it)");
        return fail(EPERM);
    }
    return {};
}

}  // namespace

Result<void> random_bytes(void* buf, size_t len) {
    auto* p = static_cast<uint8_t*>(buf);
    while (len > 0) {
        ssize_t n = ::getrandom(p, len, 0);
        if (n < 0 && errno == EINTR) continue;
        if (n < 0) return fail(errno);
        p += n;
        len -= static_cast<size_t>(n);
    }
    return {};
}

Result<void> make_state_dir(const std::string& dir, std::string* why) {
    // Parents as usual (0755 under the umask), the state directory itself 0700.
    for (size_t slash = dir.find('/', 1); slash != std::string::npos;
         slash = dir.find('/', slash + 1)) {
        const std::string parent = dir.substr(0, slash);
        if (::mkdir(parent.c_str(), 0755) != 0 && errno != EEXIST) {
            int e = errno;
            set_why(why, parent + ": " + std::strerror(e));
            return fail(e);
        }
    }
    if (::mkdir(dir.c_str(), 0700) != 0 && errno != EEXIST) {
        int e = errno;
        set_why(why, dir + ": " + std::strerror(e));
        return fail(e);
    }
    return check_state_dir(dir, why);
}

Result<HandleKey> load_or_create_handle_key(const std::string& state_dir, std::string* why) {
    if (auto r = check_state_dir(state_dir, why); !r) return r.failure();
    const std::string path = state_dir + "/" + kHandleKeyFile;
    if (::access(path.c_str(), F_OK) != 0 && errno == ENOENT) {
        if (auto r = create_key_file(state_dir, path, why); !r) return r.failure();
    }
    return read_key_file(path, why);
}

uint64_t write_verifier() {
    static const uint64_t verifier = [] {
        uint64_t v = 0;
        if (!random_bytes(&v, sizeof v)) {
            // getrandom cannot fail once the pool is initialised; fall back to time+pid.
            v = static_cast<uint64_t>(::time(nullptr)) << 20 ^ static_cast<uint64_t>(::getpid());
        }
        return v;
    }();
    return verifier;
}

}  // namespace nfsrdmad::vfs
