#include "transport/tcp/server.h"

#include <arpa/inet.h>
#include <fcntl.h>
#include <netinet/in.h>
#include <netinet/tcp.h>
#include <sys/socket.h>
#include <unistd.h>

#include <spdlog/fmt/fmt.h>
#include <spdlog/spdlog.h>
#include <algorithm>
#include <cerrno>
#include <cstdlib>
#include <cstring>
#include <future>

namespace nfsrdmad::tcp {

Server::Server(engine::ReactorGroup& reactors, engine::WorkerPool& workers,
               rpc::Dispatcher& dispatcher, ServerOptions opts)
    : reactors_(reactors), workers_(workers), dispatcher_(dispatcher), opts_(opts) {}

Server::~Server() = default;

std::string Server::listen(const std::string& address, uint16_t port) {
    sockaddr_storage ss;
    socklen_t len;
    if (!rpc::parse_address(address, port, ss, len))
        return fmt::format("not an IP address: '{}'", address);
    engine::UniqueFd fd(::socket(ss.ss_family, SOCK_STREAM | SOCK_NONBLOCK | SOCK_CLOEXEC, 0));
    if (!fd) return fmt::format("socket: {}", std::strerror(errno));
    int one = 1;
    setsockopt(fd.get(), SOL_SOCKET, SO_REUSEADDR, &one, sizeof one);
    if (ss.ss_family == AF_INET6) setsockopt(fd.get(), IPPROTO_IPV6, IPV6_V6ONLY, &one, sizeof one);
    if (::bind(fd.get(), reinterpret_cast<sockaddr*>(&ss), len) != 0)
        return fmt::format("bind {}: {}", rpc::format_address(reinterpret_cast<sockaddr*>(&ss)),
                           std::strerror(errno));
    if (::listen(fd.get(), 1024) != 0) return fmt::format("listen: {}", std::strerror(errno));
    // Accepting is cheap: the first reactor does it and spreads connections over all.
    Listener l{&reactors_.next(), std::make_shared<engine::UniqueFd>(std::move(fd))};
    std::promise<bool> added;
    l.reactor->post([&] {
        added.set_value(
            l.reactor->add(l.fd->get(), EPOLLIN, [this, l](uint32_t) { on_accept(l); }));
    });
    if (!added.get_future().get()) return "cannot watch listening socket";
    spdlog::info("tcp: listening on {}", rpc::format_address(reinterpret_cast<sockaddr*>(&ss)));
    listeners_.push_back(l);
    return {};
}

void Server::on_accept(const Listener& l) {
    const int lfd = l.fd->get();
    // Bounded work per wake-up, like a connection's reads: other sockets on this reactor
    // wait while we loop.
    for (int round = 0; round < 64; ++round) {
        rpc::Peer peer;
        peer.len = sizeof peer.addr;
        int cfd = ::accept4(lfd, reinterpret_cast<sockaddr*>(&peer.addr), &peer.len,
                            SOCK_NONBLOCK | SOCK_CLOEXEC);
        if (cfd < 0) {
            if (errno == EAGAIN || errno == EINTR || errno == ECONNABORTED) return;
            // Out of descriptors (EMFILE, ENFILE) or memory: the pending connection stays
            // in the backlog and the listener stays readable, so retrying now would spin.
            // Stop watching it for a while instead.
            counters_.accept_errors++;
            uint64_t held_back = 0;
            if (accept_error_log_.allow(&held_back))
                spdlog::error("tcp: accept: {} (raise LimitNOFILE); {} more since the last report",
                              std::strerror(errno), held_back);
            l.reactor->modify(lfd, 0);
            l.reactor->after(kAcceptBackoff, [l] {
                if (*l.fd) l.reactor->modify(l.fd->get(), EPOLLIN);
            });
            return;
        }
        if (counters_.accepted - counters_.closed >= opts_.max_connections) {
            // Counted before the close: a client that saw its connection closed then finds
            // it in the counters (e2e_tcp_limits_test read 4 of 5 when it came after).
            counters_.rejected++;
            ::close(cfd);
            uint64_t held_back = 0;
            if (reject_log_.allow(&held_back))
                spdlog::warn(
                    "tcp: {} connections open (tcp.max_connections); closing new ones "
                    "({} more since the last report)",
                    opts_.max_connections, held_back);
            continue;
        }
        int one = 1;
        setsockopt(cfd, IPPROTO_TCP, TCP_NODELAY, &one, sizeof one);
        peer.text = rpc::format_address(reinterpret_cast<sockaddr*>(&peer.addr));
        peer.conn = rpc::next_connection_id();
        counters_.accepted++;
        spdlog::debug("tcp: connection from {}", peer.text);
        auto& r = reactors_.next();
        ConnectionServices svc{dispatcher_, workers_,          payloads_,
                               counters_,   opts_.max_record,  opts_.max_in_flight_per_connection,
                               buffers_,    opts_.idle_timeout, opts_.channels};
        svc.reactor_calls = opts_.reactor_calls;
        svc.loop_payloads = &loop_payloads_;
        auto conn = std::make_shared<Connection>(engine::UniqueFd(cfd), std::move(peer), r, svc);
        {
            std::lock_guard lock(mu_);
            std::erase_if(conns_, [](auto& w) { return w.expired(); });
            conns_.push_back(conn);
        }
        r.post([conn] { conn->start(); });
    }
}

void Server::stop_accepting() {
    // A listening socket belongs to its reactor: unwatch and close it there.
    for (auto& l : listeners_)
        l.reactor->post([fd = l.fd, r = l.reactor] {
            r->remove(fd->get());
            fd->reset();  // a pending accept back-off timer sees it is gone
        });
    listeners_.clear();
}

bool Server::idle() {
    std::lock_guard lock(mu_);
    for (auto& w : conns_)
        if (auto c = w.lock(); c && !c->idle()) return false;
    return true;
}

size_t Server::connections() {
    std::lock_guard lock(mu_);
    std::erase_if(conns_, [](auto& w) { return w.expired(); });
    return conns_.size();
}

std::vector<std::string> Server::peers() const {
    std::vector<std::string> out;
    std::lock_guard lock(mu_);
    for (auto& w : conns_)
        if (auto c = w.lock()) out.push_back(c->peer().text);
    return out;
}

}  // namespace nfsrdmad::tcp
