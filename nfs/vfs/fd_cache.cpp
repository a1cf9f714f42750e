#include "nfs/vfs/fd_cache.h"

#include <fcntl.h>
#include <sys/sysmacros.h>

#include <cerrno>
#include <cstring>
#include <iterator>
#include <shared_mutex>
#include <utility>
#include <vector>

#include "nfs/vfs/sys.h"

namespace nfsrdmad::vfs {
namespace {

bool usable_for(const OpenFile& f, const Export* exp, OpenFor need) {
    return f.exp.get() == exp && !f.directory && !f.path_only &&
           (need == OpenFor::Read || f.writable);
}

// The attributes checked (`known`, or read now).
Result<struct statx> check_regular(const Export& exp, int path_fd, const struct statx* known) {
    Result<struct statx> st = known ? Result<struct statx>(*known) : sys::stat_fd(path_fd);
    if (!st) return st.failure();
    if (makedev(st->stx_dev_major, st->stx_dev_minor) != exp.dev()) return fail(ESTALE);
    if (S_ISDIR(st->stx_mode)) return fail(EISDIR);
    if (!S_ISREG(st->stx_mode)) return fail(EINVAL);
    if (st->stx_nlink == 0) return fail(ESTALE);  // removed, kept alive only by open fds
    return st;
}

// As root, and no wider than needed: O_RDWR only to write. A descriptor open for
// writing makes the file unexecutable locally (ETXTBSY), so reads never hold one.
Result<std::pair<UniqueFd, bool>> open_regular(int path_fd, OpenFor need) {
    constexpr int kFlags = O_NONBLOCK;  // not O_NOFOLLOW: /proc/self/fd/N is itself a link
    const bool write = need == OpenFor::Write;
    auto fd = sys::reopen(path_fd, (write ? O_RDWR : O_RDONLY) | kFlags);
    if (!fd) return fd.failure();
    return std::pair{std::move(*fd), write};
}

}  // namespace

FdCache::FdCache(size_t capacity)
    : capacity_(capacity ? capacity : 1), max_paths_(std::max<size_t>(capacity_ / 4, 1)) {
    add_fd_reclaimer(this);
}

FdCache::~FdCache() {
    remove_fd_reclaimer(this);
}

size_t FdCache::HandleHash::operator()(const FileHandle& h) const {
    // The trailing MAC is a keyed PRF output: already a good hash.
    uint64_t v = 0;
    const size_t n = h.size < 8 ? h.size : 8;
    std::memcpy(&v, h.bytes.data() + h.size - n, n);
    return static_cast<size_t>(v);
}

Result<std::shared_ptr<const OpenFile>> FdCache::get(const HandleRef& ref, OpenFor need,
                                                     std::optional<struct statx>* read_now) {
    if (auto hit = lookup(ref.handle, ref.exp.get(), need)) return hit;
    auto path_fd = open_kernel_handle(ref.exp->mount_fd(), ref.decoded.kernel, O_PATH);
    if (!path_fd) return path_fd.failure();
    return open_and_insert(ref.exp, ref.handle, path_fd->get(), need, nullptr, read_now);
}

Result<std::shared_ptr<const OpenFile>> FdCache::get(const ExportTable& table,
                                                     std::span<const uint8_t> wire, OpenFor need) {
    auto ref = table.find_by_handle(wire);
    if (!ref) return ref.failure();
    return get(*ref, need);
}

Result<std::shared_ptr<const OpenFile>> FdCache::get(const Node& node, OpenFor need,
                                                     const struct statx* known) {
    if (!node.exp) return fail(EINVAL);
    if (auto hit = lookup(node.handle, node.exp.get(), need)) return hit;
    return open_and_insert(node.exp, node.handle, node.fd.get(), need, known);
}

std::shared_ptr<const OpenFile> FdCache::lookup_node(const HandleRef& ref) {
    std::shared_lock lock(mu_);
    auto it = slots_.find(ref.handle);
    if (it == slots_.end() || it->second.file->exp != ref.exp) return nullptr;
    mark_used(it->second);
    return it->second.file;  // a directory, a path entry, or a file open for I/O
}

Result<Node> FdCache::kept_node(const HandleRef& ref, std::shared_ptr<const OpenFile> kept,
                                struct statx* attrs, bool may_drop) {
    // Read straight into the caller's attributes (a statx is 256 bytes: no copies).
    struct statx mine;
    struct statx& st = attrs ? *attrs : mine;
    if (int err = sys::stat_fd_into(kept->fd.get(), st); err != 0) return fail(err);
    if (st.stx_nlink == 0) {  // removed since it was cached
        if (!may_drop) return fail(EWOULDBLOCK);
        Files dropped;  // closed after the lock is released (`kept` last: on return)
        std::lock_guard lock(mu_);
        auto it = slots_.find(ref.handle);
        if (it != slots_.end() && it->second.file == kept)  // not a newer table's
            drop(it, dropped);
        return fail(ESTALE);
    }
    const int fd = kept->fd.get();
    const bool directory = kept->directory;
    return Node{ref.exp, NodeFd(fd, std::move(kept), directory), ref.handle};
}

Result<Node> FdCache::cached_node(const HandleRef& ref, struct statx* attrs) {
    auto kept = lookup_node(ref);
    if (!kept) return fail(EWOULDBLOCK);
    return kept_node(ref, std::move(kept), attrs, /*may_drop=*/false);
}

Result<std::shared_ptr<const OpenFile>> FdCache::cached(const HandleRef& ref, OpenFor need) {
    if (auto hit = lookup(ref.handle, ref.exp.get(), need)) return hit;
    return fail(EWOULDBLOCK);
}

std::optional<Node> FdCache::held_node(const HandleRef& ref) {
    auto kept = lookup_node(ref);
    if (!kept) return std::nullopt;
    const int fd = kept->fd.get();
    const bool directory = kept->directory;
    return Node{ref.exp, NodeFd(fd, std::move(kept), directory), ref.handle};
}

Result<Node> FdCache::node_for_change(const HandleRef& ref) {
    if (auto held = held_node(ref)) return std::move(*held);
    return node(ref);
}

Result<Node> FdCache::node(const HandleRef& ref, struct statx* attrs) {
    if (auto kept = lookup_node(ref)) return kept_node(ref, std::move(kept), attrs, true);
    struct statx st {};
    auto node = ExportTable::open(ref, &st);
    if (!node) return node;
    if (attrs) *attrs = st;
    if (S_ISREG(st.stx_mode)) {
        // The O_PATH descriptor just opened becomes a path entry (another thread's entry
        // for the handle, of any kind, wins); the Node shares it.
        UniqueFd fd = node->fd.take_own();
        auto file = std::make_shared<const OpenFile>(OpenFile{
            ref.exp, ref.handle, std::move(fd), false, /*directory=*/false, /*path_only=*/true});
        file = insert(std::move(file), std::nullopt);
        const int shared = file->fd.get();
        node->fd = NodeFd(shared, std::move(file), /*directory=*/false);
        return node;
    }
    if (!S_ISDIR(st.stx_mode)) return node;
    // A directory: open it for reading, as root ("." under itself: one component), keep
    // that, and let the O_PATH one go. Out of descriptors, the O_PATH Node serves.
    UniqueFd fd(open_reclaiming(
        [&] { return ::openat(node->fd.get(), ".", O_RDONLY | O_DIRECTORY | O_CLOEXEC); }));
    if (!fd) return node;
    auto file = std::make_shared<const OpenFile>(
        OpenFile{ref.exp, ref.handle, std::move(fd), false, /*directory=*/true});
    file = insert(std::move(file), std::nullopt);
    const int shared = file->fd.get();
    const bool directory = file->directory;
    return Node{ref.exp, NodeFd(shared, std::move(file), directory), ref.handle};
}

Result<std::shared_ptr<const OpenFile>> FdCache::open_and_insert(
    std::shared_ptr<const Export> exp, const FileHandle& handle, int path_fd, OpenFor need,
    const struct statx* known, std::optional<struct statx>* read_now) {
    auto checked = check_regular(*exp, path_fd, known);
    if (!checked) return checked.failure();
    auto opened = open_regular(path_fd, need);
    if (!opened) return opened.failure();
    if (read_now) *read_now = *checked;
    auto file = std::make_shared<const OpenFile>(
        OpenFile{std::move(exp), handle, std::move(opened->first), opened->second});
    return insert(std::move(file), need);
}

std::shared_ptr<const OpenFile> FdCache::lookup(const FileHandle& handle, const Export* exp,
                                                OpenFor need) {
    std::shared_lock lock(mu_);
    auto it = slots_.find(handle);
    if (it == slots_.end() || !usable_for(*it->second.file, exp, need)) return nullptr;
    mark_used(it->second);
    return it->second.file;
}

void FdCache::touch(Slot& slot) {
    lru_.splice(lru_.begin(), lru_, slot.lru_pos);
    slot.lru_used.store(false, std::memory_order_relaxed);
    if (slot.file->path_only) {
        paths_.splice(paths_.begin(), paths_, slot.path_pos);
        slot.path_used.store(false, std::memory_order_relaxed);
    }
    slot.used.store(epoch_, std::memory_order_relaxed);
}

void FdCache::mark_used(Slot& slot) const {
    if (!slot.lru_used.load(std::memory_order_relaxed))
        slot.lru_used.store(true, std::memory_order_relaxed);
    if (slot.file->path_only && !slot.path_used.load(std::memory_order_relaxed))
        slot.path_used.store(true, std::memory_order_relaxed);
    if (slot.used.load(std::memory_order_relaxed) != epoch_)
        slot.used.store(epoch_, std::memory_order_relaxed);
}

void FdCache::settle_lru() {
    for (auto pos = lru_.begin(); pos != lru_.end();) {
        const auto next = std::next(pos);
        Slot& slot = slots_.find(*pos)->second;
        if (slot.lru_used.exchange(false, std::memory_order_relaxed))
            lru_.splice(lru_.begin(), lru_, pos);
        pos = next;
    }
}

void FdCache::add(std::shared_ptr<const OpenFile> file, Files& evicted) {
    const FileHandle handle = file->handle;
    lru_.push_front(handle);
    Slot& slot = slots_.try_emplace(handle).first->second;
    slot.file = std::move(file);
    slot.lru_pos = lru_.begin();
    slot.used.store(epoch_, std::memory_order_relaxed);
    if (slot.file->path_only) {
        paths_.push_front(handle);
        slot.path_pos = paths_.begin();
    }
    evict_over_capacity(evicted);
}

void FdCache::replace(Slot& slot, std::shared_ptr<const OpenFile> file, Files& old) {
    if (slot.file->path_only) paths_.erase(slot.path_pos);
    old.push_back(std::exchange(slot.file, std::move(file)));
    if (slot.file->path_only) {
        paths_.push_front(slot.file->handle);
        slot.path_pos = paths_.begin();
    }
    touch(slot);
}

void FdCache::drop(Slots::iterator it, Files& out) {
    if (it->second.file->path_only) paths_.erase(it->second.path_pos);
    lru_.erase(it->second.lru_pos);
    out.push_back(std::move(it->second.file));
    slots_.erase(it);
}

std::shared_ptr<const OpenFile> FdCache::insert(std::shared_ptr<const OpenFile> file,
                                                std::optional<OpenFor> need) {
    Files evicted;  // closed after the lock is released
    std::lock_guard lock(mu_);
    auto it = slots_.find(file->handle);
    if (it != slots_.end()) {
        // Another thread raced us. Keep theirs if it serves this request too: for I/O, one
        // usable for it and at least as writable; for node(), any of this export (the same
        // object: a directory then, or a regular file held for node() or for I/O).
        const OpenFile& theirs = *it->second.file;
        if (need
                ? usable_for(theirs, file->exp.get(), *need) && (theirs.writable || !file->writable)
                : theirs.exp == file->exp) {
            touch(it->second);
            return it->second.file;
        }
        replace(it->second, file, evicted);
        return file;
    }
    add(file, evicted);
    return file;
}

// Second chance: an entry at the back that a hit marked since it last moved is unmarked
// and moved to the front instead of dropped. Hits cannot mark meanwhile (this holds the
// lock exclusively), so each list is walked at most once before something is dropped.
void FdCache::evict_over_capacity(Files& evicted) {
    while (paths_.size() > max_paths_) {
        auto it = slots_.find(paths_.back());
        if (it->second.path_used.exchange(false, std::memory_order_relaxed)) {
            paths_.splice(paths_.begin(), paths_, it->second.path_pos);
            continue;
        }
        drop(it, evicted);
        evictions_.fetch_add(1, std::memory_order_relaxed);
    }
    while (slots_.size() > capacity_) {
        auto it = slots_.find(lru_.back());
        if (it->second.lru_used.exchange(false, std::memory_order_relaxed)) {
            lru_.splice(lru_.begin(), lru_, it->second.lru_pos);
            continue;
        }
        drop(it, evicted);
        evictions_.fetch_add(1, std::memory_order_relaxed);
    }
}

size_t FdCache::reclaim_fds(size_t want) {
    Files closing;  // closed after the lock is released
    std::lock_guard lock(mu_);
    settle_lru();
    for (auto pos = lru_.end(); pos != lru_.begin() && closing.size() < want;) {
        --pos;
        auto it = slots_.find(*pos);
        // In use by a request: dropping it would not close its descriptor now.
        if (it->second.file.use_count() > 1) continue;
        ++pos;  // drop() erases the element `pos` pointed at; the next one back follows it
        drop(it, closing);
    }
    reclaimed_.fetch_add(closing.size(), std::memory_order_relaxed);
    return closing.size();
}

size_t FdCache::close_idle() {
    Files closing;  // closed after the lock is released
    {
        std::lock_guard lock(mu_);
        const uint64_t now = ++epoch_;
        // Every path entry (at most a quarter of the capacity): hits do not reorder paths_,
        // so its order says little of when each was used; `used` does.
        for (auto pos = paths_.begin(); pos != paths_.end();) {
            auto it = slots_.find(*pos);
            ++pos;  // drop() erases the element before it
            if (it->second.used.load(std::memory_order_relaxed) + 2 > now) continue;
            drop(it, closing);
        }
        // Then from the back of lru_, kIdleIoScan entries at most: one unused for
        // kIdleIoPeriods that nobody else holds (a request, an NFSv4.1 open or delegation)
        // is dropped, any other goes to the front (unmarked, as in eviction), so that the
        // next calls look further on, whatever stays held for long.
        const size_t n = std::min(kIdleIoScan, lru_.size());
        for (size_t i = 0; i < n; ++i) {
            auto it = slots_.find(lru_.back());
            Slot& slot = it->second;
            const bool marked = slot.lru_used.exchange(false, std::memory_order_relaxed);
            if (!marked && slot.file.use_count() == 1 &&
                slot.used.load(std::memory_order_relaxed) + kIdleIoPeriods <= now) {
                drop(it, closing);
                continue;
            }
            lru_.splice(lru_.begin(), lru_, slot.lru_pos);
        }
    }
    idle_closed_.fetch_add(closing.size(), std::memory_order_relaxed);
    return closing.size();
}

size_t FdCache::path_entries() const {
    std::shared_lock lock(mu_);
    return paths_.size();
}

void FdCache::adopt(Node& node) {
    if (!node.exp || node.fd.shared()) return;
    UniqueFd fd = node.fd.take_own();
    if (!fd) return;
    auto file = std::make_shared<const OpenFile>(
        OpenFile{node.exp, node.handle, std::move(fd), /*writable=*/true});
    // A writable entry already there for the handle is kept, and ours closed (insert).
    file = insert(std::move(file), OpenFor::Write);
    const int shared = file->fd.get();
    node.fd = NodeFd(shared, std::move(file), /*directory=*/false);
}

void FdCache::hold(Node& node, const struct statx& attrs) {
    if (!node.exp || node.fd.shared() || !S_ISREG(attrs.stx_mode) || attrs.stx_nlink == 0) return;
    UniqueFd fd = node.fd.take_own();
    if (!fd) return;
    auto file = std::make_shared<const OpenFile>(OpenFile{
        node.exp, node.handle, std::move(fd), false, /*directory=*/false, /*path_only=*/true});
    file = insert(std::move(file), std::nullopt);  // ours is closed if another entry wins
    const int shared = file->fd.get();
    node.fd = NodeFd(shared, std::move(file), /*directory=*/false);
}

void FdCache::forget(const FileHandle& handle) {
    Files forgotten;  // closed after the lock is released
    std::lock_guard lock(mu_);
    auto it = slots_.find(handle);
    if (it == slots_.end()) return;
    drop(it, forgotten);
}

void FdCache::clear() {
    Files cleared;  // closed after the lock is released
    std::lock_guard lock(mu_);
    for (auto& [handle, slot] : slots_) cleared.push_back(std::move(slot.file));
    slots_.clear();
    lru_.clear();
    paths_.clear();
}

bool FdCache::contains(const FileHandle& handle) const {
    std::shared_lock lock(mu_);
    return slots_.count(handle) != 0;
}

size_t FdCache::size() const {
    std::shared_lock lock(mu_);
    return slots_.size();
}

}  // namespace nfsrdmad::vfs
