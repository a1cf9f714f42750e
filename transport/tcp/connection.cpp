#include "transport/tcp/connection.h"

#include <fcntl.h>
#include <sys/ioctl.h>
#include <sys/socket.h>
#include <sys/uio.h>

#include <spdlog/spdlog.h>
#include <cerrno>
#include <climits>
#include <iterator>

namespace nfsrdmad::tcp {

Connection::Connection(engine::UniqueFd fd, rpc::Peer peer, engine::Reactor& reactor,
                       ConnectionServices services)
    : fd_(std::move(fd)),
      peer_(std::move(peer)),
      reactor_(reactor),
      svc_(services),
      assembler_(services.max_record, services.buffers, &services.counters.record_moved_bytes),
      pending_(services.max_back_calls) {}

// Workers hold a reference while a call runs, so this is when nothing of the
// connection is left: state bound to it (NFSv4.1 sessions) lets go now.
Connection::~Connection() {
    if (svc_.channels) svc_.channels->remove(peer_.conn);
    svc_.dispatcher.connection_closed(peer_.conn);
}

void Connection::start() {
    auto self = shared_from_this();
    if (svc_.channels) svc_.channels->add(peer_.conn, self);
    interest_ = EPOLLIN;
    reactor_.add(fd_.get(), interest_, [self](uint32_t ev) { self->on_events(ev); });
    touch();
    if (svc_.idle_timeout.count() > 0) arm_idle_timer(svc_.idle_timeout);
}

void Connection::arm_idle_timer(std::chrono::milliseconds delay) {
    // The timer must not keep a closed connection alive.
    std::weak_ptr<Connection> weak = weak_from_this();
    idle_timer_ = reactor_.after(delay, [weak] {
        if (auto self = weak.lock()) self->on_idle_timer();
    });
}

// Like knfsd's idle sweep: a connection that has sent no complete call and has no reply
// coming for idle_timeout is closed, also one stuck halfway through a record. One with
// calls running or replies queued is never idle.
void Connection::on_idle_timer() {
    idle_timer_ = {};
    if (closed_) return;
    auto now = engine::Reactor::coarse_now();  // as touch() reads it
    if (!idle()) touch();
    auto quiet = std::chrono::duration_cast<std::chrono::milliseconds>(
        now - last_activity_.load(std::memory_order_relaxed));
    if (quiet < svc_.idle_timeout) {
        arm_idle_timer(svc_.idle_timeout - quiet);
        return;
    }
    svc_.counters.idle_closed++;
    spdlog::debug("tcp: {} idle for {} s; closing", peer_.text,
                  std::chrono::duration_cast<std::chrono::seconds>(quiet).count());
    close();
}

void Connection::close() {
    if (closed_) return;
    closed_ = true;
    closing_ = true;
    svc_.counters.closed++;
    finish(pending_.fail_all("the connection closed"));
    reactor_.cancel(idle_timer_);
    reactor_.remove(fd_.get());  // drops the reactor's reference to us
    std::lock_guard lock(send_mu_);  // a worker may be writing a reply
    fd_.reset();
    out_.clear();
    queued_ = 0;
}

void Connection::on_events(uint32_t ev) {
    if (ev & (EPOLLERR | EPOLLHUP)) {
        close();
        return;
    }
    if (ev & EPOLLOUT) on_writable();
    if (!closed_ && (ev & EPOLLIN)) on_readable();
    update_interest();  // writing may have made room to read again, and vice versa
}

void Connection::on_readable() {
    // One record's worth of what commit() says: false when the connection closed.
    auto take_in = [this](size_t n) {
        switch (assembler_.commit(n)) {
            case RecordAssembler::Status::NeedMore:
                return true;
            case RecordAssembler::Status::TooLarge:
                svc_.counters.oversize_records++;
                spdlog::warn("tcp: {} sent a record over the {}-byte limit; closing", peer_.text,
                             svc_.max_record);
                close();
                return false;
            case RecordAssembler::Status::RecordReady:
                break;
        }
        svc_.counters.records++;
        touch();
        Record rec = assembler_.take();
        // A REPLY is the answer to a call of ours: matched here, never dispatched.
        if (rpc::is_reply(rec.bytes()))
            on_reply(rec);
        else
            submit(std::move(rec));
        return true;
    };
    // Bounded work per wake-up so one busy client cannot starve the others.
    for (int round = 0; round < 64 && !closed_; ++round) {
        if (saturated()) break;
        if (assembler_.sizing()) {  // a long fragment is arriving: how much of it is here?
            int waiting = 0;
            if (::ioctl(fd_.get(), FIONREAD, &waiting) == 0 && waiting > 0)
                assembler_.waiting(static_cast<size_t>(waiting));
        }
        const auto want = assembler_.want();
        const auto next = assembler_.next_header();  // read with a body's last bytes
        iovec iov[2] = {{want.data(), want.size()}, {next.data(), next.size()}};
        const size_t asked = want.size() + next.size();
        ssize_t n = ::readv(fd_.get(), iov, next.empty() ? 1 : 2);
        if (n == 0) {
            close();
            return;
        }
        if (n < 0) {
            if (errno == EAGAIN || errno == EINTR) break;
            close();
            return;
        }
        svc_.counters.bytes_in += n;
        const size_t got = static_cast<size_t>(n);
        const size_t body = std::min(got, want.size());
        if (!take_in(body)) return;
        if (got > body && (closed_ || !take_in(got - body))) return;
        // Less than asked: the socket is empty. Epoll is level-triggered and reports the
        // next bytes; a read now would only say EAGAIN (one system call per call saved).
        if (got < asked) break;
    }
}

void Connection::submit(Record rec) {
    ++in_flight_;
    // A call that needs no disk (a GETATTR of a file held open, a revalidating COMPOUND, a
    // small READ from the page cache: Dispatcher::dispatch_nowait) is answered here, on the loop's
    // thread: no worker is woken to take the loop over. The reply goes as a worker's would.
    // The call's header as the loop decoded it, when it left the call to a worker.
    std::optional<rpc::DecodedCall> decoded;
    if (svc_.reactor_calls && svc_.loop_payloads) {
        rpc::Message msg;
        msg.bytes = rec.bytes();
        msg.owner = rec.data;
        std::optional<rpc::Reply> reply;
        if (svc_.dispatcher.dispatch_nowait(msg, peer_, *svc_.loop_payloads, reply, &decoded)) {
            svc_.counters.reactor_calls++;
            answer(reply);
            return;
        }
    }
    run_on_worker(std::move(rec), std::move(decoded), {});
}

void Connection::run_on_worker(Record rec, std::optional<rpc::DecodedCall> decoded,
                               rpc::Deferral defer) {
    auto self = shared_from_this();
    svc_.workers.submit([self, rec = std::move(rec), decoded = std::move(decoded),
                         defer = std::move(defer)]() mutable {
        rpc::Message msg;
        msg.bytes = rec.bytes();
        msg.owner = rec.data;
        auto reply = self->svc_.dispatcher.dispatch(msg, self->peer_, self->svc_.payloads,
                                                    decoded ? &*decoded : nullptr, &defer);
        if (!reply && defer.after.count() > 0) {
            // Put off (rpc::Outcome::Later): the record stays the call's, and the call
            // in flight, until the loop runs it again on a worker (Connection::defer).
            self->reactor_.post([weak = self->weak_from_this(), rec = std::move(rec),
                                 decoded = std::move(decoded), defer = std::move(defer)]() mutable {
                if (auto again = weak.lock())
                    again->defer(std::move(rec), std::move(decoded), std::move(defer));
            });
            return;
        }
        self->answer(reply);
    });
}

void Connection::defer(Record rec, std::optional<rpc::DecodedCall> decoded, rpc::Deferral defer) {
    const uint64_t key = ++next_deferred_;
    const auto after = defer.after;
    Deferred& d = deferred_[key];
    d.rec = std::move(rec);
    d.decoded = std::move(decoded);
    d.defer = std::move(defer);
    d.timer = reactor_.after(after, [weak = weak_from_this(), key] {
        if (auto self = weak.lock()) self->run_deferred(key, false);
    });
    // The waker runs on whichever thread saw the event: it only posts to this loop. None
    // for a woken run put off again: its timer runs it (Deferral::wakeable).
    if (!d.defer.wakeable) return;
    const auto& wakes = svc_.dispatcher.deferred_wakes();
    d.wake = wakes->add([r = &reactor_, weak = weak_from_this(), key] {
        r->post([weak, key] {
            if (auto self = weak.lock()) self->run_deferred(key, true);
        });
    });
    // A wake-up while the call ran, before it was registered: it runs again now.
    if (wakes->generation() != d.defer.wakes_seen) run_deferred(key, true);
}

void Connection::run_deferred(uint64_t key, bool woken) {
    auto it = deferred_.find(key);
    if (it == deferred_.end()) return;  // run already (by the other of timer and wake-up)
    if (woken) {
        reactor_.cancel(it->second.timer);
        svc_.dispatcher.deferred_wakes()->note_woken();
    }
    Deferred d = std::move(it->second);
    deferred_.erase(it);
    d.wake.reset();  // no wake-up runs it twice
    d.defer.woken = woken;
    run_on_worker(std::move(d.rec), std::move(d.decoded), std::move(d.defer));
}

void Connection::answer(std::optional<rpc::Reply>& reply) {
    if (reply && write_from_worker(*reply) == Sent::Full) {
        // Queued (behind other replies, for a pipe, or what a full socket left): the
        // reactor writes it when the socket has room.
        auto self = shared_from_this();
        reactor_.post([self] {
            --self->in_flight_;
            if (!self->closed_) {
                self->on_writable();
                self->update_interest();
            }
        });
        return;
    }
    call_done();
}

Connection::Sent Connection::write_from_worker(rpc::Reply& reply) {
    std::lock_guard lock(send_mu_);
    if (closing_) return Sent::All;  // the connection is gone: so is the reply
    const bool first = out_.empty();
    Outgoing& o = out_.emplace_back();
    build(o, std::move(reply));
    queued_ = out_.size();
    if (!first || o.piped) return Sent::Full;  // order of bytes on the socket; splice: reactor
    // A reply is a handful of pieces (record mark, header and results, payloads): on the
    // stack, no allocation per reply, unless it has more.
    iovec local[8];
    std::vector<iovec> more;
    iovec* iov = local;
    if (o.pieces.size() > std::size(local)) {
        more.resize(o.pieces.size());
        iov = more.data();
    }
    for (size_t i = 0; i < o.pieces.size(); ++i)
        iov[i] = {const_cast<uint8_t*>(o.pieces[i].data), o.pieces[i].size};
    ssize_t n = ::writev(fd_.get(), iov, static_cast<int>(o.pieces.size()));
    if (n < 0) return Sent::Full;  // EAGAIN, or an error the reactor will find and close on
    svc_.counters.bytes_out += n;
    o.sent = static_cast<size_t>(n);
    if (o.sent < o.total) return Sent::Full;
    svc_.counters.payload_copied_bytes += o.payload_bytes;
    svc_.counters.worker_replies++;
    out_.pop_back();
    queued_ = out_.size();
    touch();
    return Sent::All;
}

void Connection::call_done() {
    in_flight_.fetch_sub(1);
    // Dekker with update_interest(): it raises paused_ and then looks at in_flight_, this
    // lowers in_flight_ and then looks at paused_; one of the two sees the other.
    if (paused_.load()) {
        auto self = shared_from_this();
        reactor_.post([self] {
            if (!self->closed_) self->update_interest();
        });
    }
}

bool Connection::send_call(uint32_t xid, std::vector<uint8_t> message,
                           std::chrono::milliseconds timeout, rpc::PendingCalls::Done done) {
    if (closing_) return false;
    auto self = shared_from_this();
    reactor_.post([self, xid, message = std::move(message), timeout,
                   done = std::move(done)]() mutable {
        const auto deadline = engine::Reactor::Clock::now() + timeout;
        if (self->closed_ || !self->pending_.add(xid, deadline, done)) {
            rpc::CallbackResult r;
            r.error = self->closed_ ? "the connection closed" : "too many calls in flight";
            std::vector<rpc::PendingCalls::Finished> f;
            f.push_back({std::move(done), std::move(r)});
            self->finish(std::move(f));
            return;
        }
        self->svc_.counters.back_calls++;
        rpc::Reply r;
        r.bytes = std::move(message);
        self->queue_reply(std::move(r));
        self->on_writable();
        if (!self->closed_) self->update_interest();
        std::weak_ptr<Connection> weak = self;
        self->reactor_.after(timeout, [weak] {
            if (auto c = weak.lock()) c->expire_calls();
        });
    });
    return true;
}

void Connection::on_reply(const Record& rec) {
    if (auto f = pending_.on_reply(rec.bytes())) {
        std::vector<rpc::PendingCalls::Finished> v;
        v.push_back(std::move(*f));
        finish(std::move(v));
        return;
    }
    svc_.counters.stray_replies++;  // late (timed out) or not ours: dropped
}

void Connection::expire_calls() { finish(pending_.expire(engine::Reactor::Clock::now())); }

void Connection::finish(std::vector<rpc::PendingCalls::Finished> f) {
    if (f.empty()) return;
    for (const auto& x : f)
        if (!x.result.ok) svc_.counters.back_failed++;
    auto shared = std::make_shared<std::vector<rpc::PendingCalls::Finished>>(std::move(f));
    svc_.workers.submit([shared] {
        for (auto& x : *shared) x.done(std::move(x.result));
    });
}

void Connection::queue_reply(rpc::Reply reply) {
    std::lock_guard lock(send_mu_);
    build(out_.emplace_back(), std::move(reply));
    queued_ = out_.size();
}

void Connection::build(Outgoing& o, rpc::Reply reply) {
    size_t len = reply.bytes.size();
    for (const auto& p : reply.payloads) len += p.data.size();
    // Built in place: the pieces point at the mark, which must not move after.
    uint32_t h = kLastFragment | static_cast<uint32_t>(len);
    o.mark[0] = h >> 24;
    o.mark[1] = h >> 16;
    o.mark[2] = h >> 8;
    o.mark[3] = h;
    o.reply = std::move(reply);
    o.pieces = reply_pieces(o.mark, o.reply);
    for (const Piece& p : o.pieces) {
        o.total += p.size;
        if (p.pipe >= 0) o.piped = true;
        if (p.payload && p.data) o.payload_bytes += p.size;
    }
}

namespace {

// Appends the part of [p, p+n) that lies at or after `skip` bytes into the message.
void add_iov(std::vector<iovec>& v, const uint8_t* p, size_t n, size_t& skip) {
    if (skip >= n) {
        skip -= n;
        return;
    }
    v.push_back({const_cast<uint8_t*>(p + skip), n - skip});
    skip = 0;
}

}  // namespace

void Connection::on_writable() {
    if (closed_) return;
    Sent s;
    {
        std::lock_guard lock(send_mu_);
        s = write_queued();
    }
    if (s == Sent::Failed) close();
}

Connection::Sent Connection::write_queued() {
    std::vector<iovec> iov;
    while (!out_.empty()) {
        if (out_.front().piped) {
            if (Sent s = send_piped(out_.front()); s != Sent::All) return s;
            svc_.counters.payload_copied_bytes += out_.front().payload_bytes;
            touch();
            out_.pop_front();
            queued_ = out_.size();
            continue;
        }
        iov.clear();
        // Gather the queued replies up to the next piped one: mark, inline bytes, each
        // payload from where it was read, in stream order.
        for (auto& o : out_) {
            if (o.piped || (!iov.empty() && iov.size() + o.pieces.size() > IOV_MAX)) break;
            size_t skip = o.sent;
            for (const Piece& p : o.pieces) add_iov(iov, p.data, p.size, skip);
        }
        ssize_t n = ::writev(fd_.get(), iov.data(), static_cast<int>(iov.size()));
        if (n < 0) {
            if (errno == EAGAIN) return Sent::Full;
            if (errno == EINTR) continue;
            return Sent::Failed;
        }
        svc_.counters.bytes_out += n;
        size_t left = static_cast<size_t>(n);
        while (left > 0 && !out_.empty()) {
            auto& o = out_.front();
            size_t rest = o.total - o.sent;
            if (left < rest) {
                o.sent += left;
                left = 0;
            } else {
                left -= rest;
                svc_.counters.payload_copied_bytes += o.payload_bytes;
                touch();
                out_.pop_front();
                queued_ = out_.size();
            }
        }
    }
    return Sent::All;
}

// One reply with READ data waiting in a pipe (or several, one per payload):
//
//   [mark | inline up to the data]  [data: pipe ──splice──► socket | rest of data]  [pad | rest]
//         sendmsg(MSG_MORE)                 splice                 sendmsg (from memory)
//
// Memory pieces between two pipe pieces go in one sendmsg; `sent` counts through it
// all, so a full socket can stop and resume anywhere.
Connection::Sent Connection::send_piped(Outgoing& o) {
    const auto& pieces = o.pieces;
    while (o.sent < o.total) {
        size_t i = 0, at = 0;  // the piece o.sent lies in, and where it starts
        while (at + pieces[i].size <= o.sent) at += pieces[i++].size;
        ssize_t n;
        if (pieces[i].pipe >= 0) {
            const size_t end = at + pieces[i].size;
            n = ::splice(pieces[i].pipe, nullptr, fd_.get(), nullptr, end - o.sent,
                         SPLICE_F_NONBLOCK | (o.total > end ? SPLICE_F_MORE : 0));
            if (n == 0) {  // the pipe ran dry before the promised bytes: cannot recover
                spdlog::error("tcp: {}: spliced READ data lost; closing", peer_.text);
                return Sent::Failed;
            }
            if (n > 0) svc_.counters.payload_spliced_bytes += n;
        } else {
            std::vector<iovec> iov;
            size_t skip = o.sent - at;
            size_t j = i;
            for (; j < pieces.size() && pieces[j].pipe < 0; ++j)
                add_iov(iov, pieces[j].data, pieces[j].size, skip);
            msghdr msg{};
            msg.msg_iov = iov.data();
            msg.msg_iovlen = iov.size();
            n = ::sendmsg(fd_.get(), &msg, (j < pieces.size() ? MSG_MORE : 0) | MSG_NOSIGNAL);
        }
        if (n < 0) {
            if (errno == EINTR) continue;
            if (errno == EAGAIN) return Sent::Full;
            return Sent::Failed;
        }
        o.sent += static_cast<size_t>(n);
        svc_.counters.bytes_out += n;
    }
    return Sent::All;
}

void Connection::update_interest() {
    if (closed_) return;
    uint32_t want = 0;
    if (!saturated()) {
        want |= EPOLLIN;
        paused_.store(false, std::memory_order_relaxed);
    } else {
        // Stop reading; a worker finishing a call then posts a look (call_done()). Looked
        // at again after raising the flag, for a call that finished just before.
        paused_.store(true);
        if (!saturated()) {
            want |= EPOLLIN;
            paused_.store(false, std::memory_order_relaxed);
        }
    }
    if (queued_ > 0) want |= EPOLLOUT;
    if (want != interest_) {
        interest_ = want;
        reactor_.modify(fd_.get(), want);
    }
}

}  // namespace nfsrdmad::tcp
