#include "nfs/v4/callback/path.h"

#include <spdlog/spdlog.h>

#include <algorithm>

#include "xdr/nfs4_prot.h"

namespace nfsrdmad::nfs::v4 {

namespace {

void fail_all(std::vector<std::pair<CallbackPaths::CbDone, std::string>>& failed) {
    for (auto& [done, why] : failed) done(std::nullopt, why);
}

}  // namespace

rpc::BackCall CallbackPaths::base_call(const Path& p, uint32_t proc) const {
    // The parameters of the session the path's connection serves (BACKCHANNEL_CTL may have
    // changed them since the bind).
    const state::CallbackParams* cb = &p.cb;
    if (auto c = p.session_of.find(p.conn); c != p.session_of.end())
        if (auto s = p.sessions.find(c->second); s != p.sessions.end()) cb = &s->second.cb;
    rpc::BackCall c;
    c.prog = cb->program;
    c.vers = kCbVersion;
    c.proc = proc;
    c.flavor = cb->flavor;
    c.uid = cb->uid;
    c.gid = cb->gid;
    c.timeout = timeout_;
    return c;
}

void CallbackPaths::bound(state::ClientId client, state::ConnId conn,
                          const state::CallbackParams& cb) {
    if (!channels_) return;
    Probe pr;
    {
        std::lock_guard l(mu_);
        changed();
        Path& p = paths_[client];
        p.cb = cb;
        p.session_of[conn] = cb.session;
        p.bindings.emplace(cb.session, conn);
        Slots& s = p.sessions[cb.session];
        s.cb = cb;
        if (s.seqid.empty()) {
            const size_t n = std::clamp<size_t>(cb.back_slots, 1, kMaxSlots);
            s.seqid.assign(n, 1);  // §20.9.3: a slot's first sequence id is 1
            s.busy.assign(n, false);
        }
        if (std::find(p.conns.begin(), p.conns.end(), conn) == p.conns.end())
            p.conns.push_back(conn);
        if (p.state == State::Up) return;  // one that works already: no probe per session
        p.conn = conn;
        pr = start_probe(client, p);
    }
    send(std::move(pr));
}

CallbackPaths::Probe CallbackPaths::start_probe(state::ClientId client, Path& p) {
    p.state = State::Probing;
    p.probe = ++probes_;
    Probe pr;
    pr.client = client;
    pr.conn = p.conn;
    pr.id = p.probe;
    pr.call = base_call(p, kCbNull);
    return pr;
}

// Outside mu_: the call may drop the last reference to a connection, whose end comes
// back here (connection_closed).
void CallbackPaths::send(Probe pr) {
    const state::ClientId client = pr.client;
    const state::ConnId conn = pr.conn;
    const uint64_t id = pr.id;
    auto done = [this, client, id, conn](rpc::CallbackResult r) {
        std::vector<Outgoing> out;
        {
            std::lock_guard l(mu_);
            changed();
            auto it = paths_.find(client);
            if (it == paths_.end() || it->second.probe != id) return;
            it->second.state = r.ok ? State::Up : State::Down;
            if (r.ok) {
                spdlog::info("nfsv4.1: callback path to client {:#x} up (CB_NULL on connection {})",
                             client, conn);
                pump(client, it->second, out);
            } else {
                spdlog::warn(
                    "nfsv4.1: callback path to client {:#x} down: CB_NULL on connection {}: {}",
                    client, conn, r.error);
            }
        }
        send_calls(std::move(out));
    };
    if (channels_->call(conn, std::move(pr.call), std::move(done))) return;
    std::lock_guard l(mu_);
    changed();
    auto it = paths_.find(client);
    if (it == paths_.end() || it->second.probe != id) return;
    it->second.state = State::Down;
    spdlog::warn("nfsv4.1: callback path to client {:#x} down: connection {} carries no calls",
                 client, conn);
}

void CallbackPaths::compound(state::ClientId client, CbOps ops, Clock::time_point deadline,
                             CbDone done) {
    std::vector<Outgoing> out;
    std::string refused;
    {
        std::lock_guard l(mu_);
        changed();
        auto it = channels_ ? paths_.find(client) : paths_.end();
        if (it == paths_.end()) {
            refused = "the client has no backchannel";
        } else if (it->second.queue.size() >= kMaxQueued) {
            refused = "too many callbacks queued for the client";
        } else {
            it->second.queue.push_back(Queued{std::move(ops), deadline, std::move(done)});
            pump(client, it->second, out);
        }
    }
    if (!refused.empty()) {
        done(std::nullopt, refused);
        return;
    }
    send_calls(std::move(out));
}

void CallbackPaths::pump(state::ClientId client, Path& p, std::vector<Outgoing>& out) {
    if (p.state != State::Up || p.conn == 0) return;
    auto sit = p.session_of.find(p.conn);
    if (sit == p.session_of.end()) return;
    auto slots = p.sessions.find(sit->second);
    if (slots == p.sessions.end()) return;
    Slots& s = slots->second;
    while (!p.queue.empty()) {
        auto free = std::find(s.busy.begin(), s.busy.end(), false);
        if (free == s.busy.end()) return;
        const uint32_t slot = static_cast<uint32_t>(free - s.busy.begin());
        *free = true;
        Queued q = std::move(p.queue.front());
        p.queue.pop_front();
        Outgoing o;
        o.client = client;
        o.conn = p.conn;
        o.session = sit->second;
        o.slot = slot;
        o.what = q.ops.what;
        o.done = std::move(q.done);
        o.call = base_call(p, kCbCompound);
        CbSlot cs{sit->second, slot, s.seqid[slot], static_cast<uint32_t>(s.busy.size() - 1)};
        o.call.args = encode_cb_compound(cs, q.ops);
        out.push_back(std::move(o));
    }
}

void CallbackPaths::send_calls(std::vector<Outgoing> out) {
    for (Outgoing& o : out) {
        auto shared = std::make_shared<Outgoing>(std::move(o));
        rpc::BackCall call = std::move(shared->call);
        auto done = [this, shared](rpc::CallbackResult r) { finish_call(*shared, r); };
        if (!channels_->call(shared->conn, std::move(call), std::move(done))) {
            rpc::CallbackResult r;
            r.error = "the connection carries no calls";
            finish_call(*shared, r);
        }
    }
}

void CallbackPaths::finish_call(const Outgoing& o, const rpc::CallbackResult& r) {
    std::optional<CbReply> reply;
    std::string why;
    if (!r.ok) {
        why = r.error;
    } else {
        CbReply cr;
        if (decode_cb_compound(r.results, cr))
            reply = std::move(cr);
        else
            why = "the client's CB_COMPOUND reply does not decode";
    }
    std::vector<Outgoing> out;
    {
        std::lock_guard l(mu_);
        changed();
        auto it = paths_.find(o.client);
        if (it != paths_.end()) {
            Path& p = it->second;
            if (auto s = p.sessions.find(o.session);
                s != p.sessions.end() && o.slot < s->second.busy.size()) {
                s->second.busy[o.slot] = false;
                // §20.9.3: the client took the sequence id (it answered CB_SEQUENCE, or
                // found it a replay it no longer holds): the slot's next is one more. So
                // too when it found the id reused for another call (SEQ_FALSE_RETRY: its
                // reply to the earlier call was lost, and this slot sent the next call on
                // the same id).
                if (reply && (reply->sequence == x4::NFS4_OK ||
                              reply->sequence == x4::NFS4ERR_RETRY_UNCACHED_REP ||
                              reply->sequence == x4::NFS4ERR_SEQ_FALSE_RETRY))
                    ++s->second.seqid[o.slot];
            }
            // DELAY, RETRY_UNCACHED_REP and SEQ_FALSE_RETRY: the client is there; the caller
            // may try again.
            const bool path_failed =
                !reply || (reply->sequence != x4::NFS4_OK && reply->sequence != x4::NFS4ERR_DELAY &&
                           reply->sequence != x4::NFS4ERR_RETRY_UNCACHED_REP &&
                           reply->sequence != x4::NFS4ERR_SEQ_FALSE_RETRY);
            if (path_failed && p.conn == o.conn && p.state == State::Up) {
                p.state = State::Down;
                ++p.probe;
                spdlog::warn("nfsv4.1: callback path to client {:#x} down: {} on connection {}: {}",
                             o.client, o.what, o.conn,
                             reply ? "CB_SEQUENCE status " + std::to_string(reply->sequence) : why);
            }
            pump(o.client, p, out);
        }
    }
    o.done(std::move(reply), why);
    send_calls(std::move(out));
}

void CallbackPaths::tick() {
    const auto now = Clock::now();
    Failed failed;
    {
        std::lock_guard l(mu_);  // only queues: no path's state changes here
        for (auto& [client, p] : paths_) {
            auto& q = p.queue;
            for (auto it = q.begin(); it != q.end();) {
                if (it->deadline > now) {
                    ++it;
                    continue;
                }
                failed.emplace_back(std::move(it->done), "not sent: the callback path is down");
                it = q.erase(it);
            }
        }
    }
    fail_all(failed);
}

size_t CallbackPaths::queued(state::ClientId client) const {
    std::lock_guard l(mu_);
    auto it = paths_.find(client);
    return it == paths_.end() ? 0 : it->second.queue.size();
}

void CallbackPaths::connection_closed(state::ConnId conn) {
    std::vector<Probe> next;
    {
        std::lock_guard l(mu_);
        changed();
        for (auto& [client, p] : paths_) {
            std::erase(p.conns, conn);
            p.session_of.erase(conn);
            std::erase_if(p.bindings, [&](const auto& b) { return b.second == conn; });
            if (p.conn != conn) continue;
            p.conn = 0;
            ++p.probe;               // a probe still out on it no longer counts
            if (!p.conns.empty()) {  // another bound connection: try it
                p.conn = p.conns.back();
                next.push_back(start_probe(client, p));
                continue;
            }
            if (p.state != State::Down)
                spdlog::info("nfsv4.1: callback path to client {:#x} down: its connection closed",
                             client);
            p.state = State::Down;
        }
    }
    for (Probe& pr : next) send(std::move(pr));
}

void CallbackPaths::forget(state::ClientId client) {
    Failed failed;
    {
        std::lock_guard l(mu_);
        changed();
        auto it = paths_.find(client);
        if (it == paths_.end()) return;
        for (Queued& q : it->second.queue)
            failed.emplace_back(std::move(q.done), "the client is gone");
        paths_.erase(it);
    }
    fail_all(failed);
}

void CallbackPaths::session_destroyed(state::ClientId client, const state::SessionId& session) {
    std::optional<Probe> next;
    {
        std::lock_guard l(mu_);
        changed();
        auto it = paths_.find(client);
        if (it == paths_.end()) return;
        Path& p = it->second;
        p.sessions.erase(session);
        std::erase_if(p.session_of, [&](const auto& kv) { return kv.second == session; });
        std::erase_if(p.bindings, [&](const auto& b) { return b.first == session; });
        // A connection that serves another session's backchannel too goes on serving it.
        for (const auto& [s, c] : p.bindings) p.session_of.try_emplace(c, s);
        // A connection left without a session's backchannel carries no more calls (the
        // client binds one of a live session: BIND_CONN_TO_SESSION, or its new session).
        std::erase_if(p.conns, [&](state::ConnId c) { return !p.session_of.count(c); });
        if (p.conn == 0 || p.session_of.count(p.conn)) return;
        p.conn = 0;
        ++p.probe;
        if (!p.conns.empty()) {
            p.conn = p.conns.back();
            next = start_probe(client, p);
        } else {
            p.state = State::Down;
        }
    }
    if (next) send(std::move(*next));
}

void CallbackPaths::set_params(state::ClientId client, const state::SessionId& session,
                               const state::CallbackParams& cb) {
    std::optional<Probe> next;
    {
        std::lock_guard l(mu_);
        changed();
        auto it = paths_.find(client);
        if (it == paths_.end()) return;  // no backchannel bound yet: the bind brings them
        Path& p = it->second;
        auto s = p.sessions.find(session);
        if (s == p.sessions.end()) return;
        s->second.cb.program = cb.program;
        s->second.cb.flavor = cb.flavor;
        s->second.cb.uid = cb.uid;
        s->second.cb.gid = cb.gid;
        // BACKCHANNEL_CTL is how a client mends a program or a credential the probe found
        // wrong: a path that is down is probed again, on a connection of this session (as
        // the Linux server probes after BACKCHANNEL_CTL).
        if (p.state == State::Down) {
            auto b = p.bindings.lower_bound({session, 0});
            if (b != p.bindings.end() && b->first == session) {
                p.conn = b->second;
                next = start_probe(client, p);
            }
        }
    }
    if (next) send(std::move(*next));
}

uint32_t CallbackPaths::status_flags(state::ClientId client, const state::SessionId& session,
                                     std::atomic<uint64_t>& memo) const {
    static_assert(xdr::nfs4::SEQ4_STATUS_CB_PATH_DOWN <= kMemoFlags &&
                  xdr::nfs4::SEQ4_STATUS_CB_PATH_DOWN_SESSION <= kMemoFlags);
    // The generation is read before the flags are: a change after it (bumped under mu_,
    // before or as the change is made) leaves the memo a generation behind, so the next
    // SEQUENCE reads them again.
    const uint64_t gen = generation_.load(std::memory_order_acquire) & kMemoGenerations;
    const uint64_t m = memo.load(std::memory_order_relaxed);
    if (m >> kMemoFlagBits == gen) return static_cast<uint32_t>(m & kMemoFlags);
    const uint32_t flags = status_flags(client, &session);
    memo.store(gen << kMemoFlagBits | flags, std::memory_order_relaxed);
    return flags;
}

uint32_t CallbackPaths::status_flags(state::ClientId client,
                                     const state::SessionId* session) const {
    namespace x4 = xdr::nfs4;
    std::lock_guard l(mu_);
    auto it = paths_.find(client);
    if (it == paths_.end()) return 0;
    const Path& p = it->second;
    uint32_t flags = p.state == State::Down ? x4::SEQ4_STATUS_CB_PATH_DOWN : 0;
    // §18.46.3: "the session has no operational backchannel": it had one (a connection
    // was bound to it), and now none is bound, or none of the client's works.
    if (session && p.sessions.count(*session)) {
        auto b = p.bindings.lower_bound({*session, 0});
        const bool bound = b != p.bindings.end() && b->first == *session;
        if (!bound || p.state == State::Down) flags |= x4::SEQ4_STATUS_CB_PATH_DOWN_SESSION;
    }
    return flags;
}

CallbackPaths::State CallbackPaths::state(state::ClientId client) const {
    std::lock_guard l(mu_);
    auto it = paths_.find(client);
    return it == paths_.end() ? State::Unknown : it->second.state;
}

}  // namespace nfsrdmad::nfs::v4
