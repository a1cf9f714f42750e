// Reverse-direction calls (RFC 8167): this server calls the client on the client's own
// connection, for the NFSv4.1 backchannel. The third direction beside receive.cpp and
// send.cpp:
//
//   worker: ReverseCallPort::send_call ──► reactor: PendingCalls.add ──► Send [RDMA_MSG | call]
//                                                            (inline, one send buffer)
//   SRQ receive: RDMA_MSG, no chunks, RPC REPLY ──► PendingCalls.on_reply ──► worker: done
//
// §5.1: reverse-direction messages are inline only, so a call larger than the peer's
// receive buffers (RFC 8797 private data, else 1024 bytes) is refused, never sent: the
// Linux client drops the connection on a reverse call it cannot receive. §4.1: a reverse
// reply is recognized before credit accounting (it spends no forward credit) and never
// reaches the dispatcher. §4.2: reverse credits are counted apart from forward ones: at
// most as many reverse calls are out as the client's last reverse reply granted (one
// before the first reply), the rest wait; the NFSv4.1 layer keeps to its backchannel slots
// too, and PendingCalls bounds them per connection whatever the caller does. A call that
// finds no send buffer or no send queue slot waits in order (starved_back_calls_), as
// replies do; its deadline runs meanwhile.
#include <spdlog/spdlog.h>

#include <cstring>

#include "transport/rdma/verbs/connection.h"
#include "transport/rdma/verbs/work.h"

namespace nfsrdmad::rdma::verbs {

namespace {
// The most reverse calls out at once whatever the client grants (its backchannel has one
// or a few slots; the Linux client grants its few backchannel receive buffers).
constexpr uint32_t kMostReverseCredits = 16;
}  // namespace

bool ReverseCallPort::send_call(uint32_t xid, std::vector<uint8_t> message,
                                std::chrono::milliseconds timeout, rpc::PendingCalls::Done done) {
    reactor_.post([conn = conn_, &workers = workers_, xid, message = std::move(message), timeout,
                   done = std::move(done)]() mutable {
        if (auto c = conn.lock())
            return c->start_back_call(xid, std::move(message), timeout, std::move(done));
        workers.submit([done] {
            rpc::CallbackResult r;
            r.error = "the connection closed";
            done(std::move(r));
        });
    });
    return true;
}

void Connection::start_back_call(uint32_t xid, std::vector<uint8_t> message,
                                 std::chrono::milliseconds timeout, rpc::PendingCalls::Done done) {
    auto refuse = [&](std::string why) {
        rpc::CallbackResult r;
        r.error = std::move(why);
        std::vector<rpc::PendingCalls::Finished> f;
        f.push_back({std::move(done), std::move(r)});
        finish_back_calls(std::move(f));
    };
    const size_t room = std::min(opts_.peer_receive, dev_->sends().buffer_size());
    if (closed_) return refuse("the connection closed");
    if (kMinHeader + message.size() > room)
        return refuse("the call (" + std::to_string(message.size()) +
                      " bytes) does not fit the peer's inline receive (" + std::to_string(room) +
                      " bytes, RFC 8167 §5.1)");
    const auto deadline = engine::Reactor::Clock::now() + timeout;
    if (!pending_.add(xid, deadline, done)) return refuse("too many calls in flight");
    count(Tc::back_calls);
    starved_back_calls_.emplace_back(xid, std::move(message));
    retry_starved();
    std::weak_ptr<Connection> weak = weak_from_this();
    reactor_.after(timeout, [weak] {
        if (auto c = weak.lock())
            c->finish_back_calls(c->pending_.expire(engine::Reactor::Clock::now()));
    });
}

bool Connection::try_send_back_call(uint32_t xid, const std::vector<uint8_t>& message) {
    if (!pending_.contains(xid)) return true;  // timed out while it waited: nothing to send
    if (!sq_.free()) {
        wait_for_send_queue(true);
        return false;
    }
    auto sb = dev_->sends().get();
    if (!sb) {
        short_of_ = &dev_->sends();
        return false;
    }
    // §4.2: the credits a reverse call carries ask for reverse credits; one at a time is what
    // the NFSv4.1 layer uses (the Linux client's backchannel has one slot).
    auto hdr = encode_reverse_call_header(xid, 1);
    std::memcpy(sb->data(), hdr.data(), hdr.size());
    std::memcpy(sb->data() + hdr.size(), message.data(), message.size());
    count(Tc::staged_bytes, hdr.size() + message.size());
    // A call of ours, not a reply to a forward call: it holds no credit.
    post_inline_send(std::move(sb), hdr.size() + message.size(), false, "reverse call");
    back_sent_.push_back(xid);
    return true;
}

bool Connection::on_reverse_reply(std::span<const uint8_t> msg) {
    // The peer could not take a call of ours (RFC 8166 §4.5): it fails now, not at its
    // deadline.
    if (const uint32_t xid = rdma_error_xid(msg); xid && pending_.contains(xid)) {
        std::vector<rpc::PendingCalls::Finished> v;
        v.push_back(std::move(*pending_.fail(xid, "the peer answered RDMA_ERROR")));
        finish_back_calls(std::move(v));
        return true;
    }
    std::span<const uint8_t> rpc = reverse_reply(msg);
    if (rpc.empty()) return false;
    back_grant_ = reverse_grant(msg, kMostReverseCredits);
    if (auto f = pending_.on_reply(rpc)) {
        std::vector<rpc::PendingCalls::Finished> v;
        v.push_back(std::move(*f));
        finish_back_calls(std::move(v));
    } else {
        count(Tc::stray_replies);  // late (timed out) or not ours: dropped
    }
    return true;
}

void Connection::finish_back_calls(std::vector<rpc::PendingCalls::Finished> f) {
    if (f.empty()) return;
    // Answered, failed or timed out: no longer out; a call waiting for the grant may go.
    std::erase_if(back_sent_, [&](uint32_t x) { return !pending_.contains(x); });
    if (!starved_back_calls_.empty() && !closed_) retry_starved();
    for (const auto& x : f)
        if (!x.result.ok) count(Tc::back_failed);
    auto shared = std::make_shared<std::vector<rpc::PendingCalls::Finished>>(std::move(f));
    svc_.workers.submit([shared] {
        for (auto& x : *shared) x.done(std::move(x.result));
    });
}

}  // namespace nfsrdmad::rdma::verbs
