// rdma_requester: a deliberately misbehaving RPC-over-RDMA requester for tests.
//
//   rdma_requester ADDR PORT SCENARIO
//
// Connects with librdmacm like a client (RFC 8797 private data, 4 KiB inline), sends
// hand-built transport headers — written here word by word, independently of the
// server's own codec — and checks the server's answer:
//
//   null         a well-formed RDMA_MSG NFS NULL call        -> RDMA_MSG, RPC SUCCESS
//   vers         rdma_vers 2                                 -> RDMA_ERROR ERR_VERS 1..1
//   unaligned    a read chunk at position 6                  -> RDMA_ERROR ERR_CHUNK
//   oversize     a 64 MiB read chunk                         -> RDMA_ERROR ERR_CHUNK
//   truncated    a header cut inside its read list           -> RDMA_ERROR ERR_CHUNK
//   badlist      a list flag of 7                            -> RDMA_ERROR ERR_CHUNK
//   nomsg        RDMA_NOMSG without a position-zero chunk    -> RDMA_ERROR ERR_CHUNK
//   longcall     RDMA_NOMSG whose call is in a position-zero read chunk (RFC 8166
//                §3.5.3), padded past any inline threshold  -> the server RDMA-Reads it
//                and answers the NULL call
//   nomsgxid     RDMA_NOMSG whose pulled RPC message carries another XID than the
//                transport header (RFC 8166 §4.1.1)          -> RDMA_ERROR ERR_CHUNK
//   peererror    the peer's RDMA_ERROR cut short after its procedure, and one with an
//                unknown error code                          -> no answer, and the
//                connection keeps serving
//   overrun      4x the granted credits in one burst         -> the server disconnects
//   flood        1 500 calls in one chain, more than a per-connection CQ sized to the
//                credits could hold (the server's receives complete on a CQ as deep as
//                its shared receive queue)                     -> the server disconnects
//   badrkey      a read chunk naming an rkey that does not exist: the server's RDMA
//                Read fails with a remote access error       -> the server disconnects
//   vanish       a NULL call with a 1 MiB read chunk, then the process exits while the
//                server is still RDMA-Reading it (a peer dying mid-transfer); exit 0
//                once the Send has left, the test then checks the server released all
//   bignomsg     RDMA_NOMSG whose position-zero chunk (1 MiB + 8 KiB) is larger than a
//                payload buffer but under the largest reply -> RDMA_ERROR ERR_CHUNK
//                at once (not a call parked forever waiting for a buffer)
//   hog          like deaf, after four NULL calls each with a 1 MiB read chunk: the
//                server pulls them into payload buffers that stay held with the
//                replies it cannot deliver, until its send watchdog cuts us off
//   ddp2         NFSv3 WRITEs whose file handle and data both travel in read chunks
//                (two DDP items in one call, RFC 8166 §3.4.5): both pulled and matched
//                -> an accepted reply (an NFS error for the made-up handle); with a
//                third chunk no argument reaches -> GARBAGE_ARGS (RFC 8166 §4.5.2)
//   deaf         posts no receive at all and asks for infinite RNR retries, then sends
//                a NULL call: the server's reply can never be delivered   -> the
//                server disconnects once its rdma.send_timeout has passed
//   v41reads EXPORT FILE
//                NFSv4.1 (EXCHANGE_ID, CREATE_SESSION, then SEQUENCE'd COMPOUNDs): writes
//                EXPORT/FILE locally with a known pattern, then reads it back over RDMA
//                with six READs in one COMPOUND and no write chunk, twice: 100 bytes each
//                (an inline reply of 13 pieces, more than a Send may gather: the server
//                copies it into its send buffer) and 1000 bytes each with a reply chunk
//                (a reply too long to go inline: its 13 pieces are RDMA-Written into the
//                chunk, split across Writes of at most the QP's gather entries). Every
//                byte is checked; then DESTROY_SESSION and DESTROY_CLIENTID.
//   deferdrop EXPORT FILE
//                a call the server puts off, and its connection gone meanwhile: writes
//                EXPORT/FILE locally and holds a read lease on it (a writer's open then
//                fails EWOULDBLOCK until the lease is let go), gets its handle (MOUNT MNT
//                and NFSv3 LOOKUP over RDMA), sends an NFSv3 WRITE FILE_SYNC of it, which
//                the server puts off (no answer in 300 ms), disconnects, lets go of the
//                lease while the server would still be running the call again, and checks
//                a second later that the WRITE never ran: a call put off is dropped with
//                its connection (the test then checks the server holds none put off)
//
// After every error scenario but overrun, flood and badrkey it sends a NULL call on the same
// connection and expects a normal reply: a refused message must not cost the connection. Exit 0
// when the server behaved as expected; 1 with a message otherwise.
#include <arpa/inet.h>
#include <fcntl.h>
#include <infiniband/verbs.h>
#include <netdb.h>
#include <rdma/rdma_cma.h>
#include <signal.h>
#include <sys/stat.h>

#include <unistd.h>

#include <algorithm>
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <string>
#include <vector>

namespace {

constexpr size_t kBuf = 4096;
constexpr int kRecvs = 256;
constexpr int kSends = 2048;  // send slots: a flood posts 1 500 Sends in one chain
constexpr uint32_t kNfsProgram = 100003;

[[noreturn]] void die(const std::string& why) {
    std::fprintf(stderr, "rdma_requester: FAIL: %s\n", why.c_str());
    std::exit(1);
}

struct Words {
    std::vector<uint8_t> b;
    Words& u(uint32_t v) {
        for (int s = 24; s >= 0; s -= 8) b.push_back(uint8_t(v >> s));
        return *this;
    }
    Words& seg(uint32_t h, uint32_t len, uint64_t off) {
        return u(h).u(len).u(uint32_t(off >> 32)).u(uint32_t(off));
    }
};

uint32_t word(const uint8_t* p) {
    return uint32_t(p[0]) << 24 | uint32_t(p[1]) << 16 | uint32_t(p[2]) << 8 | p[3];
}

// An RPC NULL call to NFSv3 with AUTH_NONE (RFC 5531 §9).
void rpc_null(Words& w, uint32_t xid) {
    w.u(xid).u(0).u(2).u(kNfsProgram).u(3).u(0).u(0).u(0).u(0).u(0);
}

class Client {
  public:
    // `deaf`: post no receive at all (a peer that will never take a reply).
    Client(const char* addr, const char* port, bool deaf = false) {
        ch_ = rdma_create_event_channel();
        if (!ch_) die("rdma_create_event_channel");
        if (rdma_create_id(ch_, &id_, nullptr, RDMA_PS_TCP)) die("rdma_create_id");
        addrinfo* ai = nullptr;
        if (getaddrinfo(addr, port, nullptr, &ai)) die("getaddrinfo");
        if (rdma_resolve_addr(id_, nullptr, ai->ai_addr, 5000)) die("rdma_resolve_addr");
        freeaddrinfo(ai);
        expect(RDMA_CM_EVENT_ADDR_RESOLVED);
        if (rdma_resolve_route(id_, 5000)) die("rdma_resolve_route");
        expect(RDMA_CM_EVENT_ROUTE_RESOLVED);
        pd_ = ibv_alloc_pd(id_->verbs);
        cq_ = ibv_create_cq(id_->verbs, kRecvs + kSends, nullptr, nullptr, 0);
        if (!pd_ || !cq_) die("pd/cq");
        ibv_qp_init_attr qa{};
        qa.send_cq = qa.recv_cq = cq_;
        qa.qp_type = IBV_QPT_RC;
        qa.cap.max_send_wr = kSends;
        qa.cap.max_recv_wr = kRecvs;
        qa.cap.max_send_sge = qa.cap.max_recv_sge = 1;
        if (rdma_create_qp(id_, pd_, &qa)) die("rdma_create_qp");
        mem_.resize(kBuf * (kRecvs + kSends));
        // An int, not the enum: verbs.h's ibv_reg_mr macro ANDs it with another enum type.
        const int access = IBV_ACCESS_LOCAL_WRITE;
        mr_ = ibv_reg_mr(pd_, mem_.data(), mem_.size(), access);
        if (!mr_) die("ibv_reg_mr");
        for (int i = 0; i < kRecvs && !deaf; ++i) post_recv(i);
        // RFC 8797: 4 KiB send and receive, no remote invalidation.
        uint8_t pd[8] = {0xf6, 0xab, 0x0e, 0x18, 1, 0, 3, 3};
        rdma_conn_param cp{};
        cp.private_data = pd;
        cp.private_data_len = sizeof pd;
        cp.initiator_depth = cp.responder_resources = 1;
        cp.retry_count = 7;
        cp.rnr_retry_count = 7;
        if (rdma_connect(id_, &cp)) die("rdma_connect");
        expect(RDMA_CM_EVENT_ESTABLISHED);
        // From here on CM events are polled alongside the CQ (see receive()).
        fcntl(ch_->fd, F_SETFL, fcntl(ch_->fd, F_GETFL) | O_NONBLOCK);
    }

    // Registers `bytes` for the server to RDMA-Read; returns its rkey and address.
    std::pair<uint32_t, uint64_t> expose(std::vector<uint8_t>& bytes) {
        ibv_mr* mr = ibv_reg_mr(pd_, bytes.data(), bytes.size(),
                                IBV_ACCESS_LOCAL_WRITE | IBV_ACCESS_REMOTE_READ);
        if (!mr) die("ibv_reg_mr (remote read)");
        return {mr->rkey, reinterpret_cast<uintptr_t>(bytes.data())};
    }

    // Registers `bytes` for the server to RDMA-Write (a reply chunk).
    std::pair<uint32_t, uint64_t> expose_writable(std::vector<uint8_t>& bytes) {
        const int access = IBV_ACCESS_LOCAL_WRITE | IBV_ACCESS_REMOTE_WRITE;
        ibv_mr* mr = ibv_reg_mr(pd_, bytes.data(), bytes.size(), access);
        if (!mr) die("ibv_reg_mr (remote write)");
        return {mr->rkey, reinterpret_cast<uintptr_t>(bytes.data())};
    }

    // Waits for the completion of the last Send (send() signals every one).
    void wait_sent() {
        ibv_wc wc;
        for (;;) {
            int n = ibv_poll_cq(cq_, 1, &wc);
            if (n < 0) die("ibv_poll_cq");
            if (n == 0) continue;
            if (wc.status != IBV_WC_SUCCESS) die("the Send failed");
            if (wc.opcode == IBV_WC_SEND) return;
            if (wc.opcode == IBV_WC_RECV) post_recv(static_cast<int>(wc.wr_id));
        }
    }

    void post_recv(int i) {
        ibv_sge sge{reinterpret_cast<uintptr_t>(&mem_[i * kBuf]), kBuf, mr_->lkey};
        ibv_recv_wr wr{};
        wr.wr_id = i;
        wr.sg_list = &sge;
        wr.num_sge = 1;
        ibv_recv_wr* bad;
        if (ibv_post_recv(id_->qp, &wr, &bad)) die("ibv_post_recv");
    }

    // Sends `msgs` back to back in one chain.
    void send(const std::vector<std::vector<uint8_t>>& msgs) {
        std::vector<ibv_sge> sges(msgs.size());
        std::vector<ibv_send_wr> wrs(msgs.size());
        for (size_t i = 0; i < msgs.size(); ++i) {
            uint8_t* slot = &mem_[(kRecvs + (next_send_++ % kSends)) * kBuf];
            std::memcpy(slot, msgs[i].data(), msgs[i].size());
            sges[i] = {reinterpret_cast<uintptr_t>(slot), uint32_t(msgs[i].size()), mr_->lkey};
            wrs[i].wr_id = 1000000 + i;
            wrs[i].opcode = IBV_WR_SEND;
            wrs[i].send_flags = IBV_SEND_SIGNALED;
            wrs[i].sg_list = &sges[i];
            wrs[i].num_sge = 1;
            wrs[i].next = i + 1 < msgs.size() ? &wrs[i + 1] : nullptr;
        }
        ibv_send_wr* bad;
        if (ibv_post_send(id_->qp, wrs.data(), &bad)) die("ibv_post_send");
    }

    // Disconnects (rdma_disconnect) and waits for the CM to say so.
    void disconnect() {
        if (rdma_disconnect(id_)) die("rdma_disconnect");
        auto deadline = std::chrono::steady_clock::now() + std::chrono::seconds(10);
        while (std::chrono::steady_clock::now() < deadline) {
            rdma_cm_event* ev = nullptr;
            if (rdma_get_cm_event(ch_, &ev) != 0) {
                usleep(1000);
                continue;
            }
            auto type = ev->event;
            rdma_ack_cm_event(ev);
            if (type == RDMA_CM_EVENT_DISCONNECTED) return;
        }
        die("no DISCONNECTED event within 10 s of rdma_disconnect");
    }

    enum class Got { Message, ConnectionLost, Timeout };
    Got last = Got::Message;

    // The next received message; empty with `last` saying why when there is none.
    std::vector<uint8_t> receive(int timeout_ms = 10000) {
        auto deadline = std::chrono::steady_clock::now() + std::chrono::milliseconds(timeout_ms);
        ibv_wc wc;
        last = Got::Message;
        while (std::chrono::steady_clock::now() < deadline) {
            int n = ibv_poll_cq(cq_, 1, &wc);
            if (n == 0) {
                // A server that drops us shows up first as a CM event; our posted
                // receives are flushed only later, if at all.
                rdma_cm_event* ev = nullptr;
                if (rdma_get_cm_event(ch_, &ev) == 0) {
                    auto type = ev->event;
                    rdma_ack_cm_event(ev);
                    if (type == RDMA_CM_EVENT_DISCONNECTED) {
                        last = Got::ConnectionLost;
                        return {};
                    }
                }
                continue;
            }
            if (wc.status != IBV_WC_SUCCESS) {
                last = Got::ConnectionLost;  // flushed: the server broke the connection
                return {};
            }
            if (wc.opcode != IBV_WC_RECV) continue;
            std::vector<uint8_t> m(&mem_[wc.wr_id * kBuf], &mem_[wc.wr_id * kBuf] + wc.byte_len);
            post_recv(static_cast<int>(wc.wr_id));
            return m;
        }
        last = Got::Timeout;
        return {};
    }

  private:
    void expect(rdma_cm_event_type want) {
        rdma_cm_event* ev = nullptr;
        if (rdma_get_cm_event(ch_, &ev)) die("rdma_get_cm_event");
        auto got = ev->event;
        rdma_ack_cm_event(ev);
        if (got != want)
            die(std::string("expected ") + rdma_event_str(want) + ", got " + rdma_event_str(got));
    }

    rdma_event_channel* ch_ = nullptr;
    rdma_cm_id* id_ = nullptr;
    ibv_pd* pd_ = nullptr;
    ibv_cq* cq_ = nullptr;
    ibv_mr* mr_ = nullptr;
    std::vector<uint8_t> mem_;
    size_t next_send_ = 0;
};

// xid, vers, credits, proc
Words header(uint32_t xid, uint32_t proc, uint32_t vers = 1) {
    return Words().u(xid).u(vers).u(32).u(proc);
}

void expect_error(const std::vector<uint8_t>& m, uint32_t xid, uint32_t err, const char* what) {
    if (m.empty()) die(std::string(what) + ": no reply (connection lost or timeout)");
    if (m.size() < 20) die(std::string(what) + ": reply too short");
    if (word(&m[0]) != xid) die(std::string(what) + ": reply xid differs");
    if (word(&m[12]) != 4)
        die(std::string(what) + ": expected RDMA_ERROR, got proc " + std::to_string(word(&m[12])));
    if (word(&m[16]) != err)
        die(std::string(what) + ": expected error " + std::to_string(err) + ", got " +
            std::to_string(word(&m[16])));
    if (err == 1 && (m.size() < 28 || word(&m[20]) != 1 || word(&m[24]) != 1))
        die(std::string(what) + ": ERR_VERS must carry the range 1..1");
    std::printf("ok: %s -> RDMA_ERROR %s\n", what, err == 1 ? "ERR_VERS" : "ERR_CHUNK");
}

void expect_null_reply(const std::vector<uint8_t>& m, uint32_t xid, const char* what) {
    if (m.empty()) die(std::string(what) + ": no reply to a NULL call");
    // transport header: xid vers credits proc, read list 0, write list 0, reply chunk 0
    if (m.size() < 28 + 24) die(std::string(what) + ": NULL reply too short");
    if (word(&m[0]) != xid || word(&m[12]) != 0) die(std::string(what) + ": not an RDMA_MSG reply");
    const uint8_t* rpc = &m[28];
    // xid, REPLY(1), MSG_ACCEPTED(0), verf flavor, verf len, SUCCESS(0)
    if (word(rpc) != xid || word(rpc + 4) != 1 || word(rpc + 8) != 0 || word(rpc + 20) != 0)
        die(std::string(what) + ": RPC reply is not MSG_ACCEPTED/SUCCESS");
    std::printf("ok: %s -> NULL answered (credits granted %u)\n", what, word(&m[8]));
}

// An RPC reply in an RDMA_MSG: its accept_stat (RFC 5531 §9), and the first result word.
std::pair<uint32_t, uint32_t> accepted(const std::vector<uint8_t>& m, uint32_t xid,
                                       const char* what) {
    if (m.size() < 28 + 24) die(std::string(what) + ": no reply, or too short");
    if (word(&m[0]) != xid || word(&m[12]) != 0) die(std::string(what) + ": not an RDMA_MSG reply");
    const uint8_t* rpc = &m[28];
    if (word(rpc) != xid || word(rpc + 4) != 1 || word(rpc + 8) != 0)
        die(std::string(what) + ": RPC reply is not MSG_ACCEPTED");
    return {word(rpc + 20), m.size() >= 28 + 28 ? word(rpc + 24) : 0};
}

std::vector<uint8_t> null_call(uint32_t xid) {
    Words w = header(xid, 0).u(0).u(0).u(0);
    rpc_null(w, xid);
    return w.b;
}

// ---- NFSv4.1 (RFC 8881; XDR of RFC 5662), written word by word like the rest ----

// An XDR opaque<> or string<>: length, bytes, zero padding to four (RFC 4506 §4.10).
Words& opaque(Words& w, const void* p, size_t n) {
    w.u(uint32_t(n));
    const auto* b = static_cast<const uint8_t*>(p);
    w.b.insert(w.b.end(), b, b + n);
    w.b.resize((w.b.size() + 3) & ~size_t(3), 0);
    return w;
}

// An RPC call with AUTH_SYS as root (RFC 5531 §9, §A); the arguments follow.
void rpc_call(Words& w, uint32_t xid, uint32_t prog, uint32_t vers, uint32_t proc) {
    w.u(xid).u(0).u(2).u(prog).u(vers).u(proc);
    w.u(1).u(24).u(0);                   // AUTH_SYS, body: stamp,
    opaque(w, "req", 3).u(0).u(0).u(0);  // machine name, uid 0, gid 0, no groups
    w.u(0).u(0);                         // verifier AUTH_NONE
}

// An RPC COMPOUND call to NFSv4 with AUTH_SYS as root, minor version 1, `nops` operations
// to follow.
void rpc_compound(Words& w, uint32_t xid, uint32_t nops) {
    rpc_call(w, xid, kNfsProgram, 4, 1);
    w.u(0).u(1).u(nops);  // tag "", minorversion 1, argarray
}

// Reads an NFSv4 COMPOUND reply (RFC 5531 §9 header, then COMPOUND4res) op by op.
struct Reply4 {
    const uint8_t* p;
    const uint8_t* end;
    const char* what;

    uint32_t u() {
        if (end - p < 4) die(std::string(what) + ": reply cut short");
        uint32_t v = word(p);
        p += 4;
        return v;
    }
    uint64_t h() {
        uint64_t hi = u();
        return hi << 32 | u();
    }
    const uint8_t* bytes(size_t n) {
        size_t padded = (n + 3) & ~size_t(3);
        if (size_t(end - p) < padded) die(std::string(what) + ": reply cut short");
        const uint8_t* at = p;
        p += padded;
        return at;
    }
    // The RPC header of an accepted reply, through accept_stat, which must be SUCCESS.
    void accepted(uint32_t xid) {
        if (u() != xid || u() != 1 || u() != 0) die(std::string(what) + ": not MSG_ACCEPTED");
        u();
        bytes(u());  // verifier
        if (uint32_t a = u(); a != 0) die(std::string(what) + ": accept_stat " + std::to_string(a));
    }
    // The RPC header up to the COMPOUND status, which it returns after the tag and the
    // result count.
    uint32_t start(uint32_t xid) {
        accepted(xid);
        uint32_t status = u();
        bytes(u());  // tag
        u();         // result count
        return status;
    }
    // The next result's operation and status; dies unless it is `op` with NFS4_OK.
    void op(uint32_t want) {
        uint32_t got = u(), status = u();
        if (got != want || status != 0)
            die(std::string(what) + ": op " + std::to_string(got) + " status " +
                std::to_string(status) + " (want op " + std::to_string(want) + " NFS4_OK)");
    }
};

// The RPC message of an RDMA_MSG reply: what follows its transport header, which must
// carry empty chunk lists.
Reply4 inline_reply(const std::vector<uint8_t>& m, uint32_t xid, const char* what) {
    if (m.size() < 28) die(std::string(what) + ": no reply (connection lost or timeout)");
    if (word(&m[0]) != xid || word(&m[12]) != 0)
        die(std::string(what) + ": not an RDMA_MSG reply (proc " + std::to_string(word(&m[12])) +
            ")");
    if (word(&m[16]) || word(&m[20]) || word(&m[24]))
        die(std::string(what) + ": the reply has chunk lists where none were offered");
    return Reply4{m.data() + 28, m.data() + m.size(), what};
}

enum : uint32_t {
    OP_LOOKUP = 15,
    OP_PUTROOTFH = 24,
    OP_READ = 25,
    OP_EXCHANGE_ID = 42,
    OP_CREATE_SESSION = 43,
    OP_DESTROY_SESSION = 44,
    OP_SEQUENCE = 53,
    OP_DESTROY_CLIENTID = 57,
};

// channel_attrs4 (RFC 8881 §18.36): no header padding, 1 MiB + 4 KiB each way, 16
// operations, `slots` slots, no RDMA read depth.
void channel_attrs(Words& w, uint32_t slots) {
    const uint32_t max = (1u << 20) + 4096;
    w.u(0).u(max).u(max).u(4096).u(16).u(slots).u(0);
}

// The v41reads scenario (see the file comment).
void v41reads(Client& c, uint32_t& xid, const std::string& export_dir, const std::string& name) {
    // The file, written here through the local file system: byte i is (i * 7 + 3) & 255.
    std::vector<uint8_t> content(8192);
    for (size_t i = 0; i < content.size(); ++i) content[i] = uint8_t(i * 7 + 3);
    const std::string path = export_dir + "/" + name;
    int fd = open(path.c_str(), O_WRONLY | O_CREAT | O_TRUNC, 0644);
    if (fd < 0 || write(fd, content.data(), content.size()) != ssize_t(content.size()) ||
        close(fd) != 0)
        die("cannot write " + path);

    // EXCHANGE_ID (§18.35): verifier, owner, no flags, SP4_NONE, no implementation id.
    Words w = header(++xid, 0).u(0).u(0).u(0);
    rpc_compound(w, xid, 1);
    w.u(OP_EXCHANGE_ID).u(0x5245).u(0x51);  // co_verifier
    opaque(w, "rdma_requester v41reads", 23).u(0).u(0).u(0);
    c.send({w.b});
    auto m = c.receive();
    Reply4 r = inline_reply(m, xid, "EXCHANGE_ID");
    if (uint32_t st = r.start(xid); st != 0) die("EXCHANGE_ID: status " + std::to_string(st));
    r.op(OP_EXCHANGE_ID);
    const uint64_t clientid = r.h();
    const uint32_t sequence = r.u();

    // CREATE_SESSION (§18.36): no back channel (flags 0), AUTH_NONE for callbacks.
    w = header(++xid, 0).u(0).u(0).u(0);
    rpc_compound(w, xid, 1);
    w.u(OP_CREATE_SESSION).u(uint32_t(clientid >> 32)).u(uint32_t(clientid)).u(sequence).u(0);
    channel_attrs(w, 4);
    channel_attrs(w, 1);
    w.u(0x40000000).u(1).u(0);  // cb_program, one callback_sec_parms4: AUTH_NONE
    c.send({w.b});
    m = c.receive();
    r = inline_reply(m, xid, "CREATE_SESSION");
    if (uint32_t st = r.start(xid); st != 0) die("CREATE_SESSION: status " + std::to_string(st));
    r.op(OP_CREATE_SESSION);
    uint8_t session[16];
    std::memcpy(session, r.bytes(16), 16);

    // SEQUENCE, PUTROOTFH, a LOOKUP per component of EXPORT/FILE, six READs at offsets
    // 0, 1000, ... with the anonymous stateid.
    constexpr uint32_t kReads = 6;
    std::vector<std::string> parts;
    for (size_t at = 0; at < path.size();) {
        size_t next = path.find('/', at);
        if (next == std::string::npos) next = path.size();
        if (next > at) parts.push_back(path.substr(at, next - at));
        at = next + 1;
    }
    uint32_t slot_seq = 0;
    // Appends the COMPOUND (call `xid`) to `w`, a transport header.
    auto reads = [&](Words& w, uint32_t count) {
        rpc_compound(w, xid, 2 + uint32_t(parts.size()) + kReads);
        w.u(OP_SEQUENCE);
        w.b.insert(w.b.end(), session, session + 16);
        w.u(++slot_seq).u(0).u(0).u(0);  // sequenceid, slot 0, highest slot 0, no cache
        w.u(OP_PUTROOTFH);
        for (const auto& part : parts) opaque(w.u(OP_LOOKUP), part.data(), part.size());
        for (uint32_t i = 0; i < kReads; ++i)
            w.u(OP_READ).u(0).u(0).u(0).u(0).u(0).u(i * 1000).u(count);
    };
    auto check = [&](Reply4& rr, uint32_t count, const char* what) {
        if (uint32_t st = rr.start(xid); st != 0)
            die(std::string(what) + ": COMPOUND status " + std::to_string(st));
        rr.op(OP_SEQUENCE);
        rr.bytes(16 + 5 * 4);
        rr.op(OP_PUTROOTFH);
        for (size_t i = 0; i < parts.size(); ++i) rr.op(OP_LOOKUP);
        for (uint32_t i = 0; i < kReads; ++i) {
            rr.op(OP_READ);
            rr.u();  // eof
            uint32_t n = rr.u();
            if (n != count)
                die(std::string(what) + ": READ " + std::to_string(i) + " returned " +
                    std::to_string(n) + " bytes, want " + std::to_string(count));
            if (std::memcmp(rr.bytes(n), &content[i * 1000], n) != 0)
                die(std::string(what) + ": READ " + std::to_string(i) + " data differs");
        }
        if (rr.p != rr.end) die(std::string(what) + ": bytes after the last result");
    };

    // Inline: 6 x 100 bytes.
    w = header(++xid, 0).u(0).u(0).u(0);
    reads(w, 100);
    c.send({w.b});
    m = c.receive();
    r = inline_reply(m, xid, "six inline READs");
    check(r, 100, "six inline READs");
    std::printf("ok: six 100-byte READs in one inline reply, every byte right\n");

    // A reply chunk: 6 x 1000 bytes do not fit the 4 KiB inline threshold.
    static std::vector<uint8_t> chunk(16384);
    auto [rkey, addr] = c.expose_writable(chunk);
    w = header(++xid, 0).u(0).u(0).u(1).u(1).seg(rkey, uint32_t(chunk.size()), addr);
    reads(w, 1000);
    c.send({w.b});
    m = c.receive();
    // RDMA_NOMSG (RFC 8166 §3.5.4): empty read and write lists, then the reply chunk with
    // the length written into each segment.
    if (m.size() < 28 || word(&m[0]) != xid)
        die("six READs with a reply chunk: no reply (connection lost or timeout)");
    if (word(&m[12]) != 1)
        die("six READs with a reply chunk: proc " + std::to_string(word(&m[12])) +
            ", want RDMA_NOMSG");
    if (m.size() < 48 || word(&m[16]) || word(&m[20]) || word(&m[24]) != 1 || word(&m[28]) != 1)
        die("six READs with a reply chunk: the header does not return one reply segment");
    const uint32_t written = word(&m[36]);
    if (written > chunk.size()) die("six READs with a reply chunk: more written than offered");
    Reply4 rc{chunk.data(), chunk.data() + written, "six READs with a reply chunk"};
    check(rc, 1000, "six READs with a reply chunk");
    std::printf("ok: six 1000-byte READs through a reply chunk (%u bytes), every byte right\n",
                written);
    unlink(path.c_str());

    // Leave no client behind (a restart of the server would otherwise wait for this one
    // to reclaim): DESTROY_SESSION, then DESTROY_CLIENTID, each alone in its COMPOUND
    // (RFC 8881 §18.37, §18.50).
    w = header(++xid, 0).u(0).u(0).u(0);
    rpc_compound(w, xid, 1);
    w.u(OP_DESTROY_SESSION).b.insert(w.b.end(), session, session + 16);
    c.send({w.b});
    m = c.receive();
    r = inline_reply(m, xid, "DESTROY_SESSION");
    if (uint32_t st = r.start(xid); st != 0) die("DESTROY_SESSION: status " + std::to_string(st));
    r.op(OP_DESTROY_SESSION);
    w = header(++xid, 0).u(0).u(0).u(0);
    rpc_compound(w, xid, 1);
    w.u(OP_DESTROY_CLIENTID).u(uint32_t(clientid >> 32)).u(uint32_t(clientid));
    c.send({w.b});
    m = c.receive();
    r = inline_reply(m, xid, "DESTROY_CLIENTID");
    if (uint32_t st = r.start(xid); st != 0) die("DESTROY_CLIENTID: status " + std::to_string(st));
    r.op(OP_DESTROY_CLIENTID);
    std::printf("ok: session and client destroyed\n");
}

// The deferdrop scenario (see the file comment).
void deferdrop(Client& c, uint32_t& xid, const std::string& export_dir, const std::string& name) {
    const std::string path = export_dir + "/" + name;
    const std::string before = "before\n";
    int fd = open(path.c_str(), O_WRONLY | O_CREAT | O_TRUNC, 0666);
    if (fd < 0 || fchmod(fd, 0666) != 0 ||
        write(fd, before.data(), before.size()) != ssize_t(before.size()) || close(fd) != 0)
        die("cannot write " + path);
    auto content = [&] {
        char buf[64];
        int f = open(path.c_str(), O_RDONLY);
        ssize_t n = f < 0 ? -1 : read(f, buf, sizeof buf);
        if (f >= 0) close(f);
        if (n < 0) die("cannot read " + path);
        return std::string(buf, size_t(n));
    };
    // The lease's break is a SIGIO to us, whose default action would end us.
    signal(SIGIO, SIG_IGN);
    int lease = open(path.c_str(), O_RDONLY);
    if (lease < 0 || fcntl(lease, F_SETLEASE, F_RDLCK) != 0) die("read lease on " + path);

    // MNT (RFC 1813 §5.2.1) of EXPORT, then LOOKUP (§3.3.3) of FILE in it.
    auto handle_of = [&](const char* what, Words& w) {
        c.send({w.b});
        auto m = c.receive();
        Reply4 r = inline_reply(m, xid, what);
        r.accepted(xid);
        if (uint32_t st = r.u(); st != 0) die(std::string(what) + ": status " + std::to_string(st));
        const uint32_t n = r.u();
        if (n > 64) die(std::string(what) + ": a handle of " + std::to_string(n) + " bytes");
        const uint8_t* fh = r.bytes(n);
        return std::vector<uint8_t>(fh, fh + n);
    };
    Words w = header(++xid, 0).u(0).u(0).u(0);
    rpc_call(w, xid, 100005, 3, 1);
    opaque(w, export_dir.data(), export_dir.size());
    const std::vector<uint8_t> root = handle_of("MNT", w);
    w = header(++xid, 0).u(0).u(0).u(0);
    rpc_call(w, xid, kNfsProgram, 3, 3);
    opaque(w, root.data(), root.size());
    opaque(w, name.data(), name.size());
    const std::vector<uint8_t> file = handle_of("LOOKUP", w);

    // WRITE (§3.3.7) of "after\n" at 0, FILE_SYNC: its open for writing meets the lease.
    w = header(++xid, 0).u(0).u(0).u(0);
    rpc_call(w, xid, kNfsProgram, 3, 7);
    opaque(w, file.data(), file.size()).u(0).u(0).u(6).u(2);
    opaque(w, "after\n", 6);
    c.send({w.b});
    auto m = c.receive(300);
    if (!m.empty()) {
        auto [stat, status] = accepted(m, xid, "WRITE");
        die("the WRITE was answered (accept_stat " + std::to_string(stat) + ", status " +
            std::to_string(status) + ") while the file's lease was held: not put off");
    }
    if (c.last != Client::Got::Timeout) die("WRITE: the connection was lost");
    std::printf("ok: a WRITE held up by a lease -> no answer in 300 ms (put off)\n");

    // The server runs it again 4, 12, 28, 60, 124 ms after its first run, then every 128 ms
    // until 1 020 ms. Gone before the last of those, with the lease let go: had the call
    // outlived its connection, a later run would now open the file and write it.
    c.disconnect();
    usleep(200 * 1000);  // the server's side of the disconnect, before a run could open it
    close(lease);
    usleep(1500 * 1000);
    if (std::string now = content(); now != before)
        die("the WRITE of a connection gone ran: the file holds \"" + now + "\"");
    unlink(path.c_str());
    std::printf("ok: disconnected while it was put off -> dropped, the file untouched\n");
}

}  // namespace

int main(int argc, char** argv) {
    const bool v4 =
        argc == 6 && (std::string(argv[3]) == "v41reads" || std::string(argv[3]) == "deferdrop");
    if (argc != 4 && !v4) {
        std::fprintf(stderr,
                     "usage: rdma_requester ADDR PORT null|vers|unaligned|oversize|"
                     "truncated|badlist|nomsg|nomsgxid|peererror|longcall|overrun|flood|badrkey|"
                     "vanish|bignomsg|"
                     "ddp2|deaf|hog\n"
                     "       rdma_requester ADDR PORT v41reads|deferdrop EXPORT FILE\n");
        return 2;
    }
    std::string scenario = argv[3];
    Client c(argv[1], argv[2], scenario == "deaf" || scenario == "hog");
    uint32_t xid = 0x5000;
    auto healthy_after = [&](const char* what) {
        c.send({null_call(++xid)});
        expect_null_reply(c.receive(), xid, (std::string(what) + ", then NULL").c_str());
    };
    // A NULL call of RPC XID `call_xid` padded to 6000 bytes, more than any inline
    // threshold here (NULL has no arguments, so the server ignores what follows its
    // header), sent as RDMA_NOMSG in a position-zero read chunk under `header_xid`.
    static std::vector<uint8_t> long_call;
    auto send_long_null = [&](uint32_t call_xid, uint32_t header_xid) {
        Words call;
        rpc_null(call, call_xid);
        call.b.resize(6000, 0);
        long_call = call.b;
        auto [rkey, addr] = c.expose(long_call);
        c.send({header(header_xid, 1)
                    .u(1)
                    .u(0)
                    .seg(rkey, uint32_t(long_call.size()), addr)
                    .u(0)
                    .u(0)
                    .u(0)
                    .b});
    };

    if (scenario == "null") {
        c.send({null_call(++xid)});
        expect_null_reply(c.receive(), xid, "NULL");
    } else if (scenario == "vers") {
        Words w = header(++xid, 0, 2).u(0).u(0).u(0);
        rpc_null(w, xid);
        c.send({w.b});
        expect_error(c.receive(), xid, 1, "version 2");
        healthy_after("version 2");
    } else if (scenario == "unaligned") {
        Words w = header(++xid, 0).u(1).u(6).seg(1, 8, 0x1000).u(0).u(0).u(0);
        rpc_null(w, xid);
        c.send({w.b});
        expect_error(c.receive(), xid, 2, "read chunk at position 6");
        healthy_after("unaligned position");
    } else if (scenario == "oversize") {
        Words w = header(++xid, 0).u(1).u(40).seg(1, 64u << 20, 0x1000).u(0).u(0).u(0);
        rpc_null(w, xid);
        c.send({w.b});
        expect_error(c.receive(), xid, 2, "64 MiB read chunk");
        healthy_after("oversize chunk");
    } else if (scenario == "truncated") {
        Words w = header(++xid, 0).u(1).u(40);
        c.send({w.b});
        expect_error(c.receive(), xid, 2, "header cut inside the read list");
        healthy_after("truncated header");
    } else if (scenario == "badlist") {
        Words w = header(++xid, 0).u(7).u(0).u(0);
        rpc_null(w, xid);
        c.send({w.b});
        expect_error(c.receive(), xid, 2, "list flag 7");
        healthy_after("bad list flag");
    } else if (scenario == "nomsg") {
        Words w = header(++xid, 1).u(0).u(0).u(0);
        c.send({w.b});
        expect_error(c.receive(), xid, 2, "RDMA_NOMSG without a position-zero chunk");
        healthy_after("bad RDMA_NOMSG");
    } else if (scenario == "longcall") {
        ++xid;
        send_long_null(xid, xid);
        expect_null_reply(c.receive(), xid, "RDMA_NOMSG with a 6000-byte position-zero chunk");
        healthy_after("long call");
    } else if (scenario == "nomsgxid") {
        const uint32_t call_xid = ++xid;
        const uint32_t other = ++xid;  // the transport header's: not the RPC call's
        send_long_null(call_xid, other);
        expect_error(c.receive(), other, 2, "RDMA_NOMSG whose pulled message has another XID");
        healthy_after("mismatched RDMA_NOMSG XID");
    } else if (scenario == "peererror") {
        c.send({header(++xid, 4).b});
        c.send({header(++xid, 4).u(7).b});
        auto m = c.receive(2000);
        if (!m.empty()) die("the server answered a peer's RDMA_ERROR");
        if (c.last == Client::Got::ConnectionLost) die("the server disconnected on an RDMA_ERROR");
        std::printf("ok: a peer's malformed RDMA_ERRORs -> no answer\n");
        healthy_after("a peer's RDMA_ERROR");
    } else if (scenario == "overrun" || scenario == "flood") {
        c.send({null_call(++xid)});
        auto first = c.receive();
        expect_null_reply(first, xid, "NULL before the overrun");
        uint32_t granted = word(&first[8]);
        std::vector<std::vector<uint8_t>> burst;
        const uint32_t n = scenario == "flood" ? 1500 : std::min<uint32_t>(granted * 4, 500);
        for (uint32_t i = 0; i < n; ++i) burst.push_back(null_call(++xid));
        c.send(burst);
        // Replies to the calls within the grant may arrive; then the connection must go.
        size_t replies = 0;
        while (!c.receive(15000).empty()) ++replies;
        if (c.last != Client::Got::ConnectionLost)
            die("the server kept the connection after " + std::to_string(burst.size()) +
                " calls against " + std::to_string(granted) + " credits (" +
                std::to_string(replies) + " replies)");
        std::printf(
            "ok: %zu calls against %u credits -> %zu replies, then the server "
            "disconnected\n",
            burst.size(), granted, replies);
    } else if (scenario == "badrkey") {
        // A NULL call followed by a 4 KiB read chunk at its end (position 40, after the
        // ten words of the call), whose rkey was never registered here.
        Words w = header(++xid, 0).u(1).u(40).seg(0xdeadbeef, 4096, 0x10000).u(0).u(0).u(0);
        rpc_null(w, xid);
        c.send({w.b});
        auto m = c.receive(30000);
        if (!m.empty()) die("the server answered a call whose read chunk it cannot have read");
        if (c.last != Client::Got::ConnectionLost)
            die("the server neither answered nor disconnected after a failed RDMA Read");
        std::printf("ok: read chunk with a bogus rkey -> the server disconnected\n");
    } else if (scenario == "vanish") {
        static std::vector<uint8_t> exposed(1u << 20, 0x5a);
        auto [rkey, addr] = c.expose(exposed);
        Words w =
            header(++xid, 0).u(1).u(40).seg(rkey, uint32_t(exposed.size()), addr).u(0).u(0).u(0);
        rpc_null(w, xid);
        c.send({w.b});
        c.wait_sent();
        std::printf("ok: sent a call with a 1 MiB read chunk; exiting while it is read\n");
        std::fflush(stdout);
        _exit(0);  // no disconnect, no cleanup: the kernel tears the QP down
    } else if (scenario == "bignomsg") {
        static std::vector<uint8_t> exposed((1u << 20) + 8192, 0);
        Words call;
        rpc_null(call, ++xid);
        std::memcpy(exposed.data(), call.b.data(), call.b.size());
        auto [rkey, addr] = c.expose(exposed);
        Words w = header(xid, 1).u(1).u(0).seg(rkey, uint32_t(exposed.size()), addr).u(0).u(0).u(0);
        c.send({w.b});
        expect_error(c.receive(), xid, 2, "RDMA_NOMSG with a position-zero chunk of 1 MiB + 8 KiB");
        healthy_after("oversized long call");
    } else if (scenario == "ddp2") {
        // WRITE3args with the handle's 8 bytes and the data's 5 bytes out of line. Stream
        // positions count every item in place: handle length @40, handle @44..52, offset
        // @52, count @60, stable @64, data length @68, data @72..80 (5 + 3 pad).
        static std::vector<uint8_t> handle(8, 0x42), data(5, 0x5a);
        auto [hkey, haddr] = c.expose(handle);
        auto [dkey, daddr] = c.expose(data);
        for (bool extra : {false, true}) {
            Words w = header(++xid, 0);
            w.u(1).u(44).seg(hkey, 8, haddr).u(1).u(72).seg(dkey, 5, daddr);
            if (extra) w.u(1).u(80).seg(dkey, 4, daddr);  // where no argument starts
            w.u(0).u(0).u(0);
            w.u(xid).u(0).u(2).u(kNfsProgram).u(3).u(7).u(0).u(0).u(0).u(0);
            w.u(8).u(0).u(0).u(5).u(2).u(5);  // handle length, offset, count, FILE_SYNC, length
            c.send({w.b});
            auto [stat, first] = accepted(c.receive(), xid, "WRITE with two read chunks");
            if (!extra) {
                if (stat != 0)
                    die("WRITE with its handle and data in two read chunks: accept_stat " +
                        std::to_string(stat) + ", want SUCCESS");
                std::printf(
                    "ok: two read chunks -> both matched (nfsstat3 %u for the made-up "
                    "handle)\n",
                    first);
            } else {
                if (stat != 4)
                    die("a read chunk no argument reaches: accept_stat " + std::to_string(stat) +
                        ", want GARBAGE_ARGS (4)");
                std::printf("ok: a third read chunk no argument reaches -> GARBAGE_ARGS\n");
            }
        }
        healthy_after("two DDP items");
    } else if (scenario == "v41reads") {
        v41reads(c, xid, argv[4], argv[5]);
        healthy_after("NFSv4.1 READs");
    } else if (scenario == "deferdrop") {
        deferdrop(c, xid, argv[4], argv[5]);  // disconnected: nothing after it
    } else if (scenario == "deaf" || scenario == "hog") {
        if (scenario == "hog") {
            static std::vector<uint8_t> exposed(1u << 20, 0x5a);
            auto [rkey, addr] = c.expose(exposed);
            for (int i = 0; i < 4; ++i) {
                Words w = header(++xid, 0).u(1).u(40).seg(rkey, uint32_t(exposed.size()), addr);
                w.u(0).u(0).u(0);
                rpc_null(w, xid);
                c.send({w.b});
                c.wait_sent();
            }
            std::printf("ok: four calls with 1 MiB read chunks sent; holding their replies\n");
            std::fflush(stdout);
        } else {
            c.send({null_call(++xid)});
            c.wait_sent();
        }
        // Nothing can arrive (no receive is posted): receive() watches for the server's
        // disconnect. The caller's daemon runs with a short rdma.send_timeout.
        auto start = std::chrono::steady_clock::now();
        c.receive(120000);
        auto waited = std::chrono::duration_cast<std::chrono::seconds>(
                          std::chrono::steady_clock::now() - start)
                          .count();
        if (c.last != Client::Got::ConnectionLost)
            die("the server kept a connection whose peer takes no reply for " +
                std::to_string(waited) + " s");
        std::printf("ok: a peer that posts no receive -> disconnected after %lld s\n",
                    static_cast<long long>(waited));
    } else {
        die("unknown scenario " + scenario);
    }
    return 0;
}
