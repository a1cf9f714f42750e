// io_floor - the floor of a server's CPU per GiB moved (issue 13): what it costs the CPU to
// move the same bytes between a file and a registered buffer with nothing else around it,
// no RPC, no transport. bench/vm/guest-bench.sh runs it in the guest beside each RDMA data
// job and table.py prints nfsrdmad's CPU seconds per GiB over it.
//
//   io_floor read  FILE BYTES [OPTIONS]   pread FILE into the buffer in chunks, round and
//                  round, until BYTES were read
//   io_floor write FILE BYTES [OPTIONS]   pwrite the buffer into FILE, at offsets going round
//                  a file of at most 128 MiB, until BYTES were written, then fsync (a COMMIT)
//   --chunk N      bytes per pread/pwrite (1 MiB)
//   --dev NAME     the verbs device whose protection domain registers the buffer (default:
//                  the first one); --plain: no registration (a host without RDMA devices)
//   --wire GID     also move each chunk over the device, as the server's data path does: an
//                  RDMA Write of what was read to a second queue pair of this process (a
//                  READ reply's write chunk), an RDMA Read from it before each pwrite (a
//                  WRITE's read chunk). GID is the port's RoCE GID index. On Soft-RoCE the
//                  device's work (copies, CRCs) is done by the CPU, in the poster's system
//                  call for an RDMA Write and in a softirq for an RDMA Read, as it is for
//                  nfsrdmad; this floor pays it the same way. Completions are waited for
//                  through a completion channel (no polling).
//
// The buffer is what nfsrdmad reads into for an RDMA Write (nfs/vfs/io.cpp: pread into a
// registered payload buffer) and writes from after an RDMA Read. Prints one JSON object:
// bytes, CPU seconds (user + system, getrusage), wall seconds, CPU seconds per GiB.
#include <fcntl.h>
#include <infiniband/verbs.h>
#include <sys/resource.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <string>
#include <vector>

namespace {

[[noreturn]] void die(const std::string& what) {
    std::fprintf(stderr, "io_floor: %s\n", what.c_str());
    std::exit(2);
}

double cpu_seconds() {
    rusage ru{};
    getrusage(RUSAGE_SELF, &ru);
    auto s = [](const timeval& t) {
        return static_cast<double>(t.tv_sec) + static_cast<double>(t.tv_usec) / 1e6;
    };
    return s(ru.ru_utime) + s(ru.ru_stime);
}

// The buffer, registered with a device's protection domain unless --plain; with --wire, a
// pair of connected RC queue pairs on the device and the peer's buffer.
class Floor {
  public:
    Floor(size_t size, const std::string& dev, bool plain, int wire_gid) : bytes_(size) {
        if (plain) return;
        int n = 0;
        devices_ = ibv_get_device_list(&n);
        if (devices_ == nullptr || n == 0)
            die("no RDMA device (run in the VM after rxe_setup, or pass --plain)");
        ibv_device* chosen = nullptr;
        for (int i = 0; i < n && chosen == nullptr; ++i)
            if (dev.empty() || dev == ibv_get_device_name(devices_[i])) chosen = devices_[i];
        if (chosen == nullptr) die("no RDMA device named " + dev);
        ctx_ = ibv_open_device(chosen);
        if (ctx_ == nullptr) die("ibv_open_device failed");
        pd_ = ibv_alloc_pd(ctx_);
        if (pd_ == nullptr) die("ibv_alloc_pd failed");
        constexpr int kAccess =
            IBV_ACCESS_LOCAL_WRITE | IBV_ACCESS_REMOTE_WRITE | IBV_ACCESS_REMOTE_READ;
        mr_ = ibv_reg_mr(pd_, bytes_.data(), bytes_.size(), kAccess);
        if (mr_ == nullptr) die(std::string("ibv_reg_mr failed: ") + std::strerror(errno));
        if (wire_gid < 0) return;
        peer_bytes_.assign(size, 0x5a);
        peer_mr_ = ibv_reg_mr(pd_, peer_bytes_.data(), peer_bytes_.size(), kAccess);
        if (peer_mr_ == nullptr)
            die(std::string("ibv_reg_mr (peer) failed: ") + std::strerror(errno));
        channel_ = ibv_create_comp_channel(ctx_);
        if (channel_ == nullptr) die("ibv_create_comp_channel failed");
        cq_ = ibv_create_cq(ctx_, 4, nullptr, channel_, 0);
        peer_cq_ = ibv_create_cq(ctx_, 4, nullptr, nullptr, 0);
        if (cq_ == nullptr || peer_cq_ == nullptr) die("ibv_create_cq failed");
        qp_ = make_qp(cq_);
        peer_qp_ = make_qp(peer_cq_);
        ibv_port_attr port{};
        if (ibv_query_port(ctx_, 1, &port) != 0) die("ibv_query_port failed");
        ibv_gid gid{};
        if (ibv_query_gid(ctx_, 1, wire_gid, &gid) != 0) die("ibv_query_gid failed");
        connect(qp_, peer_qp_->qp_num, gid, wire_gid, port.active_mtu);
        connect(peer_qp_, qp_->qp_num, gid, wire_gid, port.active_mtu);
    }
    ~Floor() {
        if (qp_ != nullptr) ibv_destroy_qp(qp_);
        if (peer_qp_ != nullptr) ibv_destroy_qp(peer_qp_);
        if (cq_ != nullptr) ibv_destroy_cq(cq_);
        if (peer_cq_ != nullptr) ibv_destroy_cq(peer_cq_);
        if (channel_ != nullptr) ibv_destroy_comp_channel(channel_);
        if (peer_mr_ != nullptr) ibv_dereg_mr(peer_mr_);
        if (mr_ != nullptr) ibv_dereg_mr(mr_);
        if (pd_ != nullptr) ibv_dealloc_pd(pd_);
        if (ctx_ != nullptr) ibv_close_device(ctx_);
        if (devices_ != nullptr) ibv_free_device_list(devices_);
    }
    Floor(const Floor&) = delete;
    Floor& operator=(const Floor&) = delete;
    uint8_t* data() { return bytes_.data(); }
    bool registered() const { return mr_ != nullptr; }
    bool wire() const { return qp_ != nullptr; }

    // One RDMA Write (to the peer) or Read (from it) of the first n bytes of the buffer, and
    // its completion, waited for on the channel.
    void move(size_t n, bool write) {
        ibv_sge sge{reinterpret_cast<uintptr_t>(bytes_.data()), static_cast<uint32_t>(n),
                    mr_->lkey};
        ibv_send_wr wr{};
        ibv_send_wr* bad = nullptr;
        wr.sg_list = &sge;
        wr.num_sge = 1;
        wr.opcode = write ? IBV_WR_RDMA_WRITE : IBV_WR_RDMA_READ;
        wr.send_flags = IBV_SEND_SIGNALED;
        wr.wr.rdma.remote_addr = reinterpret_cast<uintptr_t>(peer_bytes_.data());
        wr.wr.rdma.rkey = peer_mr_->rkey;
        if (ibv_req_notify_cq(cq_, 0) != 0) die("ibv_req_notify_cq failed");
        if (ibv_post_send(qp_, &wr, &bad) != 0)
            die(std::string("ibv_post_send failed: ") + std::strerror(errno));
        for (;;) {
            ibv_wc wc{};
            const int got = ibv_poll_cq(cq_, 1, &wc);
            if (got < 0) die("ibv_poll_cq failed");
            if (got == 1) {
                if (wc.status != IBV_WC_SUCCESS)
                    die(std::string("work completion: ") + ibv_wc_status_str(wc.status));
                return;
            }
            ibv_cq* ev_cq = nullptr;
            void* ev_ctx = nullptr;
            if (ibv_get_cq_event(channel_, &ev_cq, &ev_ctx) != 0) die("ibv_get_cq_event failed");
            ibv_ack_cq_events(ev_cq, 1);
            if (ibv_req_notify_cq(cq_, 0) != 0) die("ibv_req_notify_cq failed");
        }
    }

  private:
    ibv_qp* make_qp(ibv_cq* cq) {
        ibv_qp_init_attr a{};
        a.send_cq = cq;
        a.recv_cq = cq;
        a.qp_type = IBV_QPT_RC;
        a.cap.max_send_wr = 2;
        a.cap.max_recv_wr = 1;
        a.cap.max_send_sge = 1;
        a.cap.max_recv_sge = 1;
        ibv_qp* qp = ibv_create_qp(pd_, &a);
        if (qp == nullptr) die(std::string("ibv_create_qp failed: ") + std::strerror(errno));
        return qp;
    }
    static void connect(ibv_qp* qp, uint32_t remote_qpn, const ibv_gid& gid, int gid_index,
                        ibv_mtu mtu) {
        ibv_qp_attr a{};
        a.qp_state = IBV_QPS_INIT;
        a.port_num = 1;
        a.qp_access_flags = IBV_ACCESS_REMOTE_WRITE | IBV_ACCESS_REMOTE_READ;
        if (ibv_modify_qp(
                qp, &a, IBV_QP_STATE | IBV_QP_PKEY_INDEX | IBV_QP_PORT | IBV_QP_ACCESS_FLAGS) != 0)
            die("ibv_modify_qp INIT failed");
        a = {};
        a.qp_state = IBV_QPS_RTR;
        a.path_mtu = mtu;
        a.dest_qp_num = remote_qpn;
        a.max_dest_rd_atomic = 1;
        a.min_rnr_timer = 12;
        a.ah_attr.is_global = 1;
        a.ah_attr.grh.dgid = gid;
        a.ah_attr.grh.sgid_index = static_cast<uint8_t>(gid_index);
        a.ah_attr.grh.hop_limit = 1;
        a.ah_attr.port_num = 1;
        if (ibv_modify_qp(qp, &a,
                          IBV_QP_STATE | IBV_QP_AV | IBV_QP_PATH_MTU | IBV_QP_DEST_QPN |
                              IBV_QP_RQ_PSN | IBV_QP_MAX_DEST_RD_ATOMIC | IBV_QP_MIN_RNR_TIMER) !=
            0)
            die(std::string("ibv_modify_qp RTR failed: ") + std::strerror(errno));
        a = {};
        a.qp_state = IBV_QPS_RTS;
        a.timeout = 14;
        a.retry_cnt = 7;
        a.rnr_retry = 7;
        a.max_rd_atomic = 1;
        if (ibv_modify_qp(qp, &a,
                          IBV_QP_STATE | IBV_QP_TIMEOUT | IBV_QP_RETRY_CNT | IBV_QP_RNR_RETRY |
                              IBV_QP_SQ_PSN | IBV_QP_MAX_QP_RD_ATOMIC) != 0)
            die(std::string("ibv_modify_qp RTS failed: ") + std::strerror(errno));
    }

    std::vector<uint8_t> bytes_, peer_bytes_;
    ibv_device** devices_ = nullptr;
    ibv_context* ctx_ = nullptr;
    ibv_pd* pd_ = nullptr;
    ibv_mr* mr_ = nullptr;
    ibv_mr* peer_mr_ = nullptr;
    ibv_comp_channel* channel_ = nullptr;
    ibv_cq* cq_ = nullptr;
    ibv_cq* peer_cq_ = nullptr;
    ibv_qp* qp_ = nullptr;
    ibv_qp* peer_qp_ = nullptr;
};

}  // namespace

int main(int argc, char** argv) {
    if (argc < 4)
        die("usage: io_floor read|write FILE BYTES [--dev NAME | --plain] [--wire GID] [--chunk "
            "N]");
    const std::string mode = argv[1], path = argv[2];
    const unsigned long long want = std::strtoull(argv[3], nullptr, 10);
    std::string dev;
    bool plain = false;
    int wire_gid = -1;
    size_t chunk = 1 << 20;
    for (int i = 4; i < argc; ++i) {
        const std::string a = argv[i];
        if (a == "--plain")
            plain = true;
        else if (a == "--dev" && i + 1 < argc)
            dev = argv[++i];
        else if (a == "--chunk" && i + 1 < argc)
            chunk = std::strtoull(argv[++i], nullptr, 10);
        else if (a == "--wire" && i + 1 < argc)
            wire_gid = std::atoi(argv[++i]);
        else
            die("unknown argument " + a);
    }
    if (mode != "read" && mode != "write") die("mode is read or write, not " + mode);
    if (want == 0 || chunk == 0) die("BYTES and --chunk must be positive");
    if (plain && wire_gid >= 0) die("--wire needs a device: not with --plain");

    Floor buf(chunk, dev, plain, wire_gid);
    const bool reading = mode == "read";
    const int fd = ::open(path.c_str(), reading ? O_RDONLY : (O_WRONLY | O_CREAT | O_TRUNC), 0644);
    if (fd < 0) die(path + ": " + std::strerror(errno));
    if (!reading) std::memset(buf.data(), 0x5a, chunk);
    constexpr unsigned long long kWriteSpan = 128ull << 20;

    const double cpu0 = cpu_seconds();
    const auto wall0 = std::chrono::steady_clock::now();
    unsigned long long moved = 0, offset = 0;
    while (moved < want) {
        const size_t n = static_cast<size_t>(std::min<unsigned long long>(chunk, want - moved));
        if (!reading && buf.wire()) buf.move(n, false);  // a WRITE's data, pulled first
        const ssize_t r = reading ? ::pread(fd, buf.data(), n, static_cast<off_t>(offset))
                                  : ::pwrite(fd, buf.data(), n, static_cast<off_t>(offset));
        if (r < 0) die(path + ": " + std::strerror(errno));
        if (r == 0) {  // end of the file: round again
            if (offset == 0) die(path + ": empty");
            offset = 0;
            continue;
        }
        if (reading && buf.wire()) buf.move(static_cast<size_t>(r), true);  // a READ's data, pushed
        moved += static_cast<unsigned long long>(r);
        offset += static_cast<unsigned long long>(r);
        if (!reading && offset >= kWriteSpan) offset = 0;
    }
    if (!reading && ::fsync(fd) != 0) die(path + ": fsync: " + std::strerror(errno));
    const double cpu = cpu_seconds() - cpu0;
    const double wall =
        std::chrono::duration<double>(std::chrono::steady_clock::now() - wall0).count();
    ::close(fd);
    std::printf(
        "{\"mode\": \"%s\", \"bytes\": %llu, \"registered\": %s, \"wire\": %s, \"cpu_s\": %.4f, "
        "\"wall_s\": %.4f, \"cpu_s_per_gib\": %.4f}\n",
        mode.c_str(), moved, buf.registered() ? "true" : "false", buf.wire() ? "true" : "false",
        cpu, wall, cpu / (static_cast<double>(moved) / static_cast<double>(1ull << 30)));
    return 0;
}
