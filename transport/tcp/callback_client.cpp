#include "transport/tcp/callback_client.h"

#include <arpa/inet.h>
#include <fcntl.h>
#include <netinet/in.h>
#include <sys/epoll.h>
#include <unistd.h>

#include <cerrno>
#include <cstring>

#include "transport/rpc/back_channel.h"
#include "xdr/runtime/xdr.h"

namespace nfsrdmad::tcp {

namespace {

constexpr uint32_t kPmapProg = 100000, kPmapVers = 2, kPmapGetport = 3, kIpprotoTcp = 6;
constexpr size_t kMaxReply = 64 * 1024;

// An RPC call message with AUTH_NONE credential and verifier (RFC 5531 §9), record-marked
// as one last fragment (§11).
std::vector<uint8_t> record(uint32_t xid, uint32_t prog, uint32_t vers, uint32_t proc,
                            const std::vector<uint8_t>& args) {
    rpc::BackCall c;
    c.prog = prog, c.vers = vers, c.proc = proc;
    c.args = args;
    const std::vector<uint8_t> msg = rpc::encode_back_call(xid, c);
    std::vector<uint8_t> out(4);
    const uint32_t n = static_cast<uint32_t>(msg.size()) | 0x80000000u;
    out[0] = uint8_t(n >> 24), out[1] = uint8_t(n >> 16), out[2] = uint8_t(n >> 8),
    out[3] = uint8_t(n);
    out.insert(out.end(), msg.begin(), msg.end());
    return out;
}

// The results of an accepted, successful reply to `xid`; false (and why) otherwise.
bool parse_reply(std::span<const uint8_t> msg, uint32_t xid, std::vector<uint8_t>& results,
                 std::string& why) {
    uint32_t rxid = 0;
    if (!rpc::is_reply(msg, &rxid) || rxid != xid) {
        why = "not a reply to our call";
        return false;
    }
    return rpc::parse_reply(msg, results, why);
}

}  // namespace

// One call: GETPORT, then the call itself. Lives in the reactor's handlers and timer.
struct CallbackClient::Call : std::enable_shared_from_this<Call> {
    engine::Reactor* reactor = nullptr;
    std::function<void(std::function<void()>)> run;
    std::shared_ptr<std::atomic<size_t>> in_flight;
    rpc::OutgoingCall out;
    std::function<void(rpc::CallbackResult)> done;
    uint16_t rpcbind_port = 111;
    bool reserved_port = true;
    uint32_t xid_getport = 0, xid_call = 0;

    enum class Phase { Getport, Call } phase = Phase::Getport;
    int fd = -1;
    bool finished = false;
    std::vector<uint8_t> send_buf;
    size_t sent = 0;
    std::vector<uint8_t> recv_buf;
    std::vector<uint8_t> message;  // fragments reassembled
    engine::Reactor::TimerId timer{};

    void start(std::chrono::milliseconds timeout) {
        auto self = shared_from_this();
        timer = reactor->after(timeout, [self] { self->finish(false, "no answer in time"); });
        connect_to(rpcbind_port,
                   record(xid_getport, kPmapProg, kPmapVers, kPmapGetport, getport_args()));
    }

    std::vector<uint8_t> getport_args() const {
        std::vector<uint8_t> a;
        xdr::Encoder e(a);
        for (uint32_t w : {out.prog, out.vers, kIpprotoTcp, 0u}) e.put_u32(w);
        return a;
    }

    void connect_to(uint16_t port, std::vector<uint8_t> bytes) {
        close_fd();
        sockaddr_storage to = out.peer;
        if (to.ss_family == AF_INET)
            reinterpret_cast<sockaddr_in*>(&to)->sin_port = htons(port);
        else if (to.ss_family == AF_INET6)
            reinterpret_cast<sockaddr_in6*>(&to)->sin6_port = htons(port);
        else
            return finish(false, "not an IP address");
        fd = ::socket(to.ss_family, SOCK_STREAM | SOCK_NONBLOCK | SOCK_CLOEXEC, 0);
        if (fd < 0) return finish(false, std::string("socket: ") + std::strerror(errno));
        if (reserved_port) bind_reserved(to.ss_family);
        if (::connect(fd, reinterpret_cast<sockaddr*>(&to), out.peer_len) != 0 &&
            errno != EINPROGRESS)
            return finish(false, std::string("connect: ") + std::strerror(errno));
        send_buf = std::move(bytes);
        sent = 0;
        recv_buf.clear();
        message.clear();
        auto self = shared_from_this();
        if (!reactor->add(fd, EPOLLOUT | EPOLLIN, [self](uint32_t ev) { self->on_event(ev); }))
            return finish(false, "reactor refused the socket");
    }

    // The first free port of 1023..600 (bindresvport's range); none (not root, all
    // taken): the kernel picks one at connect.
    void bind_reserved(int family) {
        for (uint16_t p = 1023; p >= 600; --p) {
            sockaddr_storage a{};
            socklen_t len;
            if (family == AF_INET) {
                auto* in = reinterpret_cast<sockaddr_in*>(&a);
                in->sin_family = AF_INET;
                in->sin_port = htons(p);
                len = sizeof *in;
            } else {
                auto* in6 = reinterpret_cast<sockaddr_in6*>(&a);
                in6->sin6_family = AF_INET6;
                in6->sin6_port = htons(p);
                len = sizeof *in6;
            }
            if (::bind(fd, reinterpret_cast<sockaddr*>(&a), len) == 0) return;
            if (errno != EADDRINUSE) return;
        }
    }

    void on_event(uint32_t ev) {
        if (finished) return;
        if (ev & (EPOLLERR | EPOLLHUP)) {
            int err = 0;
            socklen_t len = sizeof err;
            ::getsockopt(fd, SOL_SOCKET, SO_ERROR, &err, &len);
            if (err != 0 || !(ev & EPOLLIN))
                return finish(false,
                              std::string("connection: ") + (err ? std::strerror(err) : "closed"));
        }
        if ((ev & EPOLLOUT) && sent < send_buf.size()) {
            ssize_t n = ::send(fd, send_buf.data() + sent, send_buf.size() - sent, MSG_NOSIGNAL);
            if (n < 0 && errno != EAGAIN && errno != EWOULDBLOCK)
                return finish(false, std::string("send: ") + std::strerror(errno));
            if (n > 0) sent += static_cast<size_t>(n);
            if (sent == send_buf.size()) reactor->modify(fd, EPOLLIN);
        }
        if (ev & EPOLLIN) read_some();
    }

    void read_some() {
        uint8_t buf[4096];
        for (;;) {
            ssize_t n = ::recv(fd, buf, sizeof buf, 0);
            if (n == 0) return finish(false, "connection closed before the reply");
            if (n < 0) {
                if (errno == EAGAIN || errno == EWOULDBLOCK) return;
                return finish(false, std::string("recv: ") + std::strerror(errno));
            }
            recv_buf.insert(recv_buf.end(), buf, buf + n);
            if (recv_buf.size() > kMaxReply + 64) return finish(false, "reply too large");
            // Fragments (RFC 5531 §11): a mark, then that many bytes; the last one ends it.
            while (recv_buf.size() >= 4) {
                const uint32_t mark = uint32_t(recv_buf[0]) << 24 | uint32_t(recv_buf[1]) << 16 |
                                      uint32_t(recv_buf[2]) << 8 | recv_buf[3];
                const size_t len = mark & 0x7fffffffu;
                if (message.size() + len > kMaxReply) return finish(false, "reply too large");
                if (recv_buf.size() < 4 + len) break;
                message.insert(message.end(), recv_buf.begin() + 4, recv_buf.begin() + 4 + len);
                recv_buf.erase(recv_buf.begin(), recv_buf.begin() + 4 + len);
                if (mark & 0x80000000u) return on_message();
            }
        }
    }

    void on_message() {
        std::vector<uint8_t> results;
        std::string why;
        const uint32_t xid = phase == Phase::Getport ? xid_getport : xid_call;
        if (!parse_reply(message, xid, results, why)) return finish(false, why);
        if (phase == Phase::Call) return finish(true, "", std::move(results));
        xdr::Decoder d(results);
        const uint32_t port = d.get_u32();
        if (!d.ok() || port == 0 || port > 65535)
            return finish(false, "the client's rpcbind does not know the program");
        phase = Phase::Call;
        connect_to(static_cast<uint16_t>(port),
                   record(xid_call, out.prog, out.vers, out.proc, out.args));
    }

    void close_fd() {
        if (fd < 0) return;
        reactor->remove(fd);
        ::close(fd);
        fd = -1;
    }

    void finish(bool ok, std::string why, std::vector<uint8_t> results = {}) {
        if (finished) return;
        finished = true;
        close_fd();
        reactor->cancel(timer);
        in_flight->fetch_sub(1);
        rpc::CallbackResult r{ok, std::move(why), std::move(results)};
        run([done = std::move(done), r = std::move(r)]() mutable { done(std::move(r)); });
    }
};

CallbackClient::CallbackClient(engine::Reactor& reactor,
                               std::function<void(std::function<void()>)> run, Options o)
    : reactor_(reactor), run_(std::move(run)), opts_(o) {}

bool CallbackClient::call(rpc::OutgoingCall c, std::function<void(rpc::CallbackResult)> done) {
    if (in_flight_->fetch_add(1) >= opts_.max_in_flight) {
        in_flight_->fetch_sub(1);
        return false;
    }
    auto call = std::make_shared<Call>();
    call->reactor = &reactor_;
    call->run = run_;
    call->in_flight = in_flight_;
    call->out = std::move(c);
    call->done = std::move(done);
    call->rpcbind_port = opts_.rpcbind_port;
    call->reserved_port = opts_.reserved_port;
    call->xid_getport = xid_.fetch_add(1);
    call->xid_call = xid_.fetch_add(1);
    const auto timeout = opts_.timeout;
    reactor_.post([call, timeout] { call->start(timeout); });
    return true;
}

}  // namespace nfsrdmad::tcp
