#include "nfs/vfs/state/ofd_mirror.h"

#include <fcntl.h>
#include <sys/stat.h>

#include <cerrno>
#include <cstdint>
#include <limits>

#include "nfs/vfs/sys.h"
#include "nfs/vfs/unique_fd.h"

namespace nfsrdmad::vfs::state {
namespace {

constexpr uint64_t kKernelMax = std::numeric_limits<off_t>::max();  // OFFSET_MAX

// A table range in the kernel's terms: start and length (0 = to EOF); nullopt when it
// lies entirely beyond OFFSET_MAX.
struct KernelRange {
    off_t start;
    off_t len;
};

std::optional<KernelRange> kernel_range(ByteRange r) {
    if (r.first > kKernelMax) return std::nullopt;
    const off_t start = static_cast<off_t>(r.first);
    if (r.last >= kKernelMax) return KernelRange{start, 0};
    return KernelRange{start, static_cast<off_t>(r.last - r.first + 1)};
}

short flock_type(LockType t) {
    return t == LockType::Write ? F_WRLCK : F_RDLCK;
}

struct flock make_flock(short type, KernelRange k) {
    struct flock fl {};
    fl.l_type = type;
    fl.l_whence = SEEK_SET;
    fl.l_start = k.start;
    fl.l_len = k.len;
    fl.l_pid = 0;  // must be 0 for the F_OFD_* commands
    return fl;
}

// F_OFD_SETLK: true = done, false = a conflicting lock is in the way.
Result<bool> set_lock(int fd, short type, KernelRange k) {
    struct flock fl = make_flock(type, k);
    int rc;
    do {
        rc = ::fcntl(fd, F_OFD_SETLK, &fl);
    } while (rc < 0 && errno == EINTR);
    if (rc == 0) return true;
    if (errno == EAGAIN || errno == EACCES) return false;
    return fail(errno);
}

// F_OFD_GETLK: the first lock of another description or process in the way.
Result<std::optional<Conflict>> get_lock(int fd, LockType type, KernelRange k) {
    struct flock fl = make_flock(flock_type(type), k);
    if (::fcntl(fd, F_OFD_GETLK, &fl) != 0) return fail(errno);
    if (fl.l_type == F_UNLCK) return std::optional<Conflict>{};
    const auto first = static_cast<uint64_t>(fl.l_start);
    const uint64_t last = fl.l_len == 0 ? kToEof : first + static_cast<uint64_t>(fl.l_len) - 1;
    const LockType held = fl.l_type == F_WRLCK ? LockType::Write : LockType::Read;
    return std::optional<Conflict>{Conflict{std::nullopt, Lock{{first, last}, held}}};
}

Result<UniqueFd> open_description(int path_fd, bool writable) {
    auto st = sys::stat_fd(path_fd);
    if (!st) return st.failure();
    if (S_ISDIR(st->stx_mode)) return fail(EISDIR);
    if (!S_ISREG(st->stx_mode)) return fail(EINVAL);
    return sys::reopen(path_fd, (writable ? O_RDWR : O_RDONLY) | O_NONBLOCK);
}

struct OfdSlot final : MirrorSlot {
    OfdSlot(UniqueFd f, bool w, std::shared_ptr<OfdBudget> b, ClientKey c)
        : fd(std::move(f)), writable(w), budget(std::move(b)), client(c) {}
    ~OfdSlot() override { budget->release(client); }

    UniqueFd fd;  // closing it drops every OFD lock it holds
    bool writable;
    std::shared_ptr<OfdBudget> budget;
    ClientKey client;
};

// A WRITE lock needs a description open for writing. The owner's READ locks move to a
// new O_RDWR description before the old one is closed, so no local writer can slip in.
Result<void> make_writable(OfdSlot& slot, int path_fd, std::span<const Lock> held) {
    auto fresh = open_description(path_fd, true);
    if (!fresh) return fresh.failure();
    for (const Lock& l : held) {
        auto k = kernel_range(l.range);
        if (!k) continue;
        auto r = set_lock(fresh->get(), flock_type(l.type), *k);
        if (!r) return r.failure();
        if (!*r) return fail(EAGAIN);  // cannot happen: the old description holds them
    }
    slot.fd = std::move(*fresh);
    slot.writable = true;
    return {};
}

}  // namespace

bool OfdBudget::try_acquire(const ClientKey& client) {
    std::lock_guard lock(mu_);
    size_t& mine = per_client_[client];
    if (total_ >= total_max_ || mine >= per_client_max_) {
        if (mine == 0) per_client_.erase(client);
        return false;
    }
    ++mine;
    ++total_;
    return true;
}

void OfdBudget::release(const ClientKey& client) {
    std::lock_guard lock(mu_);
    auto it = per_client_.find(client);
    if (it == per_client_.end()) return;
    if (--it->second == 0) per_client_.erase(it);
    --total_;
}

size_t OfdBudget::in_use() const {
    std::lock_guard lock(mu_);
    return total_;
}

size_t OfdBudget::in_use(const ClientKey& client) const {
    std::lock_guard lock(mu_);
    auto it = per_client_.find(client);
    return it == per_client_.end() ? 0 : it->second;
}

Result<std::optional<Conflict>> OfdMirror::lock(std::unique_ptr<MirrorSlot>& slot,
                                                const StateOwner& owner, std::span<const Lock> held,
                                                const Lock& want) {
    const auto k = kernel_range(want.range);
    if (!k) return std::optional<Conflict>{};  // beyond what the kernel can lock
    const bool write = want.type == LockType::Write;
    if (!slot) {
        if (!budget_->try_acquire(owner.client())) return fail(ENOLCK);
        auto fd = open_description(path_fd_, write);
        if (!fd) {
            budget_->release(owner.client());
            return fd.failure();
        }
        slot = std::make_unique<OfdSlot>(std::move(*fd), write, budget_, owner.client());
    }
    auto& s = static_cast<OfdSlot&>(*slot);
    if (write && !s.writable) {
        if (auto r = make_writable(s, path_fd_, held); !r) return r.failure();
    }
    auto done = set_lock(s.fd.get(), flock_type(want.type), *k);
    if (!done) return done.failure();
    if (*done) return std::optional<Conflict>{};
    // A local holder. Name it if it is still there; either way the request is denied.
    auto holder = get_lock(s.fd.get(), want.type, *k);
    if (holder && *holder) return holder;
    return std::optional<Conflict>{Conflict{std::nullopt, want}};
}

Result<void> OfdMirror::unlock(MirrorSlot& slot, ByteRange range) {
    const auto k = kernel_range(range);
    if (!k) return {};
    auto done = set_lock(static_cast<OfdSlot&>(slot).fd.get(), F_UNLCK, *k);
    if (!done) return done.failure();
    return {};
}

Result<std::optional<Conflict>> OfdMirror::test(const MirrorSlot* slot, const Lock& want) {
    const auto k = kernel_range(want.range);
    if (!k) return std::optional<Conflict>{};
    // The owner's own description, so that its own locks are not reported.
    if (slot) return get_lock(static_cast<const OfdSlot*>(slot)->fd.get(), want.type, *k);
    auto temp = open_description(path_fd_, false);
    if (!temp) return temp.failure();
    return get_lock(temp->get(), want.type, *k);
}

}  // namespace nfsrdmad::vfs::state
