#include "nfs/v4/pseudo_fs.h"

#include "nfs/vfs/siphash.h"

namespace nfsrdmad::nfs::v4 {

namespace {

// Not secret: pseudo ids must be stable, not unguessable (the handle's MAC protects).
constexpr vfs::SipKey kIdKey = {'n', 'f', 's', '4', 'p', 's', 'e', 'u',
                                'd', 'o', 'f', 's', '-', 'i', 'd', '1'};

std::string parent_path(const std::string& p) {
    auto slash = p.rfind('/');
    return slash == 0 ? "/" : p.substr(0, slash);
}

}  // namespace

uint64_t PseudoFs::id_of(std::string_view path) {
    return vfs::siphash24(kIdKey, {reinterpret_cast<const uint8_t*>(path.data()), path.size()});
}

PseudoFs::PseudoFs(const std::vector<ExportPoint>& exports) {
    root_id_ = ensure_dir("/");
    for (const auto& e : exports) {
        if (e.path.empty() || e.path[0] != '/') continue;
        if (e.path == "/") {
            root_export_ = e.fsid;
            continue;
        }
        uint64_t parent = ensure_dir(parent_path(e.path));
        std::string name = e.path.substr(e.path.rfind('/') + 1);
        Entry entry{Entry::ExportRoot, 0, e.fsid};
        dirs_[parent].children[name] = entry;  // an export replaces a pseudo dir there
        export_parent_[e.fsid] = parent;
    }
    if (!root_export_) mark_reachable(root_id_);
}

// Directories under an export's path are served by the export's real tree; only
// those reached from the root through pseudo directories are the pseudo file system.
void PseudoFs::mark_reachable(uint64_t dir) {
    Dir& d = dirs_.at(dir);
    d.reachable = true;
    for (const auto& [name, e] : d.children)
        if (e.kind == Entry::Directory) mark_reachable(e.node);
}

const PseudoFs::Dir* PseudoFs::find(uint64_t dir) const {
    auto d = dirs_.find(dir);
    return d == dirs_.end() || !d->second.reachable ? nullptr : &d->second;
}

uint64_t PseudoFs::ensure_dir(const std::string& path) {
    uint64_t id = id_of(path);
    if (dirs_.count(id)) return id;
    Dir d;
    d.path = path;
    if (path == "/") {
        d.parent = id;
    } else {
        d.parent = ensure_dir(parent_path(path));
        std::string name = path.substr(path.rfind('/') + 1);
        auto& siblings = dirs_[d.parent].children;
        // An export at this path already: the walk continues in its real directories.
        if (auto it = siblings.find(name); it == siblings.end())
            siblings[name] = Entry{Entry::Directory, id, 0};
    }
    dirs_.emplace(id, std::move(d));
    return id;
}

PseudoFs::Entry PseudoFs::root() const {
    if (root_export_) return {Entry::ExportRoot, 0, *root_export_};
    return {Entry::Directory, root_id_, 0};
}

std::optional<PseudoFs::Entry> PseudoFs::lookup(uint64_t dir, std::string_view name) const {
    const Dir* d = find(dir);
    if (!d) return std::nullopt;
    auto c = d->children.find(name);
    if (c == d->children.end()) return std::nullopt;
    return c->second;
}

std::optional<uint64_t> PseudoFs::parent(uint64_t dir) const {
    const Dir* d = find(dir);
    if (!d || d->parent == dir) return std::nullopt;
    return d->parent;
}

std::optional<uint64_t> PseudoFs::parent_of_export(uint32_t fsid) const {
    auto it = export_parent_.find(fsid);
    if (it == export_parent_.end() || !find(it->second)) return std::nullopt;
    return it->second;
}

std::vector<std::pair<std::string, PseudoFs::Entry>> PseudoFs::list(uint64_t dir) const {
    std::vector<std::pair<std::string, Entry>> out;
    if (const Dir* d = find(dir))
        for (const auto& [name, e] : d->children) out.emplace_back(name, e);
    return out;
}

std::string PseudoFs::path(uint64_t dir) const {
    const Dir* d = find(dir);
    return d ? d->path : std::string();
}

vfs::FileHandle encode_pseudo_handle(const vfs::HandleKey& key, uint64_t node) {
    vfs::FileHandle h;
    h.size = kPseudoHandleSize;
    h.bytes[0] = kPseudoHandleVersion;
    for (int i = 0; i < 8; ++i) h.bytes[1 + i] = uint8_t(node >> (56 - 8 * i));
    uint64_t mac = vfs::siphash24(key, {h.bytes.data(), 9});
    for (int i = 0; i < 8; ++i) h.bytes[9 + i] = uint8_t(mac >> (8 * i));
    return h;
}

bool is_pseudo_handle(std::span<const uint8_t> wire) {
    return !wire.empty() && wire[0] == kPseudoHandleVersion;
}

std::optional<uint64_t> decode_pseudo_handle(const vfs::HandleKey& key,
                                             std::span<const uint8_t> wire) {
    if (wire.size() != kPseudoHandleSize || wire[0] != kPseudoHandleVersion) return std::nullopt;
    uint64_t mac = 0;
    for (int i = 0; i < 8; ++i) mac |= uint64_t(wire[9 + i]) << (8 * i);
    if (mac != vfs::siphash24(key, wire.first(9))) return std::nullopt;
    uint64_t node = 0;
    for (int i = 0; i < 8; ++i) node = node << 8 | wire[1 + i];
    return node;
}

}  // namespace nfsrdmad::nfs::v4
