#include "tests/e2e/e2e_util.h"

#include <cerrno>
#include <cstring>

namespace nfsrdmad::e2e {

namespace {

uint64_t SplitMix(uint64_t x) {
    x += 0x9e3779b97f4a7c15ULL;
    x = (x ^ (x >> 30)) * 0xbf58476d1ce4e5b9ULL;
    x = (x ^ (x >> 27)) * 0x94d049bb133111ebULL;
    return x ^ (x >> 31);
}

}  // namespace

void FillPattern(char* dst, size_t n, uint64_t seed, uint64_t offset) {
    const uint64_t key = SplitMix(seed * 0x100000001b3ULL + 0x243f6a8885a308d3ULL);
    size_t i = 0;
    while (i < n) {
        uint64_t pos = offset + i;
        uint64_t word = SplitMix(key ^ (pos >> 3));
        for (unsigned byte = static_cast<unsigned>(pos & 7); byte < 8 && i < n; ++byte, ++i)
            dst[i] = static_cast<char>((word >> (8 * byte)) & 0xff);
    }
}

std::string Pattern(size_t n, uint64_t seed, uint64_t offset) {
    std::string s(n, '\0');
    FillPattern(s.data(), n, seed, offset);
    return s;
}

int FtypeOf(mode_t m) {
    switch (m & S_IFMT) {
        case S_IFREG:
            return NF3REG;
        case S_IFDIR:
            return NF3DIR;
        case S_IFBLK:
            return NF3BLK;
        case S_IFCHR:
            return NF3CHR;
        case S_IFLNK:
            return NF3LNK;
        case S_IFSOCK:
            return NF3SOCK;
        case S_IFIFO:
            return NF3FIFO;
        default:
            return 0;
    }
}

::testing::AssertionResult AttrMatchesDisk(const fattr3& a, const struct stat& st,
                                           bool check_times) {
    auto fail = ::testing::AssertionFailure();
    bool bad = false;
    auto cmp = [&](const char* what, uint64_t nfs, uint64_t disk) {
        if (nfs != disk) {
            fail << what << ": NFS says " << nfs << ", disk says " << disk << "; ";
            bad = true;
        }
    };
    cmp("type", static_cast<uint64_t>(a.type), static_cast<uint64_t>(FtypeOf(st.st_mode)));
    if ((a.mode & 07777) != (st.st_mode & 07777)) {
        fail << "mode: NFS says 0" << std::oct << (a.mode & 07777) << ", disk says 0"
             << (st.st_mode & 07777) << std::dec << "; ";
        bad = true;
    }
    cmp("nlink", a.nlink, st.st_nlink);
    cmp("uid", a.uid, st.st_uid);
    cmp("gid", a.gid, st.st_gid);
    cmp("size", a.size, static_cast<uint64_t>(st.st_size));
    if (check_times) {
        cmp("atime.seconds", a.atime.seconds, static_cast<uint64_t>(st.st_atim.tv_sec));
        cmp("atime.nseconds", a.atime.nseconds, static_cast<uint64_t>(st.st_atim.tv_nsec));
        cmp("mtime.seconds", a.mtime.seconds, static_cast<uint64_t>(st.st_mtim.tv_sec));
        cmp("mtime.nseconds", a.mtime.nseconds, static_cast<uint64_t>(st.st_mtim.tv_nsec));
        cmp("ctime.seconds", a.ctime.seconds, static_cast<uint64_t>(st.st_ctim.tv_sec));
        cmp("ctime.nseconds", a.ctime.nseconds, static_cast<uint64_t>(st.st_ctim.tv_nsec));
    }
    if (bad) return fail;
    return ::testing::AssertionSuccess();
}

bool Lstat(const std::string& path, struct stat* st, std::string* why) {
    if (::lstat(path.c_str(), st) == 0) return true;
    if (why) *why = "lstat " + path + ": " + std::strerror(errno);
    return false;
}

bool Absent(const std::string& path) {
    struct stat st {};
    return ::lstat(path.c_str(), &st) != 0 && errno == ENOENT;
}

}  // namespace nfsrdmad::e2e
