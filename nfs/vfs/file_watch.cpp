#include "nfs/vfs/file_watch.h"

#include <fcntl.h>
#include <poll.h>
#include <sys/eventfd.h>
#include <sys/fanotify.h>
#include <sys/vfs.h>
#include <unistd.h>

#include <cerrno>
#include <cstring>
#include <map>
#include <mutex>
#include <unordered_map>
#include <vector>

namespace nfsrdmad::vfs {

namespace {

// What a change to a watched file reports: its attributes (chmod, chown, utimes, a link
// count that moved: link(2), unlink(2)) and a rename of it.
constexpr uint64_t kMask = FAN_ATTRIB | FAN_MOVE_SELF;

// An inode as an event names it: the file system's fsid, then struct file_handle's
// handle_type and bytes.
std::string key_of(const void* fsid, int type, const void* bytes, size_t n) {
    std::string k(8 + sizeof type + n, '\0');
    std::memcpy(k.data(), fsid, 8);
    std::memcpy(k.data() + 8, &type, sizeof type);
    std::memcpy(k.data() + 8 + sizeof type, bytes, n);
    return k;
}

std::string key_of_handle(const FileHandle& h) {
    return std::string(reinterpret_cast<const char*>(h.bytes.data()), h.size);
}

}  // namespace

struct FileWatch::Core {
    UniqueFd fan;   // the fanotify group
    UniqueFd stop;  // an eventfd: the reader thread returns once it is readable
    Changed changed;
    pid_t self = 0;

    // Per inode: the wire handles its marks were made under, with how many marks each.
    struct Inode {
        std::map<std::string, std::pair<FileHandle, size_t>> handles;
        size_t marks = 0;
        bool writes = false;  // FAN_MODIFY in its mask
    };
    mutable std::mutex mu;
    std::unordered_map<std::string, Inode> inodes;

    void release(const std::string& key, const OpenFile& f) {
        std::lock_guard l(mu);
        auto it = inodes.find(key);
        if (it == inodes.end()) return;
        auto h = it->second.handles.find(key_of_handle(f.handle));
        if (h != it->second.handles.end() && --h->second.second == 0) it->second.handles.erase(h);
        if (--it->second.marks != 0) return;
        inodes.erase(it);
        // The mark goes with the last of the inode's; the kernel lets the inode go with it.
        (void)fanotify_mark(fan.get(), FAN_MARK_REMOVE, kMask | FAN_MODIFY, f.fd.get(), nullptr);
    }

    // The handles of the inodes `keys` name (every watched one when `all`).
    std::vector<FileHandle> handles_of(const std::vector<std::string>& keys, bool all) const {
        std::vector<FileHandle> out;
        std::lock_guard l(mu);
        auto add = [&](const Inode& i) {
            for (const auto& [k, h] : i.handles) out.push_back(h.first);
        };
        if (all) {
            for (const auto& [k, i] : inodes) add(i);
            return out;
        }
        for (const std::string& k : keys)
            if (auto it = inodes.find(k); it != inodes.end()) add(it->second);
        return out;
    }
};

FileWatch::Mark::~Mark() {
    core_->release(key_, *file_);
}

Result<std::shared_ptr<FileWatch>> FileWatch::start(Changed changed) {
    auto core = std::make_shared<Core>();
    core->fan.reset(fanotify_init(FAN_CLASS_NOTIF | FAN_REPORT_FID | FAN_CLOEXEC | FAN_NONBLOCK,
                                  O_RDONLY | O_LARGEFILE));
    if (!core->fan) return fail(errno);
    core->stop.reset(eventfd(0, EFD_CLOEXEC | EFD_NONBLOCK));
    if (!core->stop) return fail(errno);
    core->changed = std::move(changed);
    core->self = getpid();
    std::shared_ptr<FileWatch> w(new FileWatch(std::move(core)));
    w->thread_ = std::thread([p = w.get()] { p->run(); });
    return w;
}

FileWatch::FileWatch(std::shared_ptr<Core> core) : core_(std::move(core)) {}

FileWatch::~FileWatch() {
    stop();
}

void FileWatch::stop() {
    if (!thread_.joinable()) return;
    const uint64_t one = 1;
    (void)!write(core_->stop.get(), &one, sizeof one);
    thread_.join();
}

size_t FileWatch::watched() const {
    std::lock_guard l(core_->mu);
    return core_->inodes.size();
}

Result<std::shared_ptr<FileWatch::Mark>> FileWatch::watch(std::shared_ptr<const OpenFile> f,
                                                          bool writes) {
    const int fd = f->fd.get();
    struct statfs sfs;
    if (fstatfs(fd, &sfs) != 0) return fail(errno);
    auto kh = kernel_handle_of(fd);
    if (!kh) return fail(kh.error());
    const int type = kh->type;
    std::string key = key_of(&sfs.f_fsid, type, kh->bytes.data(), kh->size);
    {
        std::lock_guard l(core_->mu);
        auto it = core_->inodes.find(key);
        if (it == core_->inodes.end() || (writes && !it->second.writes)) {
            // Under the mutex: a release of the same inode's last mark cannot come between.
            // A second ADD adds to the inode's mask.
            const uint64_t mask = kMask | (writes ? FAN_MODIFY : 0);
            if (fanotify_mark(core_->fan.get(), FAN_MARK_ADD, mask, fd, nullptr) != 0)
                return fail(errno);
            if (it == core_->inodes.end()) it = core_->inodes.emplace(key, Core::Inode{}).first;
            it->second.writes |= writes;
        }
        auto& h = it->second.handles[key_of_handle(f->handle)];
        h.first = f->handle;
        ++h.second;
        ++it->second.marks;
    }
    return std::make_shared<Mark>(core_, std::move(key), std::move(f));
}

void FileWatch::run() {
    Core& c = *core_;
    alignas(fanotify_event_metadata) char buf[8192];
    pollfd p[2] = {{c.fan.get(), POLLIN, 0}, {c.stop.get(), POLLIN, 0}};
    for (;;) {
        if (poll(p, 2, -1) < 0) {
            if (errno == EINTR) continue;
            return;
        }
        if (p[1].revents) return;
        const ssize_t n = read(c.fan.get(), buf, sizeof buf);
        if (n < 0) {
            if (errno == EINTR || errno == EAGAIN) continue;
            return;
        }
        std::vector<std::string> keys;
        bool all = false;
        // Events are 4-byte aligned (FANOTIFY_EVENT_ALIGN) and their metadata holds a u64:
        // each is copied out rather than read in place.
        for (size_t off = 0; off + FAN_EVENT_METADATA_LEN <= size_t(n);) {
            fanotify_event_metadata m;
            std::memcpy(&m, buf + off, sizeof m);
            if (m.vers != FANOTIFY_METADATA_VERSION) return;
            if (m.event_len < FAN_EVENT_METADATA_LEN || off + m.event_len > size_t(n) ||
                m.metadata_len < FAN_EVENT_METADATA_LEN || m.metadata_len > m.event_len)
                break;
            const char* i = buf + off + m.metadata_len;
            const char* end = buf + off + m.event_len;
            off += m.event_len;
            if (m.mask & FAN_Q_OVERFLOW) {
                all = true;  // events were lost: any watched file may have changed
                continue;
            }
            if (m.pid == c.self) continue;  // this daemon's own change (see the header)
            while (i + sizeof(fanotify_event_info_header) <= end) {
                fanotify_event_info_header h;
                std::memcpy(&h, i, sizeof h);
                if (h.len < sizeof h || i + h.len > end) break;
                // fanotify_event_info_fid: the header, the fsid (8 bytes), then a struct
                // file_handle: handle_bytes (u32), handle_type (int), the bytes.
                constexpr size_t kFid = sizeof(fanotify_event_info_header) + 8;
                constexpr size_t kBytes = kFid + sizeof(uint32_t) + sizeof(int);
                if (h.info_type == FAN_EVENT_INFO_TYPE_FID && h.len >= kBytes) {
                    uint32_t bytes;
                    int type;
                    std::memcpy(&bytes, i + kFid, sizeof bytes);
                    std::memcpy(&type, i + kFid + sizeof bytes, sizeof type);
                    if (kBytes + bytes <= h.len)
                        keys.push_back(key_of(i + sizeof h, type, i + kBytes, bytes));
                }
                i += h.len;
            }
        }
        for (const FileHandle& h : c.handles_of(keys, all)) c.changed(h);
    }
}

}  // namespace nfsrdmad::vfs
