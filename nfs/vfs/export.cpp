#include "nfs/vfs/export.h"

#include <arpa/inet.h>
#include <fcntl.h>
#include <netinet/in.h>
#include <sys/statfs.h>
#include <sys/sysmacros.h>

#include <algorithm>
#include <cerrno>
#include <climits>
#include <cstdlib>

#include "nfs/vfs/fs_identity.h"
#include "nfs/vfs/sys.h"

namespace nfsrdmad::vfs {
namespace {

// Fixed, public key: derived fsids only need to be stable and well spread, not secret.
constexpr SipKey kFsidKey = {'n', 'f', 's', 'r', 'd', 'm', 'a', 'd',
                             '-', 'f', 's', 'i', 'd', '-', 'v', '1'};

void set_why(std::string* why, std::string text) {
    if (why) *why = std::move(text);
}

bool is_local_file_system(int fd) {
    // statfs(2) f_type magics (linux/magic.h).
    constexpr long kLocal[] = {0xEF53 /* ext2-4 */, 0x58465342 /* XFS */, 0x9123683E /* btrfs */,
                               static_cast<long>(0xF2F52010) /* f2fs */, 0x01021994 /* tmpfs */};
    struct statfs fs {};
    if (::fstatfs(fd, &fs) != 0) return false;
    return std::find(std::begin(kLocal), std::end(kLocal), static_cast<long>(fs.f_type)) !=
           std::end(kLocal);
}

dev_t dev_of(const struct statx& st) {
    return makedev(st.stx_dev_major, st.stx_dev_minor);
}

Result<std::string> canonical_path(const std::string& path) {
    char* resolved = ::realpath(path.c_str(), nullptr);
    if (!resolved) return fail(errno);
    std::string out(resolved);
    std::free(resolved);
    return out;
}

Result<void> validate_rule(const ClientRule& rule) {
    const auto& m = rule.match;
    switch (m.kind) {
        case ClientRule::Match::Any:
            return {};
        case ClientRule::Match::Cidr:
            if (m.family == AF_INET && m.prefix >= 0 && m.prefix <= 32) return {};
            if (m.family == AF_INET6 && m.prefix >= 0 && m.prefix <= 128) return {};
            return fail(EINVAL);
        case ClientRule::Match::Hostname:
            return m.hostname.empty() ? Result<void>(fail(EINVAL)) : Result<void>();
    }
    return fail(EINVAL);
}

}  // namespace

namespace {
uint32_t fold_fsid(std::span<const uint8_t> bytes) {
    const uint64_t h = siphash24(kFsidKey, bytes);
    const uint32_t folded = static_cast<uint32_t>(h) ^ static_cast<uint32_t>(h >> 32);
    return folded == 0 ? 1 : folded;
}
}  // namespace

std::string to_string(const ClientRule::Match& m) {
    switch (m.kind) {
        case ClientRule::Match::Any:
            return "*";
        case ClientRule::Match::Hostname:
            return m.hostname;
        case ClientRule::Match::Cidr: {
            char buf[INET6_ADDRSTRLEN] = "";
            ::inet_ntop(m.family, m.addr.data(), buf, sizeof buf);
            const int full = m.family == AF_INET ? 32 : 128;
            return m.prefix == full ? buf : std::string(buf) + "/" + std::to_string(m.prefix);
        }
    }
    return "?";
}

std::string flavor_name(uint32_t flavor) {
    switch (flavor) {
        case kAuthNone:
            return "none";
        case kAuthSys:
            return "sys";
        case kAuthKrb5:
            return "krb5";
        case kAuthKrb5i:
            return "krb5i";
        case kAuthKrb5p:
            return "krb5p";
    }
    return std::to_string(flavor);
}

uint32_t derive_fsid(std::string_view canonical_path) {
    return fold_fsid(
        {reinterpret_cast<const uint8_t*>(canonical_path.data()), canonical_path.size()});
}

uint32_t derive_fsid(std::string_view fs_id, const KernelHandle& dir) {
    std::vector<uint8_t> b(fs_id.begin(), fs_id.end());
    b.push_back(0);
    b.push_back(dir.type);
    b.insert(b.end(), dir.data().begin(), dir.data().end());
    return fold_fsid(b);
}

std::string normalize_path(std::string_view path) {
    if (path.empty() || path[0] != '/') return {};
    std::string out;
    size_t i = 0;
    while (i < path.size()) {
        while (i < path.size() && path[i] == '/') ++i;
        const size_t end = std::min(path.find('/', i), path.size());
        const std::string_view comp = path.substr(i, end - i);
        i = end;
        if (comp.empty() || comp == ".") continue;
        if (comp == "..") return {};
        out += '/';
        out += comp;
    }
    return out.empty() ? "/" : out;
}

bool Export::is_root(const struct statx& st) const {
    return dev_of(st) == dev_ && st.stx_ino == root_ino_;
}

Result<Node> Export::root() const {
    auto fd = sys::dup_fd(root_.get());
    if (!fd) return fd.failure();
    return Node{shared_from_this(), std::move(*fd), root_handle_};
}

Result<std::shared_ptr<const ExportTable>> ExportTable::create(std::vector<ExportSpec> specs,
                                                               const HandleKey& key,
                                                               std::string* why) {
    std::shared_ptr<ExportTable> table(new ExportTable());
    table->key_ = key;
    for (ExportSpec& spec : specs) {
        const std::string label = "export " + spec.path + ": ";
        auto path = canonical_path(spec.path);
        if (!path) {
            set_why(why, label + describe_error(path.error()));
            return path.failure();
        }
        std::shared_ptr<Export> exp(new Export());
        exp->canonical_path_ = *path;
        exp->key_ = key;

        exp->root_.reset(::open(path->c_str(), O_PATH | O_DIRECTORY | O_CLOEXEC));
        exp->mount_.reset(::open(path->c_str(), O_RDONLY | O_DIRECTORY | O_CLOEXEC));
        if (!exp->root_ || !exp->mount_) {
            const int e = errno;
            set_why(why, label + describe_error(e));
            return fail(e);
        }
        auto root_st = sys::stat_fd(exp->root_.get());
        auto mount_st = sys::stat_fd(exp->mount_.get());
        if (!root_st || !mount_st) return fail(root_st ? mount_st.error() : root_st.error());
        if (root_st->stx_ino != mount_st->stx_ino || dev_of(*root_st) != dev_of(*mount_st)) {
            set_why(why, label + "changed while being opened");
            return fail(EAGAIN);
        }
        exp->dev_ = dev_of(*root_st);
        exp->root_ino_ = root_st->stx_ino;
        exp->local_ = is_local_file_system(exp->root_.get());

        auto kernel = kernel_handle_of(exp->root_.get());
        if (!kernel) {
            set_why(why, label + (kernel.error() == EOVERFLOW
                                      ? "file handles of this filesystem do not fit in 64 bytes"
                                      : "filesystem does not support file handles: " +
                                            describe_error(kernel.error())));
            return kernel.failure();
        }
        // Prove handles can be decoded (needs CAP_DAC_READ_SEARCH and exportfs support).
        if (auto probe = open_kernel_handle(exp->mount_.get(), *kernel, O_PATH); !probe) {
            set_why(why, label + "open_by_handle_at failed: " + describe_error(probe.error()));
            return probe.failure();
        }

        for (const ClientRule& rule : spec.rules) {
            if (auto r = validate_rule(rule); !r) {
                set_why(why, label + "invalid client rule (bad family/prefix or empty hostname)");
                return r.failure();
            }
        }
        if (spec.fsid != 0) {
            exp->fsid_source_ = "configured";
        } else if (auto fs = filesystem_identity(exp->root_.get())) {
            spec.fsid = derive_fsid(fs->id, *kernel);
            exp->fsid_source_ = fs->source;
        } else {
            spec.fsid = derive_fsid(*path);
            exp->fsid_source_ = "the path (the filesystem has no UUID this server can read)";
        }
        exp->spec_ = std::move(spec);
        exp->root_handle_ = exp->encode(*kernel);

        for (const auto& other : table->exports_) {
            const char* dup = other->fsid() == exp->fsid()   ? "duplicate fsid"
                              : other->path() == exp->path() ? "duplicate path"
                              : (other->dev() == exp->dev() && other->root_ino() == exp->root_ino())
                                  ? "same directory exported twice"
                                  : nullptr;
            if (dup) {
                set_why(why, label + dup + " (also " + other->spec().path + ")");
                return fail(EEXIST);
            }
        }
        table->exports_.push_back(std::move(exp));
    }
    return std::shared_ptr<const ExportTable>(std::move(table));
}

std::shared_ptr<const Export> ExportTable::find_by_fsid(uint32_t fsid) const {
    for (const auto& exp : exports_) {
        if (exp->fsid() == fsid) return exp;
    }
    return nullptr;
}

std::shared_ptr<const Export> ExportTable::find_by_path(std::string_view path) const {
    const std::string wanted = normalize_path(path);
    if (wanted.empty()) return nullptr;
    for (const auto& exp : exports_) {
        if (exp->path() == wanted || normalize_path(exp->spec().path) == wanted) return exp;
    }
    return nullptr;
}

Result<HandleRef> ExportTable::find_by_handle(std::span<const uint8_t> wire) const {
    auto decoded = decode_handle(key_, wire);
    if (!decoded) return decoded.failure();
    std::shared_ptr<const Export> exp = find_by_fsid(decoded->fsid);
    if (!exp) return fail(ESTALE);
    auto handle = FileHandle::from(wire);
    if (!handle) return handle.failure();
    return HandleRef{std::move(exp), *decoded, *handle};
}

Result<Node> ExportTable::open(const HandleRef& ref, struct statx* attrs) {
    auto fd = open_kernel_handle(ref.exp->mount_fd(), ref.decoded.kernel, O_PATH);
    if (!fd) return fd.failure();
    auto st = sys::stat_fd(fd->get());
    if (!st) return st.failure();
    if (dev_of(*st) != ref.exp->dev()) return fail(ESTALE);
    if (st->stx_nlink == 0) return fail(ESTALE);  // removed, kept alive only by open fds
    if (attrs) *attrs = *st;
    return Node{ref.exp, std::move(*fd), ref.handle};
}

Result<Node> ExportTable::resolve(std::span<const uint8_t> wire) const {
    auto ref = find_by_handle(wire);
    if (!ref) return ref.failure();
    return open(*ref);
}

}  // namespace nfsrdmad::vfs
