// Small helpers shared by the end-to-end GoogleTest files.
#pragma once

#include <sys/stat.h>

#include <chrono>
#include <cstdint>
#include <string>
#include <thread>

#include <gtest/gtest.h>

#include <nfsc/libnfs-raw-nfs.h>

namespace nfsrdmad::e2e {

// Deterministic pseudo-random bytes (splitmix64 keyed by seed and byte offset), so any range can
// be regenerated independently: Pattern(n, seed, off) == Pattern(off + n, seed, 0).substr(off).
std::string Pattern(size_t n, uint64_t seed, uint64_t offset = 0);
void FillPattern(char* dst, size_t n, uint64_t seed, uint64_t offset);

// NF3REG, NF3DIR, ... for an st_mode.
int FtypeOf(mode_t m);

// Compares the NFS attributes with an lstat() of the same object on the server's disk:
// type, mode (all 12 permission bits), nlink, uid, gid, size, and (if check_times) atime, mtime
// and ctime to the nanosecond.
::testing::AssertionResult AttrMatchesDisk(const fattr3& a, const struct stat& st,
                                           bool check_times);

// lstat() wrapper for use in assertions: false + errno text in *why on failure.
bool Lstat(const std::string& path, struct stat* st, std::string* why = nullptr);
// true iff lstat() fails with ENOENT.
bool Absent(const std::string& path);

// Polls `pred` every 20 ms until it holds (true) or `timeout` passes (false): tests wait
// on a condition, never for a fixed time.
template <typename Pred>
bool WaitFor(Pred pred, std::chrono::milliseconds timeout) {
    const auto deadline = std::chrono::steady_clock::now() + timeout;
    while (!pred()) {
        if (std::chrono::steady_clock::now() > deadline) return false;
        std::this_thread::sleep_for(std::chrono::milliseconds(20));
    }
    return true;
}

}  // namespace nfsrdmad::e2e
