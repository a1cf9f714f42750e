#include "transport/rdma/server.h"

#include <arpa/inet.h>
#include <fcntl.h>
#include <netdb.h>

#include <spdlog/fmt/fmt.h>
#include <spdlog/spdlog.h>
#include <algorithm>
#include <cerrno>
#include <cstring>
#include <future>

#include "transport/rdma/protocol/private_data.h"
#include "transport/rdma/protocol/send_queue.h"
#include "transport/rdma/verbs/inventory.h"

namespace nfsrdmad::rdma {

Server::Server(engine::ReactorGroup& reactors, engine::WorkerPool& workers,
               rpc::Dispatcher& dispatcher, ServerOptions opts)
    : reactors_(reactors), workers_(workers), dispatcher_(dispatcher), opts_(opts) {}

Server::~Server() {
    std::lock_guard lock(mu_);
    conns_.clear();
}

size_t Server::log_devices() {
    const auto devices = verbs::list_devices();
    for (const auto& d : devices)
        for (const auto& p : d.ports)
            for (const auto& g : p.gids)
                spdlog::info("rdma: device {} port {} ({}) gid[{}] {}", d.name, p.number,
                             p.active ? "active" : "not active", g.index, g.text);
    return devices.size();
}

std::string Server::listen(const std::string& address, uint16_t port) {
    if (!channel_) {
        channel_.reset(rdma_create_event_channel(), verbs::EventChannelDelete{});
        if (!channel_) return fmt::format("rdma_create_event_channel: {}", std::strerror(errno));
        fcntl(channel_->fd, F_SETFL, fcntl(channel_->fd, F_GETFL) | O_NONBLOCK);
        // rdma_cm and verbs commands: from a thread that never changes identity.
        cm_reactor_ = &reactors_.next_own_thread();
        std::promise<bool> added;
        cm_reactor_->post([&] {
            tick_ = cm_reactor_->after(std::chrono::seconds(1), [this] { on_tick(); });
            added.set_value(
                cm_reactor_->add(channel_->fd, EPOLLIN, [this](uint32_t) { on_cm_events(); }));
        });
        if (!added.get_future().get()) return "cannot watch the rdma_cm event channel";
        if (auto err = open_devices(); !err.empty()) return err;
    }
    addrinfo hints{};
    hints.ai_flags = AI_NUMERICHOST | AI_PASSIVE;
    addrinfo* res = nullptr;
    std::string service = std::to_string(port);
    if (getaddrinfo(address.c_str(), service.c_str(), &hints, &res) != 0 || !res)
        return fmt::format("not an IP address: '{}'", address);
    rdma_cm_id* raw = nullptr;
    if (rdma_create_id(channel_.get(), &raw, this, RDMA_PS_TCP) != 0) {
        freeaddrinfo(res);
        return fmt::format("rdma_create_id: {}", std::strerror(errno));
    }
    verbs::CmIdPtr id(raw);
    int rc = rdma_bind_addr(id.get(), res->ai_addr);
    freeaddrinfo(res);
    if (rc != 0)
        return fmt::format("rdma_bind_addr {}:{}: {}", address, port, std::strerror(errno));
    if (rdma_listen(id.get(), 128) != 0)
        return fmt::format("rdma_listen {}:{}: {}", address, port, std::strerror(errno));
    const auto mode = reactors_.mode();
    spdlog::info("rdma: listening on {}:{} (credits {}, inline {} bytes, {} completion mode{})",
                 address, port, opts_.credits, opts_.inline_size, engine::mode_name(mode),
                 mode == engine::Mode::Adaptive
                     ? fmt::format(", spin {} us", reactors_.spin().count())
                     : "");
    listeners_.push_back(std::move(id));
    return {};
}

std::shared_ptr<verbs::Device> Server::device_for(ibv_context* ctx, std::string* why) {
    std::lock_guard lock(mu_);
    auto it = devices_.find(ctx);
    if (it != devices_.end()) return it->second;
    // A device that appeared after start (hotplug): opened now, on the CM reactor.
    verbs::PoolSizes sizes = opts_.pools;
    sizes.inline_size = opts_.inline_size;
    auto dev = verbs::Device::open(ctx, sizes, cm_reactor_, why);
    if (!dev) return nullptr;
    devices_[ctx] = dev;
    cm_reactor_->post([dev, r = cm_reactor_] { verbs::Device::watch_async_events(dev, *r); });
    return dev;
}

std::string Server::open_devices() {
    // The contexts rdma_cm itself uses: a CONNECT_REQUEST's id->verbs is one of them.
    int n = 0;
    ibv_context** list = rdma_get_devices(&n);
    if (!list) return fmt::format("rdma_get_devices: {}", std::strerror(errno));
    for (int i = 0; i < n; ++i) {
        std::string why;
        auto dev = device_for(list[i], &why);
        if (!dev) {
            // A device without shared receive queues, say: the others still serve.
            spdlog::warn("rdma: device {} not used: {}", ibv_get_device_name(list[i]->device), why);
            continue;
        }
        spdlog::info(
            "rdma: device {}: {} bytes registered ({} receive buffers, {} posted on the "
            "shared receive queue; {} payload buffers of {} bytes); up to {} credits per "
            "connection, shared out of {}; up to {} bytes of RDMA Read in flight",
            dev->name(), dev->registered_bytes(), dev->receives().capacity(),
            dev->receive_queue().depth(), dev->payloads().capacity(), dev->payloads().buffer_size(),
            opts_.credits, dev->receives().capacity() - dev->receive_queue().depth(),
            dev->read_budget().limit());
    }
    rdma_free_devices(list);
    return {};
}

void Server::on_connect_request(rdma_cm_id* id, const rdma_conn_param& param) {
    auto reject = [&](const std::string& why) {
        counters_.rejected_connections++;
        spdlog::warn("rdma: rejecting a connection from {}: {}",
                     rpc::make_peer(rdma_get_peer_addr(id)).text, why);
        rdma_reject(id, nullptr, 0);
        rdma_destroy_id(id);
    };
    {
        std::lock_guard lock(mu_);
        if (conns_.size() >= opts_.max_connections)
            return reject(
                fmt::format("{} connections already open (rdma.max_connections)", conns_.size()));
    }
    std::string why;
    auto dev = device_for(id->verbs, &why);
    if (!dev) return reject(why);

    verbs::ConnectionOptions o;
    o.credits = opts_.credits;
    o.inline_size = opts_.inline_size;
    o.send_queue_depth = opts_.send_queue_depth;
    o.limits = fit_to_buffer(opts_.limits, dev->payloads().buffer_size());
    o.capture_dir = opts_.capture_dir;
    o.reactor_calls = opts_.reactor_calls;
    // RFC 8797: the client's inline sizes and whether it takes Send With Invalidate.
    if (auto pd = parse_private_data(
            {static_cast<const uint8_t*>(param.private_data), param.private_data_len})) {
        o.peer_receive = pd->receive_size;
        o.peer_remote_invalidate = pd->remote_invalidate;
    }
    // The request's initiator_depth is, from our side, how many RDMA Reads we may have
    // outstanding (shared/vmtest notes: never clamp it to responder_resources). We keep
    // at most kMaxReadsInFlight of them posted (send_queue.h: each takes a slot).
    const auto& a = dev->attr();
    uint8_t depth = std::min<int>(param.initiator_depth, a.max_qp_init_rd_atom);
    o.initiator_depth = std::clamp<uint32_t>(depth, 1, kMaxReadsInFlight);

    auto& reactor = reactors_.next_own_thread();  // see listen()
    auto conn = verbs::Connection::create(
        id, dev, reactor, {dispatcher_, workers_, counters_, channel_, opts_.channels}, o, &why);
    if (!conn) return reject(why);

    PrivateData ours{opts_.inline_size, opts_.inline_size, false};
    auto pd_bytes = encode_private_data(ours);
    rdma_conn_param acc{};
    acc.private_data = pd_bytes.data();
    acc.private_data_len = static_cast<uint8_t>(pd_bytes.size());
    acc.initiator_depth = depth;
    acc.responder_resources = std::min<int>(param.responder_resources, a.max_qp_rd_atom);
    // The RNR retry count we send in the CM reply sets how often the *peer's* Sends retry
    // when we have no receive posted (IBA CM: each side's QP takes the other side's
    // value). A compliant peer never meets that (the shared receive queue stays posted
    // beyond every credit granted, receive_queue.h), so a finite count: 7 would mean
    // forever. Our own Sends take the count from the peer's request, possibly 7; the send
    // watchdog (check_stalled_sends) bounds those.
    acc.rnr_retry_count = 6;
    if (rdma_accept(id, &acc) != 0) {
        spdlog::warn("rdma: rdma_accept from {}: {}", conn->peer().text, std::strerror(errno));
        conn->disconnect("accept failed");
        return;
    }
    counters_.connections++;
    spdlog::info(
        "rdma: connection from {} on {} (peer inline {} / remote invalidation {}, "
        "read depth {}, send queue {}, {} connections on the device)",
        conn->peer().text, dev->name(), o.peer_receive, o.peer_remote_invalidate ? "yes" : "no",
        o.initiator_depth, conn->send_queue_depth(), dev->connections());
    {
        std::lock_guard lock(mu_);
        conns_[id] = conn;
    }
    reactor.post([conn] { conn->start(); });
}

void Server::on_cm_events() {
    for (;;) {
        rdma_cm_event* ev = nullptr;
        if (rdma_get_cm_event(channel_.get(), &ev) != 0) return;  // EAGAIN: drained
        // Copy what we need and acknowledge first: destroying an id waits for its acks.
        rdma_cm_event_type type = ev->event;
        rdma_cm_id* id = ev->id;
        rdma_conn_param param = ev->param.conn;
        std::vector<uint8_t> pdata;
        if (param.private_data && param.private_data_len) {
            auto* p = static_cast<const uint8_t*>(param.private_data);
            pdata.assign(p, p + param.private_data_len);
        }
        param.private_data = pdata.data();
        rdma_ack_cm_event(ev);

        switch (type) {
            case RDMA_CM_EVENT_CONNECT_REQUEST:
                on_connect_request(id, param);
                break;
            case RDMA_CM_EVENT_ESTABLISHED:
                spdlog::debug("rdma: connection established");
                break;
            case RDMA_CM_EVENT_DISCONNECTED:
            case RDMA_CM_EVENT_CONNECT_ERROR:
            case RDMA_CM_EVENT_UNREACHABLE:
            case RDMA_CM_EVENT_REJECTED:
            case RDMA_CM_EVENT_DEVICE_REMOVAL: {
                std::shared_ptr<verbs::Connection> conn;
                {
                    std::lock_guard lock(mu_);
                    auto it = conns_.find(id);
                    if (it == conns_.end()) break;
                    conn = std::move(it->second);
                    conns_.erase(it);
                }
                spdlog::info("rdma: {}: {}", conn->peer().text, rdma_event_str(type));
                // The connection's reactor releases its resources; the last reference
                // (reactor or a call still on a worker) destroys the QP and the id.
                auto* r = &conn->reactor();
                r->post([conn] { conn->on_cm_disconnected(); });
                break;
            }
            default:
                spdlog::debug("rdma: cm event {}", rdma_event_str(type));
                break;
        }
    }
}

void Server::on_tick() {
    tick_ = cm_reactor_->after(std::chrono::seconds(1), [this] { on_tick(); });
    // The coarse clock, as the Sends' own times (send.cpp): a watchdog of seconds needs no
    // finer one, and a Send's time is taken for every reply (no system call on any clock
    // source).
    const auto now = engine::Reactor::coarse_now();
    std::lock_guard lock(mu_);
    for (auto& [id, conn] : conns_) {
        auto c = conn;
        c->reactor().post(
            [c, now, limit = opts_.send_timeout] { c->check_stalled_sends(now, limit); });
    }
}

void Server::stop_accepting() {
    if (!cm_reactor_) return;
    std::promise<void> done;
    cm_reactor_->post([&] {
        if (tick_) cm_reactor_->cancel(*tick_);
        tick_.reset();
        listeners_.clear();
        done.set_value();
    });
    done.get_future().wait();
}

void Server::disconnect_all() {
    std::lock_guard lock(mu_);
    for (auto& [id, conn] : conns_) {
        auto c = conn;
        c->reactor().post([c] { c->disconnect("the server is shutting down"); });
    }
}

size_t Server::connections() {
    std::lock_guard lock(mu_);
    return conns_.size();
}

std::vector<Server::PeerInfo> Server::peers() {
    std::vector<PeerInfo> out;
    std::lock_guard lock(mu_);
    for (auto& [id, conn] : conns_) out.push_back({conn->peer().text, conn->credits()});
    return out;
}

Server::Pools Server::pools() {
    std::lock_guard lock(mu_);
    return pools_locked();
}

Server::Pools Server::pools_locked() {
    Pools s;
    s.open_connections = conns_.size();
    for (auto& [ctx, d] : devices_) {
        s.payload_wait_timeouts += d->payloads().wait_timeouts();
        s.receives_posted += d->receive_queue().posted();
        s.receive_strays += d->receive_strays();
        s.async_events += d->async_events();
        s.read_bytes_in_flight += d->read_budget().in_flight();
        s.read_waiters += d->read_budget().waiting();
        for (auto* p : {&d->receives(), &d->sends(), &d->payloads()}) {
            s.buffers_in_use += p->in_use();
            s.registrations += p->registrations();
            s.registered_bytes += p->registered_bytes();
            s.huge_page_bytes += p->huge_page_bytes();
        }
    }
    // Receives posted on the shared queue wait for any peer: not in use by a call.
    s.buffers_in_use -= s.receives_posted;
    return s;
}

std::vector<std::string> Server::stats() {
    const auto& c = counters_;
    std::lock_guard lock(mu_);
    const Pools p = pools_locked();
    std::vector<std::string> lines;
    lines.push_back(fmt::format(
        "rdma connections={} open={} disconnects={} rejected={} credits_granted={} {} "
        "buffers_in_use={} registrations={} registered_bytes={} huge_page_bytes={} "
        "payload_wait_timeouts={} receives_posted={} receive_strays={} calls_waiting={} "
        "read_bytes_in_flight={} read_waiters={} async_events={}",
        c.connections.load(), p.open_connections, c.disconnects.load(),
        c.rejected_connections.load(), c.credits_granted.load(), c.format(), p.buffers_in_use,
        p.registrations, p.registered_bytes, p.huge_page_bytes, p.payload_wait_timeouts,
        p.receives_posted, p.receive_strays, c.calls_waiting.load(), p.read_bytes_in_flight,
        p.read_waiters, p.async_events));
    // One line per open connection (its counters are atomics: safe to read from here).
    for (auto& [id, conn] : conns_)
        lines.push_back(
            fmt::format("rdma-connection {} credits={} read_depth={} calls_peak={} "
                        "read_bytes_peak={} {}",
                        conn->peer().text, conn->credits(), conn->read_depth(), conn->calls_peak(),
                        conn->read_bytes_peak(), conn->counters().format()));
    return lines;
}

}  // namespace nfsrdmad::rdma
