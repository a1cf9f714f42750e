#include "nfs/vfs/state/ofd_mirror.h"

#include <fcntl.h>
#include <sys/stat.h>

#include <algorithm>
#include <cassert>
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
    OfdSlot(UniqueFd f, bool w, std::shared_ptr<OfdBudget> b)
        : fd(std::move(f)), writable(w), budget(std::move(b)) {}
    ~OfdSlot() override {
        // Closing a dup drops nothing while the description it shares stays open.
        (void)set_lock(fd.get(), F_UNLCK, KernelRange{0, 0});
        for (const ClientKey& c : clients) budget->leave(c);
        budget->close();
    }

    Result<void> unlock(ByteRange range) override {
        const auto k = kernel_range(range);
        if (!k) return {};
        auto done = set_lock(fd.get(), F_UNLCK, *k);
        if (!done) return done.failure();
        return {};
    }
    void left(const ClientKey& client) override {
        auto it = std::find(clients.begin(), clients.end(), client);
        if (it == clients.end()) return;
        clients.erase(it);
        budget->leave(client);
    }
    bool has(const ClientKey& client) const {
        return std::find(clients.begin(), clients.end(), client) != clients.end();
    }

    UniqueFd fd;  // holds the union of the table's locks on the file
    bool writable;
    std::shared_ptr<OfdBudget> budget;
    std::vector<ClientKey> clients;  // charged for this file (OfdBudget::try_join)
};

// A WRITE lock needs a description open for writing. The READ locks move to a new O_RDWR
// description before the old one is closed, so no local writer can slip in.
Result<void> make_writable(OfdSlot& slot, UniqueFd fresh, std::span<const Lock> held) {
    for (const Lock& l : held) {
        auto k = kernel_range(l.range);
        if (!k) continue;
        auto r = set_lock(fresh.get(), flock_type(l.type), *k);
        if (!r) return r.failure();
        if (!*r) return fail(EAGAIN);  // cannot happen: the old description holds them
    }
    slot.fd = std::move(fresh);
    slot.writable = true;
    return {};
}

}  // namespace

bool OfdBudget::try_open() {
    std::lock_guard lock(mu_);
    if (total_ >= total_max_) return false;
    ++total_;
    return true;
}

void OfdBudget::close() {
    std::lock_guard lock(mu_);
    assert(total_ > 0);
    --total_;
}

bool OfdBudget::try_join(const ClientKey& client) {
    std::lock_guard lock(mu_);
    size_t& mine = per_client_[client];
    if (mine >= per_client_max_) {
        if (mine == 0) per_client_.erase(client);
        return false;
    }
    ++mine;
    return true;
}

void OfdBudget::leave(const ClientKey& client) {
    std::lock_guard lock(mu_);
    auto it = per_client_.find(client);
    if (it == per_client_.end()) return;
    if (--it->second == 0) per_client_.erase(it);
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

Result<UniqueFd> OfdMirror::description(bool writable) const {
    if (writable_fd_ >= 0) return sys::dup_fd(writable_fd_);  // opening would break its lease
    return open_description(path_fd_, writable);
}

Result<std::optional<Conflict>> OfdMirror::lock(std::unique_ptr<MirrorSlot>& slot,
                                                const StateOwner& owner,
                                                FunctionRef<OwnerLocks()> held, const Lock& want) {
    const auto k = kernel_range(want.range);
    if (!k) return std::optional<Conflict>{};  // beyond what the kernel can lock
    const bool write = want.type == LockType::Write;
    if (!slot) {
        if (!budget_->try_open()) return fail(ENOLCK);
        auto fd = description(write);
        if (!fd) {
            budget_->close();
            return fd.failure();
        }
        slot = std::make_unique<OfdSlot>(std::move(*fd), write || writable_fd_ >= 0, budget_);
    }
    auto& s = static_cast<OfdSlot&>(*slot);
    // The client's share is charged on its first lock on the file, and given back if
    // that lock is not granted (a fresh slot then goes too: lock_table.h).
    const ClientKey client = owner.client();
    const bool joins = !s.has(client);
    if (joins) {
        if (!budget_->try_join(client)) return fail(ENOLCK);
        s.clients.push_back(client);
    }
    auto undo = [&] {
        if (joins) s.left(client);
    };
    if (write && !s.writable) {
        // Never under a lease: the kernel grants none while a read-only slot is open.
        assert(writable_fd_ < 0);
        auto fresh = description(true);
        if (!fresh) {
            undo();
            return fresh.failure();
        }
        if (auto moved = make_writable(s, std::move(*fresh), held()); !moved) {
            undo();
            return moved.failure();
        }
    }
    auto done = set_lock(s.fd.get(), flock_type(want.type), *k);
    if (!done || !*done) undo();
    if (!done) return done.failure();
    if (*done) return std::optional<Conflict>{};
    // A local holder. Name it if it is still there; either way the request is denied.
    auto holder = get_lock(s.fd.get(), want.type, *k);
    if (holder && *holder) return holder;
    return std::optional<Conflict>{Conflict{std::nullopt, want}};
}

Result<std::optional<Conflict>> OfdMirror::test(const MirrorSlot* slot, const Lock& want) {
    const auto k = kernel_range(want.range);
    if (!k) return std::optional<Conflict>{};
    // The file's own description, so that the table's locks are not reported.
    if (slot) return get_lock(static_cast<const OfdSlot*>(slot)->fd.get(), want.type, *k);
    if (writable_fd_ >= 0) return get_lock(writable_fd_, want.type, *k);
    auto temp = open_description(path_fd_, false);
    if (!temp) return temp.failure();
    return get_lock(temp->get(), want.type, *k);
}

}  // namespace nfsrdmad::vfs::state
