// percall_bench — what one call costs nfsrdmad itself, without a transport (issue 13).
//
// A real Dispatcher with the daemon's programs (MOUNT, NFSv3, NFSv4.1) over an export in a
// fresh temporary directory, fed whole RPC call messages as a transport hands them over
// (AUTH_SYS credential, uid/gid 1000), so each call is decoded, authenticated, dispatched,
// executed against the file system and encoded exactly as it is when served:
//
//   null            NFSv3 NULL: the RPC layer alone
//   v3_getattr      NFSv3 GETATTR of a file
//   v3_read_4k      NFSv3 READ of 4 KiB (the payload read into a pre-allocated buffer, as
//                   the RDMA transport's registered pool gives it)
//   v41_getattr     NFSv4.1 COMPOUND SEQUENCE + PUTFH + GETATTR (the attributes the Linux
//                   client asks for on a revalidation)
//   v3_getattr_nowait, v41_getattr_nowait
//                   the same two answered where they arrive (Dispatcher::dispatch_nowait),
//                   as an RDMA reactor or the TCP loop answers them: the file held by the
//                   descriptor cache after one call through a worker
//   v3_readdirplus  NFSv3 READDIRPLUS of a directory of 100 files from cookie 0, whole in
//                   one reply (as `ls -l` lists it: each entry's handle and attributes)
//   v3_create       one file's life over NFSv3, two calls: CREATE (UNCHECKED, mode 0644)
//                   then REMOVE of it
//   v41_create      the same over NFSv4.1, three COMPOUNDs as the Linux client sends them
//                   for creat(2), close(2), unlink(2): SEQUENCE+PUTFH+OPEN (create)+GETFH+
//                   GETATTR, SEQUENCE+PUTFH+CLOSE, SEQUENCE+PUTFH+REMOVE
//
// The create workloads name files with openat2(2), which valgrind 3.19 does not know, so
// instructions.py counts their system calls only. Namespace changes are durable before the
// reply (a directory fsync each), so on a real disk they measure the disk as well.
//
// Every reply is checked (accept_stat SUCCESS and an OK status); a failing call fails the
// run, so the numbers are never those of an error path.
//
//   percall_bench [google benchmark flags]      time per call (Google Benchmark)
//   percall_bench --calls NAME N                NAME only, N calls, no framework: what
//                                               bench/host/instructions.sh runs under
//                                               callgrind and strace
//   percall_bench --threads T NAME N            T threads making N calls of NAME each on the
//                                               one Dispatcher (an NFSv4.1 workload: each
//                                               thread on a slot of its own, at most 5), calls
//                                               a second in all: what sharing costs across
//                                               cores
#include <benchmark/benchmark.h>
#include <fcntl.h>
#include <ftw.h>
#include <netinet/in.h>
#include <spdlog/spdlog.h>
#include <sys/stat.h>
#include <unistd.h>

#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <functional>
#include <map>
#include <memory>
#include <string>
#include <thread>
#include <vector>

#include "nfs/mount/mount_program.h"
#include "nfs/v3/nfs3_program.h"
#include "nfs/v4/nfs4_program.h"
#include "nfs/vfs/export.h"
#include "nfs/vfs/handle.h"
#include "nfs/vfs/secret.h"
#include "tests/shared/nfs4_ops.h"
#include "transport/rpc/dispatcher.h"
#include "xdr/mount_prot.h"
#include "xdr/nfs3_prot.h"
#include "xdr/nfs4_prot.h"

namespace {

using namespace nfsrdmad;
namespace x3 = xdr::nfs3;
namespace x4 = xdr::nfs4;

constexpr uint32_t kUid = 1000;
constexpr uint32_t kGid = 1000;
constexpr size_t kReadSize = 4096;
constexpr int kListed = 100;  // files in list/ (v3_readdirplus)
// xid, REPLY, MSG_ACCEPTED, verifier AUTH_NONE (flavor, length 0): accept_stat follows.
constexpr size_t kAcceptStatOffset = 20;
constexpr size_t kResultsOffset = 24;
// The NFSv4.1 session's slots (tests/shared/nfs4_ops.h op_create_session), and the first
// one no workload uses (--threads: one a thread from there).
constexpr int kBenchSlots = 8, kFirstThreadSlot = 3;

[[noreturn]] void die(const std::string& why) {
    std::fprintf(stderr, "percall_bench: %s\n", why.c_str());
    std::exit(1);
}

// The payload memory a transport lends a READ: one region, reused (the RDMA transport's
// registered pool; no allocation of the data itself per call).
class PoolBuffer final : public rpc::PayloadBuffer {
  public:
    PoolBuffer(uint8_t* p, size_t n) : p_(p), n_(n) {}
    uint8_t* data() override { return p_; }
    size_t capacity() const override { return n_; }

  private:
    uint8_t* p_;
    size_t n_;
};

class PoolAllocator final : public rpc::PayloadAllocator {
  public:
    std::unique_ptr<rpc::PayloadBuffer> allocate(size_t bytes) override {
        if (bytes > region_.size()) return nullptr;
        return std::make_unique<PoolBuffer>(region_.data(), bytes);
    }

  private:
    std::vector<uint8_t> region_ = std::vector<uint8_t>(1 << 20);
};

void put_u32(std::vector<uint8_t>& b, size_t at, uint32_t v) {
    b[at] = uint8_t(v >> 24);
    b[at + 1] = uint8_t(v >> 16);
    b[at + 2] = uint8_t(v >> 8);
    b[at + 3] = uint8_t(v);
}

uint32_t get_u32(const std::vector<uint8_t>& b, size_t at) {
    if (at + 4 > b.size()) return ~0u;
    return uint32_t(b[at]) << 24 | uint32_t(b[at + 1]) << 16 | uint32_t(b[at + 2]) << 8 | b[at + 3];
}

// An RPC call message (RFC 5531 §9) with an AUTH_SYS credential (appendix A).
std::vector<uint8_t> call_message(uint32_t xid, uint32_t prog, uint32_t vers, uint32_t proc,
                                  const std::vector<uint8_t>& args) {
    std::vector<uint8_t> m;
    xdr::Encoder e(m);
    e.put_u32(xid);
    e.put_u32(0);  // CALL
    e.put_u32(2);  // rpcvers
    e.put_u32(prog);
    e.put_u32(vers);
    e.put_u32(proc);
    std::vector<uint8_t> cred;
    xdr::Encoder c(cred);
    c.put_u32(0);  // stamp
    const std::string machine = "bench";
    c.put_u32(static_cast<uint32_t>(machine.size()));
    c.put_fixed(reinterpret_cast<const uint8_t*>(machine.data()), machine.size());
    c.put_u32(kUid);
    c.put_u32(kGid);
    c.put_u32(1);  // one supplementary group
    c.put_u32(kGid);
    e.put_u32(1);  // AUTH_SYS
    e.put_u32(static_cast<uint32_t>(cred.size()));
    e.put_fixed(cred.data(), cred.size());
    e.put_u32(0);  // verifier AUTH_NONE
    e.put_u32(0);
    m.insert(m.end(), args.begin(), args.end());
    return m;
}

template <typename T>
std::vector<uint8_t> encode(const T& v) {
    std::vector<uint8_t> b;
    xdr::Encoder e(b);
    xdr_encode(e, v);
    return b;
}

// The daemon's programs over BASE/export, BASE a fresh directory removed at exit.
class Server {
  public:
    Server() {
        char tmpl[] = "/tmp/nfsrdmad_percall.XXXXXX";
        if (!::mkdtemp(tmpl)) die("mkdtemp failed");
        base_ = tmpl;
        export_ = base_ + "/export";
        const std::string state = base_ + "/state";
        if (::mkdir(export_.c_str(), 0777) != 0 || ::chmod(export_.c_str(), 0777) != 0 ||
            ::mkdir(state.c_str(), 0700) != 0)
            die("cannot make " + export_);
        int fd = ::open((export_ + "/file").c_str(), O_CREAT | O_WRONLY, 0644);
        if (fd < 0) die("cannot create the file");
        std::vector<char> data(1 << 20, 'x');
        if (::write(fd, data.data(), data.size()) != static_cast<ssize_t>(data.size()))
            die("cannot write the file");
        ::close(fd);
        if (::geteuid() == 0 && ::chown((export_ + "/file").c_str(), kUid, kGid) != 0)
            die("cannot chown the file");
        if (::mkdir((export_ + "/list").c_str(), 0755) != 0) die("cannot make list/");
        for (int i = 0; i < kListed; ++i) {
            vfs::UniqueFd f(::open((export_ + "/list/e" + std::to_string(i)).c_str(),
                                   O_CREAT | O_WRONLY | O_CLOEXEC, 0644));
            if (!f) die("cannot make list/e" + std::to_string(i));
        }

        std::string why;
        auto key = vfs::load_or_create_handle_key(state, &why);
        if (!key) die("handle key: " + why);
        vfs::ClientRule rule;  // as the daemon reads `clients: [{host: "*", options: rw}]`
        rule.read_write = true;
        rule.secure = false;
        vfs::ExportSpec spec{export_, 0, {rule}};
        spec.stats_slot = dispatcher_.export_stats().slot_for(export_);
        auto table = vfs::ExportTable::create({spec}, *key, &why);
        if (!table) die("export: " + why);
        registry_ = std::make_shared<vfs::ExportRegistry>(*table);
        auto files = std::make_shared<vfs::FdCache>();
        dispatcher_.add(std::make_shared<nfs::mount::MountProgram>(registry_));
        dispatcher_.add(std::make_shared<nfs::v3::Nfs3Program>(registry_, files));
        nfs::v4::Options o;
        o.files = files;
        dispatcher_.add(std::make_shared<nfs::v4::Nfs4Program>(registry_, o));

        peer_.text = "127.0.0.1:700";
        peer_.addr.ss_family = AF_INET;
        auto* in = reinterpret_cast<sockaddr_in*>(&peer_.addr);
        in->sin_port = htons(700);
        in->sin_addr.s_addr = htonl(INADDR_LOOPBACK);
        peer_.len = sizeof(sockaddr_in);
        peer_.conn = rpc::next_connection_id();
    }
    ~Server() {
        ::nftw(
            base_.c_str(), [](const char* p, const struct stat*, int, FTW*) { return ::remove(p); },
            16, FTW_DEPTH | FTW_PHYS);
    }
    Server(const Server&) = delete;
    Server& operator=(const Server&) = delete;

    // One call; the reply's inline bytes (empty: no reply).
    std::vector<uint8_t> call(const std::vector<uint8_t>& msg, size_t* payload = nullptr) {
        rpc::Message m;
        m.bytes = msg;
        auto r = dispatcher_.dispatch(m, peer_, alloc_);
        if (!r) return {};
        if (payload) {
            *payload = 0;
            for (const auto& p : r->payloads) *payload += p.data.size();
        }
        return std::move(r->bytes);
    }
    // One call answered where it arrives, as an RDMA reactor or the TCP loop answers it
    // (Dispatcher::dispatch_nowait); empty when it was not (declined, or given up to a worker).
    std::vector<uint8_t> call_nowait(const std::vector<uint8_t>& msg) {
        rpc::Message m;
        m.bytes = msg;
        std::optional<rpc::Reply> r;
        if (!dispatcher_.dispatch_nowait(m, peer_, alloc_, r) || !r) return {};
        return std::move(r->bytes);
    }
    std::vector<uint8_t> call(uint32_t prog, uint32_t vers, uint32_t proc,
                              const std::vector<uint8_t>& args) {
        return call(call_message(++xid_, prog, vers, proc, args));
    }

    const std::string& export_path() const { return export_; }

    // The wire handle of `name` in the export.
    std::vector<uint8_t> handle_of(const std::string& name) const {
        vfs::UniqueFd fd(::open((export_ + "/" + name).c_str(), O_RDONLY | O_CLOEXEC));
        if (!fd) die("cannot open " + name);
        auto kernel = vfs::kernel_handle_of(fd.get());
        if (!kernel) die("no handle for " + name);
        const auto h = registry_->snapshot()->exports().at(0)->encode(*kernel);
        return {h.data().begin(), h.data().end()};
    }

  private:
    std::string base_, export_;
    rpc::Dispatcher dispatcher_;
    std::shared_ptr<vfs::ExportRegistry> registry_;
    rpc::Peer peer_;
    PoolAllocator alloc_;
    uint32_t xid_ = 0;
};

// The results of an accepted, successful call: the bytes after the reply header.
xdr::Decoder results(const std::vector<uint8_t>& reply, const char* what) {
    if (get_u32(reply, kAcceptStatOffset) != 0) die(std::string(what) + ": call not accepted");
    return xdr::Decoder(std::span<const uint8_t>(reply).subspan(kResultsOffset));
}

// A COMPOUND of NFSv4.1 operations that must succeed; its results point into `reply`.
x4::COMPOUND4res compound(Server& s, std::vector<x4::nfs_argop4> ops, const char* what,
                          std::vector<uint8_t>& reply) {
    x4::COMPOUND4args c;
    c.minorversion = 1;
    c.argarray = std::move(ops);
    reply = s.call(x4::NFS4_PROGRAM, 4, x4::NFSPROC4_COMPOUND, encode(c));
    auto d = results(reply, what);
    x4::COMPOUND4res res;
    if (!x4::xdr_decode(d, res) || res.status != x4::NFS4_OK) die(std::string(what) + " failed");
    return res;
}

// One kind of call, set up once, then sent again and again.
struct Workload {
    std::vector<uint8_t> msg;
    size_t seqid_offset = 0;  // NFSv4.1: where SEQUENCE's sa_sequenceid is; 0: none
    uint32_t seqid = 0;
    bool has_status = true;  // the results start with an nfsstat3/nfsstat4
    bool nowait = false;     // answered in place (Server::call_nowait), or it fails
    size_t payload = 0;      // out-of-line bytes each reply must carry
    // When set, one iteration is this (several calls) instead of sending `msg`.
    std::function<bool(Server&)> cycle;

    // One call; false when its reply is not a success.
    bool run(Server& s) {
        if (cycle) return cycle(s);
        if (seqid_offset) put_u32(msg, seqid_offset, ++seqid);
        size_t got = 0;
        const auto reply = nowait ? s.call_nowait(msg) : s.call(msg, &got);
        if (get_u32(reply, kAcceptStatOffset) != 0) return false;
        if (has_status && get_u32(reply, kResultsOffset) != 0) return false;
        return got == payload;
    }
};

struct Setup {
    std::vector<uint8_t> fh;  // the file's handle (NFSv3 and NFSv4.1 share them)
    std::map<std::string, Workload> workloads;
};

Setup prepare(Server& s) {
    Setup out;
    // MOUNT MNT of the export, then NFSv3 LOOKUP of the file.
    std::vector<uint8_t> path;
    {
        xdr::Encoder e(path);
        e.put_u32(static_cast<uint32_t>(s.export_path().size()));
        e.put_fixed(reinterpret_cast<const uint8_t*>(s.export_path().data()),
                    s.export_path().size());
    }
    const auto mnt = s.call(xdr::mount::MOUNT_PROGRAM, 3, xdr::mount::MOUNTPROC3_MNT, path);
    auto md = results(mnt, "MOUNT MNT");
    xdr::mount::mountres3 mr;
    if (!xdr::mount::xdr_decode(md, mr) || mr.fhs_status() != xdr::mount::MNT3_OK)
        die("MOUNT MNT failed");
    const std::vector<uint8_t> root(mr.mountinfo().fhandle.begin(), mr.mountinfo().fhandle.end());

    // The file's handle as LOOKUP would give it (not asked by LOOKUP: it resolves names
    // with openat2(2), which valgrind 3.19 does not know, and instructions.py runs this
    // under valgrind).
    out.fh = s.handle_of("file");
    if (out.fh.size() != root.size()) die("the file's handle and the root's differ in length");

    Workload null;
    null.msg = call_message(1, x3::NFS_PROGRAM, 3, x3::NFSPROC3_NULL, {});
    null.has_status = false;
    out.workloads["null"] = null;

    x3::GETATTR3args ga;
    ga.object.data = out.fh;
    Workload getattr;
    getattr.msg = call_message(2, x3::NFS_PROGRAM, 3, x3::NFSPROC3_GETATTR, encode(ga));
    out.workloads["v3_getattr"] = getattr;

    x3::READ3args ra;
    ra.file.data = out.fh;
    ra.offset = 8192;
    ra.count = kReadSize;
    Workload read;
    read.msg = call_message(3, x3::NFS_PROGRAM, 3, x3::NFSPROC3_READ, encode(ra));
    read.payload = kReadSize;
    out.workloads["v3_read_4k"] = read;

    x3::READDIRPLUS3args rdp;
    const auto list_fh = s.handle_of("list");
    rdp.dir.data = list_fh;
    rdp.cookie = 0;
    rdp.dircount = 64 << 10;
    rdp.maxcount = 64 << 10;
    Workload readdirplus;
    readdirplus.msg = call_message(8, x3::NFS_PROGRAM, 3, x3::NFSPROC3_READDIRPLUS, encode(rdp));
    out.workloads["v3_readdirplus"] = readdirplus;

    // NFSv4.1: EXCHANGE_ID, CREATE_SESSION, then SEQUENCE + PUTFH + GETATTR on slot 0.
    static const char kOwner[] = "percall-bench";
    std::vector<uint8_t> kept1, kept2;  // the replies the decoded results point into
    const auto res1 = compound(
        s,
        {test_nfs4::op_exchange_id({reinterpret_cast<const uint8_t*>(kOwner), sizeof kOwner - 1})},
        "EXCHANGE_ID", kept1);
    const auto& er = res1.resarray.at(0).opexchange_id().eir_resok4();
    const auto res2 =
        compound(s, {test_nfs4::op_create_session(er.eir_clientid, er.eir_sequenceid)},
                 "CREATE_SESSION", kept2);
    const auto sessionid = res2.resarray.at(0).opcreate_session().csr_resok4().csr_sessionid;
    // RECLAIM_COMPLETE before any OPEN (RFC 8881 §18.51.3), on slot 1 (v41_create's, whose
    // sequence IDs then go on from 1).
    {
        x4::nfs_argop4 rc_seq(x4::OP_SEQUENCE);
        rc_seq.opsequence().sa_sessionid = sessionid;
        rc_seq.opsequence().sa_sequenceid = 1;
        rc_seq.opsequence().sa_slotid = 1;
        rc_seq.opsequence().sa_highest_slotid = 1;
        std::vector<uint8_t> kept3;
        compound(s, {rc_seq, test_nfs4::op_reclaim_complete()}, "RECLAIM_COMPLETE", kept3);
    }

    x4::nfs_argop4 seq(x4::OP_SEQUENCE);
    auto& sa = seq.opsequence();
    sa.sa_sessionid = sessionid;
    sa.sa_sequenceid = 0;  // patched per call
    sa.sa_slotid = 0;
    sa.sa_highest_slotid = 0;
    sa.sa_cachethis = false;
    // What the Linux client asks for when it revalidates a file (nfs4_fattr_bitmap).
    auto getattr4 = test_nfs4::op_getattr(
        {x4::FATTR4_TYPE, x4::FATTR4_CHANGE, x4::FATTR4_SIZE, x4::FATTR4_FSID, x4::FATTR4_FILEID,
         x4::FATTR4_MODE, x4::FATTR4_NUMLINKS, x4::FATTR4_OWNER, x4::FATTR4_OWNER_GROUP,
         x4::FATTR4_RAWDEV, x4::FATTR4_SPACE_USED, x4::FATTR4_TIME_ACCESS, x4::FATTR4_TIME_METADATA,
         x4::FATTR4_TIME_MODIFY, x4::FATTR4_MOUNTED_ON_FILEID});
    x4::COMPOUND4args c3;
    c3.minorversion = 1;
    c3.argarray = {seq, test_nfs4::op_putfh(out.fh), getattr4};
    Workload v41;
    const auto header = call_message(4, x4::NFS4_PROGRAM, 4, x4::NFSPROC4_COMPOUND, {});
    v41.msg = call_message(4, x4::NFS4_PROGRAM, 4, x4::NFSPROC4_COMPOUND, encode(c3));
    // COMPOUND4args: tag (empty: 4), minorversion (4), argarray count (4), then SEQUENCE:
    // opcode (4), sessionid (16), sa_sequenceid.
    v41.seqid_offset = header.size() + 4 + 4 + 4 + 4 + 16;
    if (get_u32(v41.msg, v41.seqid_offset) != 0 ||
        get_u32(v41.msg, v41.seqid_offset - 20) != x4::OP_SEQUENCE)
        die("SEQUENCE is not where it was expected");
    out.workloads["v41_getattr"] = v41;

    // The same two GETATTRs as an RDMA reactor or the TCP loop answers them: no worker,
    // the file's descriptor held by the cache (the calls above put it there). The NFSv4.1
    // one on slot 2 of the session, whose sequence IDs are its own.
    Workload getattr_nowait = out.workloads["v3_getattr"];
    getattr_nowait.nowait = true;
    out.workloads["v3_getattr_nowait"] = getattr_nowait;
    sa.sa_slotid = 2;
    sa.sa_highest_slotid = 2;
    c3.argarray = {seq, test_nfs4::op_putfh(out.fh), getattr4};
    Workload v41_nowait = v41;
    v41_nowait.msg = call_message(7, x4::NFS4_PROGRAM, 4, x4::NFSPROC4_COMPOUND, encode(c3));
    v41_nowait.nowait = true;
    out.workloads["v41_getattr_nowait"] = v41_nowait;

    // NFSv3: CREATE then REMOVE of one name in the export's root.
    {
        static const char kName[] = "created";
        x3::CREATE3args ca;
        ca.where.dir.data = root;
        ca.where.name = kName;
        ca.how.set_mode(x3::UNCHECKED);
        ca.how.obj_attributes().mode.set_set_it(true).mode() = 0644;
        x3::REMOVE3args rm;
        rm.object.dir.data = root;
        rm.object.name = kName;
        Workload create;
        // A new xid per call: CREATE and REMOVE are not idempotent, and a repeated xid
        // would be answered from the duplicate request cache.
        create.cycle = [create_msg =
                            call_message(5, x3::NFS_PROGRAM, 3, x3::NFSPROC3_CREATE, encode(ca)),
                        remove_msg =
                            call_message(6, x3::NFS_PROGRAM, 3, x3::NFSPROC3_REMOVE, encode(rm)),
                        xid = uint32_t{1000}](Server& srv) mutable {
            for (auto* m : {&create_msg, &remove_msg}) {
                ++xid;
                for (int i = 0; i < 4; ++i) (*m)[i] = uint8_t(xid >> (24 - 8 * i));
                const auto reply = srv.call(*m);
                if (get_u32(reply, kAcceptStatOffset) != 0 || get_u32(reply, kResultsOffset) != 0)
                    return false;
            }
            return true;
        };
        out.workloads["v3_create"] = std::move(create);
    }

    // NFSv4.1 on slot 1 of the session (slot 0 is v41_getattr's): OPEN (create), CLOSE of
    // the stateid it gave, REMOVE.
    {
        static const char kName[] = "created4";
        static const char kOpenOwner[] = "percall-open-owner";
        const std::span<const uint8_t> name(reinterpret_cast<const uint8_t*>(kName),
                                            sizeof kName - 1);
        const std::span<const uint8_t> owner(reinterpret_cast<const uint8_t*>(kOpenOwner),
                                             sizeof kOpenOwner - 1);
        auto seqid = std::make_shared<uint32_t>(1);  // the RECLAIM_COMPLETE's above
        Workload create;
        create.cycle = [sessionid, seqid, root, name, owner, getattr4](Server& srv) {
            auto send = [&](std::vector<x4::nfs_argop4> ops, x4::COMPOUND4res& res,
                            std::vector<uint8_t>& reply) {
                x4::nfs_argop4 seq(x4::OP_SEQUENCE);
                auto& sa = seq.opsequence();
                sa.sa_sessionid = sessionid;
                sa.sa_sequenceid = ++*seqid;
                sa.sa_slotid = 1;
                sa.sa_highest_slotid = 1;
                sa.sa_cachethis = false;
                x4::COMPOUND4args c;
                c.minorversion = 1;
                c.argarray = {seq};
                c.argarray.insert(c.argarray.end(), ops.begin(), ops.end());
                reply = srv.call(x4::NFS4_PROGRAM, 4, x4::NFSPROC4_COMPOUND, encode(c));
                if (get_u32(reply, kAcceptStatOffset) != 0) return false;
                auto d = xdr::Decoder(std::span<const uint8_t>(reply).subspan(kResultsOffset));
                return x4::xdr_decode(d, res) && res.status == x4::NFS4_OK;
            };
            std::vector<uint8_t> r1, r2, r3;
            x4::COMPOUND4res open, close, remove;
            if (!send({test_nfs4::op_putfh(root),
                       test_nfs4::op_open(owner, name, true, x4::OPEN4_SHARE_ACCESS_BOTH),
                       test_nfs4::op_getfh(), getattr4},
                      open, r1))
                return false;
            const auto fh = open.resarray.at(3).opgetfh().resok4().object;
            const auto sid = open.resarray.at(2).opopen().resok4().stateid;
            if (!send({test_nfs4::op_putfh(fh), test_nfs4::op_close(sid)}, close, r2)) return false;
            x4::nfs_argop4 rm(x4::OP_REMOVE);
            rm.opremove().target = name;
            return send({test_nfs4::op_putfh(root), rm}, remove, r3);
        };
        out.workloads["v41_create"] = std::move(create);
    }

    return out;
}

bool failed = false;

// A nowait workload's file is held by the descriptor cache once a worker resolved it: one
// call through a worker first, as the client's first GETATTR of a file goes.
bool warm_up(Workload& w, Server& s) {
    if (!w.nowait) return true;
    w.nowait = false;
    const bool ok = w.run(s);
    w.nowait = true;
    return ok;
}

}  // namespace

int main(int argc, char** argv) {
    spdlog::set_level(spdlog::level::warn);
    Server server;
    Setup setup = prepare(server);

    if (argc == 5 && std::strcmp(argv[1], "--threads") == 0) {
        auto it = setup.workloads.find(argv[3]);
        if (it == setup.workloads.end()) die(std::string("no workload ") + argv[3]);
        if (it->second.cycle) die(std::string(argv[3]) + ": one thread only (several calls)");
        const int threads = std::atoi(argv[2]);
        const long n = std::atol(argv[4]);
        if (threads < 1 || n < 1) die("--threads T NAME N: T and N at least 1");
        if (!warm_up(it->second, server)) die(std::string(argv[3]) + ": the first call failed");
        // NFSv4.1: each thread on a slot of its own, as a client's concurrent calls go;
        // slots 0-2 are the other workloads', and the session has kBenchSlots.
        std::vector<Workload> per_thread(static_cast<size_t>(threads), it->second);
        if (it->second.seqid_offset) {
            if (kFirstThreadSlot + threads > kBenchSlots)
                die("--threads: an NFSv4.1 workload runs on at most " +
                    std::to_string(kBenchSlots - kFirstThreadSlot) + " threads");
            for (int t = 0; t < threads; ++t) {
                Workload& w = per_thread[static_cast<size_t>(t)];
                w.seqid = 0;                                               // a slot not used before
                put_u32(w.msg, w.seqid_offset + 4, kFirstThreadSlot + t);  // sa_slotid
                put_u32(w.msg, w.seqid_offset + 8, kFirstThreadSlot + t);  // sa_highest_slotid
            }
        }
        std::vector<std::thread> running;
        const auto start = std::chrono::steady_clock::now();
        for (int t = 0; t < threads; ++t)
            running.emplace_back([&server, n, &w = per_thread[static_cast<size_t>(t)]] {
                for (long i = 0; i < n; ++i)
                    if (!w.run(server)) die("a call failed");
            });
        for (auto& t : running) t.join();
        const std::chrono::duration<double> took = std::chrono::steady_clock::now() - start;
        std::printf("%s threads %d calls/s %.0f\n", argv[3], threads,
                    static_cast<double>(n) * threads / took.count());
        return 0;
    }
    if (argc == 4 && std::strcmp(argv[1], "--calls") == 0) {
        auto it = setup.workloads.find(argv[2]);
        if (it == setup.workloads.end()) die(std::string("no workload ") + argv[2]);
        // Only this workload runs (under valgrind, the create workloads cannot).
        const long n = std::atol(argv[3]);
        if (!warm_up(it->second, server)) die(std::string(argv[2]) + ": the first call failed");
        for (long i = 0; i < n; ++i)
            if (!it->second.run(server)) die(std::string(argv[2]) + ": a call failed");
        return 0;
    }

    for (auto& [name, w] : setup.workloads)
        if (!warm_up(w, server) || !w.run(server)) die(name + ": the first call failed");
    for (auto& [name, w] : setup.workloads) {
        Workload* work = &w;
        benchmark::RegisterBenchmark(name.c_str(), [work, &server](benchmark::State& st) {
            for (auto _ : st) {
                if (!work->run(server)) {
                    failed = true;
                    st.SkipWithError("a call failed");
                    break;
                }
            }
        });
    }
    benchmark::Initialize(&argc, argv);
    if (benchmark::ReportUnrecognizedArguments(argc, argv)) return 1;
    benchmark::RunSpecifiedBenchmarks();
    benchmark::Shutdown();
    return failed ? 1 : 0;
}
