#include "nfs/vfs/recovery_store.h"

#include <fcntl.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <fstream>
#include <sstream>

#include "nfs/vfs/unique_fd.h"

namespace nfsrdmad::vfs {

namespace {

std::string to_hex(const std::string& s) {
    static const char* digits = "0123456789abcdef";
    std::string out;
    out.reserve(s.size() * 2);
    for (unsigned char c : s) {
        out.push_back(digits[c >> 4]);
        out.push_back(digits[c & 15]);
    }
    return out;
}

bool from_hex(const std::string& h, std::string& out) {
    if (h.size() % 2) return false;
    auto val = [](char c) -> int {
        if (c >= '0' && c <= '9') return c - '0';
        if (c >= 'a' && c <= 'f') return c - 'a' + 10;
        return -1;
    };
    out.clear();
    for (size_t i = 0; i < h.size(); i += 2) {
        int a = val(h[i]), b = val(h[i + 1]);
        if (a < 0 || b < 0) return false;
        out.push_back(static_cast<char>(a << 4 | b));
    }
    return true;
}

Result<void> write_all(int fd, const std::string& s) {
    size_t done = 0;
    while (done < s.size()) {
        ssize_t n = ::write(fd, s.data() + done, s.size() - done);
        if (n < 0 && errno == EINTR) continue;
        if (n < 0) return fail(errno);
        done += static_cast<size_t>(n);
    }
    return {};
}

}  // namespace

RecoveryStore::RecoveryStore(std::string path, uint32_t epoch, std::vector<std::string> previous)
    : path_(std::move(path)), epoch_(epoch), previous_(std::move(previous)) {}

Result<std::unique_ptr<RecoveryStore>> RecoveryStore::open(const std::string& dir,
                                                           uint32_t now_seconds, std::string* why,
                                                           const std::string& file) {
    const std::string path = dir + "/" + file;
    uint32_t last_epoch = 0;
    std::vector<std::string> previous;
    std::ifstream in(path);
    if (in) {
        std::string line;
        size_t n = 0;
        while (std::getline(in, line)) {
            ++n;
            std::istringstream words(line);
            std::string kind, value;
            words >> kind >> value;
            std::string owner;
            if (kind == "epoch" && !value.empty() &&
                value.find_first_not_of("0123456789") == std::string::npos && value.size() <= 10) {
                last_epoch =
                    static_cast<uint32_t>(std::min<uint64_t>(std::stoull(value), UINT32_MAX));
            } else if (kind == "client" && from_hex(value, owner) && !owner.empty()) {
                previous.push_back(std::move(owner));
            } else if (!line.empty()) {
                if (why) *why = path + ":" + std::to_string(n) + ": not 'epoch N' or 'client HEX'";
                return fail(EINVAL);
            }
        }
    } else if (errno != ENOENT) {
        if (why) *why = path + ": cannot be read";
        return fail(errno ? errno : EIO);
    }
    const uint32_t epoch = std::max(now_seconds, last_epoch + 1);
    std::unique_ptr<RecoveryStore> s(new RecoveryStore(path, epoch, std::move(previous)));
    std::lock_guard lock(s->mu_);
    if (auto r = s->write_locked(); !r) {
        if (why) *why = path + ": cannot be written";
        return r.failure();
    }
    return s;
}

Result<void> RecoveryStore::add(const std::string& owner) {
    std::lock_guard lock(mu_);
    if (!current_.insert(owner).second) return {};
    // A previous client coming back is on file already (until grace ends).
    if (!grace_over_ && std::find(previous_.begin(), previous_.end(), owner) != previous_.end())
        return {};
    return write_locked();
}

Result<void> RecoveryStore::remove(const std::string& owner) {
    std::lock_guard lock(mu_);
    if (current_.erase(owner) == 0) return {};
    return write_locked();
}

Result<void> RecoveryStore::end_grace() {
    std::lock_guard lock(mu_);
    if (grace_over_) return {};
    grace_over_ = true;
    if (previous_.empty()) return {};
    return write_locked();
}

size_t RecoveryStore::writes() const {
    std::lock_guard lock(mu_);
    return writes_;
}

// RFC 8881 §8.4.2.1: the record must be on stable storage before the client can rely
// on it, so: the whole file anew, fsync'd, renamed over the old one, directory fsync'd.
Result<void> RecoveryStore::write_locked() {
    std::set<std::string> all = current_;
    if (!grace_over_) all.insert(previous_.begin(), previous_.end());
    std::string text = "epoch " + std::to_string(epoch_) + "\n";
    for (const auto& o : all) text += "client " + to_hex(o) + "\n";

    const std::string& path = path_;
    const std::string tmp = path + ".tmp";
    UniqueFd fd(::open(tmp.c_str(), O_WRONLY | O_CREAT | O_TRUNC | O_NOFOLLOW | O_CLOEXEC, 0600));
    if (!fd) return fail(errno);
    if (auto r = write_all(fd.get(), text); !r) return r;
    if (::fsync(fd.get()) != 0) return fail(errno);
    if (::rename(tmp.c_str(), path.c_str()) != 0) return fail(errno);
    const std::string dir = path.substr(0, path.rfind('/') + 1);
    UniqueFd dirfd(::open(dir.empty() ? "." : dir.c_str(), O_RDONLY | O_DIRECTORY | O_CLOEXEC));
    if (!dirfd || ::fsync(dirfd.get()) != 0) return fail(errno);
    ++writes_;
    return {};
}

}  // namespace nfsrdmad::vfs
