// vfs_test_util.h — shared fixture for the nfs/vfs unit tests: a fresh export directory
// and state directory under /tmp per test. Must run as root on a filesystem with
// persistent file handles (ext4).
#pragma once

#include <fcntl.h>
#include <ftw.h>
#include <gtest/gtest.h>
#include <sys/stat.h>
#include <sys/xattr.h>
#include <unistd.h>

#include <cerrno>
#include <cstdlib>
#include <cstring>
#include <string>
#include <vector>

#include "nfs/vfs/vfs.h"

namespace nfsrdmad::vfs::testing {

inline const Identity kRoot{0, 0, {}};
inline const Identity kUser1234{1234, 1234, {}};
inline const Identity kUser4321{4321, 4321, {}};

// POSIX access ACLs (acl(5)), written as the kernel takes them (system.posix_acl_access,
// linux/posix_acl_xattr.h: a version word, then tag, perm, id per entry in tag order).
struct AclEntry {
    uint16_t
        tag;  // 0x01 user::, 0x02 user:ID:, 0x04 group::, 0x08 group:ID:, 0x10 mask, 0x20 other
    uint16_t perm;
    uint32_t id = UINT32_MAX;
};
inline void set_access_acl(const std::string& p, std::initializer_list<AclEntry> entries) {
    std::vector<uint8_t> x = {2, 0, 0, 0};
    for (const AclEntry& e : entries) {
        const uint8_t b[8] = {uint8_t(e.tag),       uint8_t(e.tag >> 8), uint8_t(e.perm),
                              uint8_t(e.perm >> 8), uint8_t(e.id),       uint8_t(e.id >> 8),
                              uint8_t(e.id >> 16),  uint8_t(e.id >> 24)};
        x.insert(x.end(), b, b + 8);
    }
    ASSERT_EQ(::setxattr(p.c_str(), "system.posix_acl_access", x.data(), x.size(), 0), 0)
        << p << ": " << std::strerror(errno) << " (a file system without POSIX ACLs?)";
}

inline int remove_entry(const char* path, const struct stat*, int, struct FTW*) {
    return ::remove(path);
}

class VfsFixture : public ::testing::Test {
  protected:
    void SetUp() override {
        char tmpl[] = "/tmp/nfsrdmad_vfs_test.XXXXXX";
        ASSERT_NE(::mkdtemp(tmpl), nullptr);
        base_ = tmpl;
        export_dir_ = base_ + "/export";
        state_dir_ = base_ + "/state";
        ASSERT_EQ(::mkdir(export_dir_.c_str(), 0777), 0);
        ASSERT_EQ(::chmod(export_dir_.c_str(), 0777), 0);  // let test users create files
        ASSERT_EQ(::mkdir(state_dir_.c_str(), 0700), 0);
        auto key = load_or_create_handle_key(state_dir_);
        ASSERT_TRUE(key.ok()) << describe_error(key.error());
        key_ = *key;
        table_ = make_table({export_dir_});
        ASSERT_NE(table_, nullptr);
        exp_ = table_->exports().at(0);
        auto root = exp_->root();
        ASSERT_TRUE(root.ok());
        root_ = std::move(*root);
    }

    void TearDown() override {
        root_ = Node{};
        exp_.reset();
        table_.reset();
        if (!base_.empty()) ::nftw(base_.c_str(), remove_entry, 16, FTW_DEPTH | FTW_PHYS);
    }

    std::shared_ptr<const ExportTable> make_table(const std::vector<std::string>& paths) {
        std::vector<ExportSpec> specs;
        for (const auto& p : paths) specs.push_back(ExportSpec{p, 0, {}});
        std::string why;
        auto t = ExportTable::create(specs, key_, &why);
        EXPECT_TRUE(t.ok()) << why;
        return t.ok() ? *t : nullptr;
    }

    std::string path(const std::string& rel) const { return export_dir_ + "/" + rel; }

    void write_file(const std::string& rel, const std::string& content, mode_t mode = 0644,
                    uid_t uid = 0, gid_t gid = 0) {
        const std::string p = path(rel);
        int fd = ::open(p.c_str(), O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, mode);
        ASSERT_GE(fd, 0) << p;
        ASSERT_EQ(::write(fd, content.data(), content.size()),
                  static_cast<ssize_t>(content.size()));
        ::close(fd);
        ASSERT_EQ(::chmod(p.c_str(), mode), 0);
        ASSERT_EQ(::chown(p.c_str(), uid, gid), 0);
    }

    // Resolves a '/'-separated relative path by successive lookups as root.
    Node node(const std::string& rel) {
        auto cur = clone(root_);
        EXPECT_TRUE(cur.ok());
        Node n = std::move(*cur);
        size_t i = 0;
        while (i < rel.size()) {
            size_t j = rel.find('/', i);
            if (j == std::string::npos) j = rel.size();
            auto e = lookup(n, rel.substr(i, j - i), kRoot);
            EXPECT_TRUE(e.ok()) << rel << ": " << describe_error(e.error());
            if (!e.ok()) return Node{};
            n = std::move(e->node);
            i = j + 1;
        }
        return n;
    }

    struct stat stat_path(const std::string& rel) const {
        struct stat st {};
        EXPECT_EQ(::lstat(path(rel).c_str(), &st), 0) << rel;
        return st;
    }

    std::string base_, export_dir_, state_dir_;
    HandleKey key_{};
    std::shared_ptr<const ExportTable> table_;
    std::shared_ptr<const Export> exp_;
    Node root_;
};

}  // namespace nfsrdmad::vfs::testing
