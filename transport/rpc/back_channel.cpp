#include "transport/rpc/back_channel.h"

#include "xdr/runtime/xdr.h"

namespace nfsrdmad::rpc {

namespace {
constexpr uint32_t kCall = 0, kReply = 1, kMsgAccepted = 0, kSuccess = 0;
constexpr uint32_t kAuthNone = 0, kAuthSys = 1;
}  // namespace

std::vector<uint8_t> encode_back_call(uint32_t xid, const BackCall& c) {
    std::vector<uint8_t> out;
    xdr::Encoder e(out);
    for (uint32_t w : {xid, kCall, 2u, c.prog, c.vers, c.proc}) e.put_u32(w);
    if (c.flavor == kAuthSys) {
        // authsys_parms (RFC 5531 §A.2): stamp, machinename<255>, uid, gid, gids<16>.
        std::vector<uint8_t> body;
        xdr::Encoder b(body);
        b.put_u32(0);
        b.put_string(std::string_view(c.machine).substr(0, 255));
        b.put_u32(c.uid);
        b.put_u32(c.gid);
        b.put_u32(0);
        e.put_u32(kAuthSys);
        e.put_opaque(body);
    } else {
        e.put_u32(kAuthNone);
        e.put_u32(0);
    }
    e.put_u32(kAuthNone);  // verifier
    e.put_u32(0);
    out.insert(out.end(), c.args.begin(), c.args.end());
    return out;
}

bool is_reply(std::span<const uint8_t> msg, uint32_t* xid) {
    xdr::Decoder d(msg);
    const uint32_t x = d.get_u32(), type = d.get_u32();
    if (!d.ok() || type != kReply) return false;
    if (xid) *xid = x;
    return true;
}

bool parse_reply(std::span<const uint8_t> msg, std::vector<uint8_t>& results, std::string& why) {
    xdr::Decoder d(msg);
    (void)d.get_u32();  // xid
    const uint32_t type = d.get_u32(), stat = d.get_u32();
    if (!d.ok() || type != kReply) {
        why = "not a reply";
        return false;
    }
    if (stat != kMsgAccepted) {
        why = "call denied (MSG_DENIED)";
        return false;
    }
    (void)d.get_u32();        // verifier flavor
    (void)d.get_opaque(400);  // verifier body
    const uint32_t accept = d.get_u32();
    if (!d.ok()) {
        why = "truncated reply";
        return false;
    }
    if (accept != kSuccess) {
        why = "accept_stat " + std::to_string(accept);
        return false;
    }
    auto rest = d.rest();
    results.assign(rest.begin(), rest.end());
    return true;
}

bool PendingCalls::add(uint32_t xid, Clock::time_point deadline, Done done) {
    if (calls_.size() >= max_ || calls_.count(xid)) return false;
    calls_.emplace(xid, Call{deadline, std::move(done)});
    return true;
}

std::optional<PendingCalls::Finished> PendingCalls::on_reply(std::span<const uint8_t> msg) {
    uint32_t xid = 0;
    if (!is_reply(msg, &xid)) return std::nullopt;
    auto it = calls_.find(xid);
    if (it == calls_.end()) return std::nullopt;
    Finished f{std::move(it->second.done), {}};
    calls_.erase(it);
    f.result.ok = parse_reply(msg, f.result.results, f.result.error);
    return f;
}

std::optional<PendingCalls::Finished> PendingCalls::fail(uint32_t xid, const std::string& why) {
    auto it = calls_.find(xid);
    if (it == calls_.end()) return std::nullopt;
    Finished f{std::move(it->second.done), {}};
    f.result.error = why;
    calls_.erase(it);
    return f;
}

std::vector<PendingCalls::Finished> PendingCalls::expire(Clock::time_point now) {
    std::vector<Finished> out;
    for (auto it = calls_.begin(); it != calls_.end();) {
        if (it->second.deadline <= now) {
            CallbackResult r;
            r.error = "no reply in time";
            out.push_back({std::move(it->second.done), std::move(r)});
            it = calls_.erase(it);
        } else {
            ++it;
        }
    }
    return out;
}

std::vector<PendingCalls::Finished> PendingCalls::fail_all(const std::string& why) {
    std::vector<Finished> out;
    for (auto& [xid, c] : calls_) {
        CallbackResult r;
        r.error = why;
        out.push_back({std::move(c.done), std::move(r)});
    }
    calls_.clear();
    return out;
}

std::optional<PendingCalls::Clock::time_point> PendingCalls::next_deadline() const {
    std::optional<Clock::time_point> t;
    for (const auto& [xid, c] : calls_)
        if (!t || c.deadline < *t) t = c.deadline;
    return t;
}

void ChannelRegistry::add(uint64_t conn, std::weak_ptr<CallChannel> channel) {
    std::lock_guard l(mu_);
    channels_[conn] = std::move(channel);
}

void ChannelRegistry::remove(uint64_t conn) {
    std::lock_guard l(mu_);
    channels_.erase(conn);
}

size_t ChannelRegistry::size() const {
    std::lock_guard l(mu_);
    return channels_.size();
}

bool ChannelRegistry::call(uint64_t conn, BackCall c, PendingCalls::Done done) {
    std::shared_ptr<CallChannel> ch;
    uint32_t xid = 0;
    {
        std::lock_guard l(mu_);
        auto it = channels_.find(conn);
        if (it == channels_.end()) return false;
        ch = it->second.lock();
        xid = ++next_xid_;
    }
    if (!ch) return false;
    auto msg = encode_back_call(xid, c);
    return ch->send_call(xid, std::move(msg), c.timeout, std::move(done));
}

}  // namespace nfsrdmad::rpc
