#include "transport/udp/server.h"

#include <netinet/in.h>
#include <sys/epoll.h>
#include <sys/socket.h>

#include <spdlog/fmt/fmt.h>
#include <spdlog/spdlog.h>

#include <algorithm>
#include <cerrno>
#include <cstring>
#include <future>

namespace nfsrdmad::udp {

namespace {

constexpr size_t kMaxDatagram = 65536;

// No payload buffers over UDP: a reply is one datagram, built inline.
class NoPayloads final : public rpc::PayloadAllocator {
  public:
    std::unique_ptr<rpc::PayloadBuffer> allocate(size_t) override { return nullptr; }
};

}  // namespace

Server::Server(engine::Reactor& reactor, engine::WorkerPool& workers, rpc::Dispatcher& dispatcher,
               Options o)
    : reactor_(reactor), workers_(workers), dispatcher_(dispatcher), opts_(std::move(o)) {}

Server::~Server() = default;

std::string Server::listen(const std::string& address, uint16_t port) {
    sockaddr_storage ss;
    socklen_t len;
    if (!rpc::parse_address(address, port, ss, len))
        return fmt::format("not an IP address: '{}'", address);
    engine::UniqueFd fd(::socket(ss.ss_family, SOCK_DGRAM | SOCK_NONBLOCK | SOCK_CLOEXEC, 0));
    if (!fd) return fmt::format("socket: {}", std::strerror(errno));
    int one = 1;
    if (ss.ss_family == AF_INET6) setsockopt(fd.get(), IPPROTO_IPV6, IPV6_V6ONLY, &one, sizeof one);
    if (::bind(fd.get(), reinterpret_cast<sockaddr*>(&ss), len) != 0)
        return fmt::format("bind udp {}: {}", rpc::format_address(reinterpret_cast<sockaddr*>(&ss)),
                           std::strerror(errno));
    const int raw = fd.get();
    std::promise<bool> added;
    reactor_.post([&] {
        added.set_value(reactor_.add(raw, EPOLLIN, [this, raw](uint32_t) { on_readable(raw); }));
    });
    if (!added.get_future().get()) return "cannot watch the UDP socket";
    spdlog::info("udp: listening on {}", rpc::format_address(reinterpret_cast<sockaddr*>(&ss)));
    fds_.push_back(std::move(fd));
    return {};
}

// The call's program (RFC 5531 §9: xid, msg_type CALL, rpcvers, prog) is one of ours.
bool Server::allowed(std::span<const uint8_t> m) const {
    if (m.size() < 16) return false;
    const uint32_t prog =
        uint32_t(m[12]) << 24 | uint32_t(m[13]) << 16 | uint32_t(m[14]) << 8 | m[15];
    return std::find(opts_.programs.begin(), opts_.programs.end(), prog) != opts_.programs.end();
}

void Server::on_readable(int fd) {
    for (;;) {
        auto buf = std::make_shared<std::vector<uint8_t>>(kMaxDatagram);
        sockaddr_storage from{};
        socklen_t from_len = sizeof from;
        ssize_t n = ::recvfrom(fd, buf->data(), buf->size(), MSG_DONTWAIT,
                               reinterpret_cast<sockaddr*>(&from), &from_len);
        if (n < 0) return;  // EAGAIN: all read (other errors: the next datagram may do)
        counters_.datagrams++;
        buf->resize(static_cast<size_t>(n));
        if (!allowed(*buf) || in_flight_->load() >= opts_.max_in_flight) {
            counters_.dropped++;
            continue;
        }
        in_flight_->fetch_add(1);
        workers_.submit([this, fd, buf, from, from_len, in_flight = in_flight_] {
            rpc::Peer peer = rpc::make_peer(reinterpret_cast<const sockaddr*>(&from));
            rpc::Message msg;
            msg.owner = buf;
            msg.bytes = *buf;
            NoPayloads none;
            auto reply = dispatcher_.dispatch(msg, peer, none);
            if (reply) {
                if (reply->bytes.size() > kMaxDatagram) {
                    counters_.send_errors++;
                } else if (::sendto(fd, reply->bytes.data(), reply->bytes.size(), MSG_DONTWAIT,
                                    reinterpret_cast<const sockaddr*>(&from), from_len) < 0) {
                    counters_.send_errors++;
                } else {
                    counters_.replies++;
                }
            }
            in_flight->fetch_sub(1);
        });
    }
}

}  // namespace nfsrdmad::udp
