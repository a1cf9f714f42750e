// nfs3_calls_util.h — NFSv3 calls run in-process through the daemon's own Dispatcher and
// Nfs3Program over an export in a temporary directory (rpc_nowait_test, nfs3_procs_test):
// whole RPC call messages as a transport hands them over, AUTH_SYS uid/gid 1000.
#pragma once

#include <fcntl.h>
#include <ftw.h>
#include <gtest/gtest.h>
#include <netinet/in.h>
#include <sys/stat.h>
#include <unistd.h>

#include <span>
#include <stdexcept>
#include <string>
#include <vector>

#include "nfs/v3/nfs3_program.h"
#include "nfs/vfs/export.h"
#include "nfs/vfs/fd_cache.h"
#include "nfs/vfs/handle.h"
#include "nfs/vfs/secret.h"
#include "transport/rpc/dispatcher.h"

namespace nfsrdmad::testing {

inline void put(std::vector<uint8_t>& b, uint32_t w) {
    for (int s = 24; s >= 0; s -= 8) b.push_back(uint8_t(w >> s));
}

inline void put_opaque(std::vector<uint8_t>& b, std::span<const uint8_t> data) {
    put(b, uint32_t(data.size()));
    b.insert(b.end(), data.begin(), data.end());
    while (b.size() % 4) b.push_back(0);
}

// A call with an AUTH_SYS credential for uid/gid 1000 (flavor 1), or `flavor` with an
// empty body; the arguments follow.
inline std::vector<uint8_t> call(uint32_t xid, uint32_t prog, uint32_t vers, uint32_t proc,
                          const std::vector<uint8_t>& args, uint32_t flavor = 1) {
    std::vector<uint8_t> b;
    for (uint32_t w : {xid, 0u, 2u, prog, vers, proc, flavor}) put(b, w);
    if (flavor == 1) {
        put(b, 20);
        for (uint32_t w : {0u, 0u, 1000u, 1000u, 0u}) put(b, w);  // stamp, "", uid, gid, gids
    } else {
        put(b, 0);
    }
    put(b, 0);  // verifier: AUTH_NONE
    put(b, 0);
    b.insert(b.end(), args.begin(), args.end());
    return b;
}

inline uint32_t word_at(const std::vector<uint8_t>& b, size_t off) {
    return uint32_t(b.at(off)) << 24 | uint32_t(b.at(off + 1)) << 16 |
           uint32_t(b.at(off + 2)) << 8 | b.at(off + 3);
}

// accept_stat of an accepted reply with an AUTH_NONE verifier.
inline uint32_t accept_stat(const rpc::Reply& r) {
    return word_at(r.bytes, 20);
}

class HeapBuffer : public rpc::PayloadBuffer {
  public:
    HeapBuffer(size_t n, int pipe) : bytes_(n), pipe_(pipe) {}
    uint8_t* data() override { return bytes_.data(); }
    size_t capacity() const override { return bytes_.size(); }
    int splice_fd() override { return pipe_; }

  private:
    std::vector<uint8_t> bytes_;
    int pipe_;
};

class HeapAlloc : public rpc::PayloadAllocator {
  public:
    std::unique_ptr<rpc::PayloadBuffer> allocate(size_t bytes) override {
        if (none) return nullptr;
        return std::make_unique<HeapBuffer>(bytes, pipe);
    }
    int pipe = -1;      // >= 0: buffers offer a pipe to splice into (as TCP's)
    bool none = false;  // none free (RDMA's registered pool, all in flight)
};

// A dispatcher serving one test program P, and a peer to call it from.
template <class P>
struct OneProgram : ::testing::Test {
    OneProgram() : prog(std::make_shared<P>()) {
        d.add(prog);
        peer.text = "192.0.2.1:800";
    }
    // Calls the dispatcher's per-procedure tables recorded (answered).
    uint64_t recorded() const {
        uint64_t n = 0;
        for (const auto& s : d.registry().stats())
            for (const auto& op : s->snapshot().ops) n += op.calls;
        return n;
    }
    std::shared_ptr<P> prog;
    rpc::Dispatcher d;
    rpc::Peer peer;
    HeapAlloc alloc;
    uint32_t xid = 0;
};

inline constexpr uint32_t kNfs = 100003;
inline constexpr uint32_t kGetattr = 1, kLookup = 3, kAccess = 4, kRead = 6;
inline constexpr size_t kFileSize = 64 << 10;

// NFSv3 over an export in a temporary directory on the test's file system, which must be a
// local one (Export::local): the test says so loudly otherwise.
struct Nfs3Fixture : ::testing::Test {
    Nfs3Fixture() {
        char tmpl[] = "/var/tmp/nfsrdmad_nowait.XXXXXX";
        if (!::mkdtemp(tmpl)) throw std::runtime_error("mkdtemp");
        base = tmpl;
        ::mkdir((base + "/export").c_str(), 0777);
        ::chmod((base + "/export").c_str(), 0777);
        ::mkdir((base + "/state").c_str(), 0700);
        const std::string file = base + "/export/file";
        int fd = ::open(file.c_str(), O_CREAT | O_WRONLY, 0644);
        std::vector<uint8_t> data(kFileSize);
        for (size_t i = 0; i < data.size(); ++i) data[i] = uint8_t(i * 7);
        EXPECT_EQ(::write(fd, data.data(), data.size()), ssize_t(data.size()));
        ::fsync(fd);
        ::close(fd);
        std::string why;
        auto key = vfs::load_or_create_handle_key(base + "/state", &why);
        if (!key) throw std::runtime_error(why);
        vfs::ClientRule rule;
        rule.read_write = true;
        rule.secure = false;
        auto table =
            vfs::ExportTable::create({vfs::ExportSpec{base + "/export", 0, {rule}}}, *key, &why);
        if (!table) throw std::runtime_error(why);
        local = (*table)->exports().at(0)->local();
        registry = std::make_shared<vfs::ExportRegistry>(*table);
        files = std::make_shared<vfs::FdCache>();
        v3 = std::make_shared<nfs::v3::Nfs3Program>(registry, files);
        d.add(v3);
        peer.text = "127.0.0.1:700";
        peer.addr.ss_family = AF_INET;
        auto* in = reinterpret_cast<sockaddr_in*>(&peer.addr);
        in->sin_port = htons(700);
        in->sin_addr.s_addr = htonl(INADDR_LOOPBACK);
        peer.len = sizeof(sockaddr_in);
    }
    ~Nfs3Fixture() override {
        ::nftw(
            base.c_str(), [](const char* p, const struct stat*, int, FTW*) { return ::remove(p); },
            16, FTW_DEPTH | FTW_PHYS);
    }
    std::vector<uint8_t> handle(const std::string& name) {
        int fd = ::open((base + "/export/" + name).c_str(), O_RDONLY | O_CLOEXEC);
        auto kernel = vfs::kernel_handle_of(fd);
        ::close(fd);
        if (!kernel) throw std::runtime_error("no handle");
        auto h = registry->snapshot()->exports().at(0)->encode(*kernel);
        return {h.data().begin(), h.data().end()};
    }
    std::vector<uint8_t> fh_args(const std::string& name) {
        std::vector<uint8_t> a;
        put_opaque(a, handle(name));
        return a;
    }
    std::vector<uint8_t> lookup_args(const std::string& dir, const std::string& name) {
        auto a = fh_args(dir);
        put_opaque(a, {reinterpret_cast<const uint8_t*>(name.data()), name.size()});
        return a;
    }
    std::vector<uint8_t> read_args(const std::string& name, uint64_t offset, uint32_t count) {
        auto a = fh_args(name);
        put(a, uint32_t(offset >> 32));
        put(a, uint32_t(offset));
        put(a, count);
        return a;
    }
    // nowait: true when answered; `out` the reply. Otherwise the call as a worker runs it.
    bool run(uint32_t proc, const std::vector<uint8_t>& args, bool nowait,
             std::optional<rpc::Reply>& out) {
        auto bytes = call(++xid, kNfs, 3, proc, args);
        rpc::Message m;
        m.bytes = bytes;
        if (nowait) return d.dispatch_nowait(m, peer, alloc, out);
        out = d.dispatch(m, peer, alloc);
        return true;
    }
    static uint32_t nfsstat(const rpc::Reply& r) { return word_at(r.bytes, 24); }

    std::string base;
    bool local = false;
    std::shared_ptr<vfs::ExportRegistry> registry;
    std::shared_ptr<vfs::FdCache> files;
    std::shared_ptr<nfs::v3::Nfs3Program> v3;
    rpc::Dispatcher d;
    rpc::Peer peer;
    HeapAlloc alloc;
    uint32_t xid = 0;
};

}  // namespace nfsrdmad::testing
