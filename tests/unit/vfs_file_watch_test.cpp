// FileWatch (nfs/vfs/file_watch.h): a local process's chmod, link, unlink or rename of a
// watched file is reported with the wire handle it was watched under (a write and an mtime
// set alone where the mark asks for them); this process's own
// changes are not; a file is watched while any of its marks lives. fanotify with
// FAN_REPORT_FID needs CAP_SYS_ADMIN: run as root (the fixture needs it too).
#include <sys/wait.h>

#include <atomic>
#include <mutex>

#include "nfs/vfs/file_watch.h"
#include "tests/unit/eventually.h"
#include "tests/unit/vfs_test_util.h"

namespace nfsrdmad::vfs::testing {
namespace {

using nfsrdmad::test::eventually;

class FileWatchTest : public VfsFixture {
  protected:
    void SetUp() override {
        VfsFixture::SetUp();
        auto w = FileWatch::start([this](const FileHandle& h) {
            std::lock_guard l(mu_);
            seen_.push_back(h);
        });
        ASSERT_TRUE(w.ok()) << "fanotify: " << describe_error(w.error());
        watch_ = std::move(*w);
    }
    void TearDown() override {
        watch_.reset();
        VfsFixture::TearDown();
    }
    std::shared_ptr<const OpenFile> open(const std::string& rel) {
        auto f = cache_.get(*table_, node(rel).handle.data(), OpenFor::Read);
        EXPECT_TRUE(f.ok()) << rel << ": " << describe_error(f.error());
        return f.ok() ? *f : nullptr;
    }
    // A new file `name`, open and watched (mark null if the watch failed).
    struct Watched {
        std::shared_ptr<const OpenFile> file;
        std::shared_ptr<FileWatch::Mark> mark;
    };
    Watched make_watched(const std::string& name, bool writes) {
        write_file(name, name);
        Watched w{open(name), nullptr};
        if (!w.file) return w;
        auto m = watch_->watch(w.file, writes);
        EXPECT_TRUE(m.ok()) << name << ": " << describe_error(m.error());
        if (m.ok()) w.mark = std::move(*m);
        return w;
    }
    // Runs `cmd` in another process, as a local user of the server would.
    static void other_process(const std::string& cmd) {
        ASSERT_EQ(std::system(cmd.c_str()), 0) << cmd;
    }
    size_t seen(const FileHandle& h) {
        std::lock_guard l(mu_);
        return std::count(seen_.begin(), seen_.end(), h);
    }
    void forget_seen() {
        std::lock_guard l(mu_);
        seen_.clear();
    }

    FdCache cache_{16};
    std::shared_ptr<FileWatch> watch_;
    std::mutex mu_;
    std::vector<FileHandle> seen_;
};

TEST_F(FileWatchTest, ALocalChmodLinkUnlinkOrRenameOfAWatchedFileIsReported) {
    write_file("a", "a");
    write_file("quiet", "q");
    auto a = open("a");
    auto quiet = open("quiet");
    ASSERT_TRUE(a && quiet);
    const FileHandle ha = a->handle;
    auto mark = watch_->watch(a, true);
    ASSERT_TRUE(mark.ok()) << describe_error(mark.error());
    EXPECT_EQ(watch_->watched(), 1u);

    other_process("chmod 600 " + path("a"));
    EXPECT_TRUE(eventually([&] { return seen(ha) >= 1; })) << "chmod";
    other_process("chmod 644 " + path("quiet"));  // not watched
    for (const auto& [cmd, what] : std::vector<std::pair<std::string, const char*>>{
             {"ln " + path("a") + " " + path("a2"), "link"},
             {"rm " + path("a2"), "unlink of another link"},
             {"mv " + path("a") + " " + path("b"), "rename"},
             {"touch -m -d @1 " + path("b"), "utimes of the modification time alone"},
             {"sh -c 'echo x >> " + path("b") + "'", "write"},
             {"rm " + path("b"), "unlink"}}) {
        forget_seen();
        other_process(cmd);
        EXPECT_TRUE(eventually([&] { return seen(ha) >= 1; })) << what;
    }
    EXPECT_EQ(seen(quiet->handle), 0u);
}

// Several events in one read: each is found (they follow each other 4-byte aligned).
TEST_F(FileWatchTest, EveryFileOfOneChangeIsReported) {
    std::vector<Watched> files;
    std::string cmd = "chmod 600";
    for (const char* n : {"f1", "f2", "f3", "f4"}) {
        files.push_back(make_watched(n, false));
        ASSERT_TRUE(files.back().mark);
        cmd += " " + path(n);
    }
    EXPECT_EQ(watch_->watched(), 4u);
    other_process(cmd);
    for (const auto& f : files) EXPECT_TRUE(eventually([&] { return seen(f.file->handle) == 1; }));
}

TEST_F(FileWatchTest, ThisProcesssOwnChangesAreNotReported) {
    Watched w = make_watched("own", false);
    ASSERT_TRUE(w.mark);
    const auto& f = w.file;
    ASSERT_EQ(::chmod(path("own").c_str(), 0600), 0);
    ASSERT_EQ(::rename(path("own").c_str(), path("own2").c_str()), 0);
    // Then another process's change: reported, and only it (events of one file and
    // process merge, so the count says whose came through).
    other_process("chmod 640 " + path("own2"));
    ASSERT_TRUE(eventually([&] { return seen(f->handle) >= 1; }));
    std::this_thread::sleep_for(std::chrono::milliseconds(50));
    EXPECT_EQ(seen(f->handle), 1u);
}

TEST_F(FileWatchTest, AFileIsWatchedWhileAnyOfItsMarksLives) {
    write_file("m", "m");
    auto f = open("m");
    ASSERT_TRUE(f);
    auto one = watch_->watch(f, false);
    auto two = watch_->watch(f, true);  // a second delegation of the same file
    ASSERT_TRUE(one.ok() && two.ok());
    EXPECT_EQ(watch_->watched(), 1u);
    one->reset();
    other_process("chmod 600 " + path("m"));
    EXPECT_TRUE(eventually([&] { return seen(f->handle) >= 1; })) << "one mark left";
    two->reset();
    EXPECT_EQ(watch_->watched(), 0u);
    forget_seen();
    other_process("chmod 644 " + path("m"));
    std::this_thread::sleep_for(std::chrono::milliseconds(200));
    EXPECT_EQ(seen(f->handle), 0u) << "reported with no mark left";
}

TEST_F(FileWatchTest, NoCallbackRunsAfterStop) {
    Watched w = make_watched("s", false);
    ASSERT_TRUE(w.mark);
    watch_->stop();
    other_process("chmod 600 " + path("s"));
    std::this_thread::sleep_for(std::chrono::milliseconds(200));
    EXPECT_EQ(seen(w.file->handle), 0u);
    w.mark.reset();  // a mark outlives the thread
    EXPECT_EQ(watch_->watched(), 0u);
}

}  // namespace
}  // namespace nfsrdmad::vfs::testing
