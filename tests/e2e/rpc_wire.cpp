#include "tests/e2e/rpc_wire.h"

#include <arpa/inet.h>
#include <netinet/in.h>
#include <netinet/tcp.h>
#include <poll.h>
#include <sys/socket.h>
#include <unistd.h>

#include <cerrno>
#include <chrono>
#include <cstring>
#include <sstream>

namespace nfsrdmad::e2e::wire {

namespace {

int64_t NowMs() {
    return std::chrono::duration_cast<std::chrono::milliseconds>(
               std::chrono::steady_clock::now().time_since_epoch())
        .count();
}

}  // namespace

void PutU32(Bytes& b, uint32_t v) {
    b.push_back(static_cast<uint8_t>(v >> 24));
    b.push_back(static_cast<uint8_t>(v >> 16));
    b.push_back(static_cast<uint8_t>(v >> 8));
    b.push_back(static_cast<uint8_t>(v));
}

XdrOut& XdrOut::u32(uint32_t v) {
    PutU32(b_, v);
    return *this;
}

XdrOut& XdrOut::u64(uint64_t v) {
    u32(static_cast<uint32_t>(v >> 32));
    return u32(static_cast<uint32_t>(v));
}

XdrOut& XdrOut::opaque(const void* p, size_t n) {
    u32(static_cast<uint32_t>(n));
    raw(p, n);
    while (b_.size() % 4 != 0) b_.push_back(0);
    return *this;
}

XdrOut& XdrOut::raw(const void* p, size_t n) {
    const auto* c = static_cast<const uint8_t*>(p);
    b_.insert(b_.end(), c, c + n);
    return *this;
}

bool XdrIn::u32(uint32_t* v) {
    if (remaining() < 4) return false;
    *v = (uint32_t{b_[off_]} << 24) | (uint32_t{b_[off_ + 1]} << 16) |
         (uint32_t{b_[off_ + 2]} << 8) | uint32_t{b_[off_ + 3]};
    off_ += 4;
    return true;
}

bool XdrIn::u64(uint64_t* v) {
    uint32_t hi = 0, lo = 0;
    if (!u32(&hi) || !u32(&lo)) return false;
    *v = (uint64_t{hi} << 32) | lo;
    return true;
}

bool XdrIn::opaque(Bytes* out, size_t max_len) {
    uint32_t n = 0;
    if (!u32(&n) || n > max_len) return false;
    size_t padded = (static_cast<size_t>(n) + 3) & ~size_t{3};
    if (remaining() < padded) return false;
    out->assign(b_.begin() + static_cast<long>(off_), b_.begin() + static_cast<long>(off_ + n));
    off_ += padded;
    return true;
}

bool XdrIn::skip(size_t n) {
    if (remaining() < n) return false;
    off_ += n;
    return true;
}

Bytes EncodeCall(const Call& c) {
    XdrOut x;
    x.u32(c.xid).u32(kCall).u32(c.rpcvers).u32(c.prog).u32(c.vers).u32(c.proc);
    x.u32(c.cred_flavor).opaque(c.cred_body);
    x.u32(c.verf_flavor).opaque(c.verf_body);
    x.raw(c.args);
    return x.take();
}

Bytes AuthSysBody(uint32_t stamp, std::string_view machine, uint32_t uid, uint32_t gid,
                  const std::vector<uint32_t>& gids) {
    XdrOut x;
    x.u32(stamp).str(machine).u32(uid).u32(gid).u32(static_cast<uint32_t>(gids.size()));
    for (uint32_t g : gids) x.u32(g);
    return x.take();
}

Call RootCall(uint32_t xid, uint32_t prog, uint32_t vers, uint32_t proc, Bytes args) {
    Call c;
    c.xid = xid;
    c.prog = prog;
    c.vers = vers;
    c.proc = proc;
    c.cred_flavor = kAuthSys;
    c.cred_body = AuthSysBody(0x5eed, "e2e-test", 0, 0, {0});
    c.args = std::move(args);
    return c;
}

Bytes RecordMark(uint32_t len, bool last) {
    Bytes b;
    PutU32(b, (last ? kLastFragment : 0u) | len);
    return b;
}

Bytes Frame(const Bytes& payload) {
    Bytes b = RecordMark(static_cast<uint32_t>(payload.size()), true);
    b.insert(b.end(), payload.begin(), payload.end());
    return b;
}

Bytes FrameFragments(const Bytes& payload, const std::vector<size_t>& sizes) {
    Bytes b;
    size_t off = 0;
    for (size_t i = 0; i < sizes.size(); ++i) {
        bool last = i + 1 == sizes.size();
        Bytes m = RecordMark(static_cast<uint32_t>(sizes[i]), last);
        b.insert(b.end(), m.begin(), m.end());
        b.insert(b.end(), payload.begin() + static_cast<long>(off),
                 payload.begin() + static_cast<long>(off + sizes[i]));
        off += sizes[i];
    }
    return b;
}

Reply ParseReply(const Bytes& record) {
    Reply r;
    XdrIn in(record);
    auto bad = [&](const std::string& what) {
        r.parse_error = what + " (record of " + std::to_string(record.size()) + " bytes)";
        return r;
    };
    if (!in.u32(&r.xid) || !in.u32(&r.msg_type)) return bad("truncated reply header");
    if (r.msg_type != kReply)
        return bad("msg_type is " + std::to_string(r.msg_type) + ", not REPLY");
    if (!in.u32(&r.reply_stat)) return bad("missing reply_stat");
    if (r.reply_stat == kMsgAccepted) {
        if (!in.u32(&r.verf_flavor) || !in.opaque(&r.verf_body, 400))
            return bad("bad reply verifier");
        if (!in.u32(&r.accept_stat)) return bad("missing accept_stat");
        if (r.accept_stat == kProgMismatch) {
            if (!in.u32(&r.mismatch_low) || !in.u32(&r.mismatch_high))
                return bad("truncated PROG_MISMATCH info");
        } else if (r.accept_stat == kSuccess) {
            r.results.assign(record.begin() + static_cast<long>(in.offset()), record.end());
        }
        return r;
    }
    if (r.reply_stat == kMsgDenied) {
        if (!in.u32(&r.reject_stat)) return bad("missing reject_stat");
        if (r.reject_stat == kRpcMismatch) {
            if (!in.u32(&r.mismatch_low) || !in.u32(&r.mismatch_high))
                return bad("truncated RPC_MISMATCH info");
        } else if (r.reject_stat == kAuthError) {
            if (!in.u32(&r.auth_stat)) return bad("missing auth_stat");
        } else {
            return bad("unknown reject_stat " + std::to_string(r.reject_stat));
        }
        return r;
    }
    return bad("unknown reply_stat " + std::to_string(r.reply_stat));
}

std::string Reply::Describe() const {
    std::ostringstream o;
    if (!parse_error.empty()) return "unparseable reply: " + parse_error;
    o << "xid=" << xid;
    if (reply_stat == kMsgAccepted) {
        o << " MSG_ACCEPTED accept_stat=" << accept_stat;
        if (accept_stat == kProgMismatch) o << " low=" << mismatch_low << " high=" << mismatch_high;
        if (accept_stat == kSuccess) o << " results=" << results.size() << " bytes";
    } else {
        o << " MSG_DENIED reject_stat=" << reject_stat;
        if (reject_stat == kRpcMismatch) o << " low=" << mismatch_low << " high=" << mismatch_high;
        if (reject_stat == kAuthError) o << " auth_stat=" << auth_stat;
    }
    return o.str();
}

std::unique_ptr<Conn> Conn::OpenFrom(uint16_t port, bool reserved, std::string* why) {
    int fd = ::socket(AF_INET, SOCK_STREAM | SOCK_CLOEXEC, 0);
    if (fd < 0) {
        *why = std::string("socket: ") + std::strerror(errno);
        return nullptr;
    }
    if (reserved) {
        int one = 1;
        ::setsockopt(fd, SOL_SOCKET, SO_REUSEADDR, &one, sizeof one);
        bool bound = false;
        for (uint16_t p = 600; p < 1024 && !bound; ++p) {
            sockaddr_in l{};
            l.sin_family = AF_INET;
            l.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
            l.sin_port = htons(p);
            bound = ::bind(fd, reinterpret_cast<sockaddr*>(&l), sizeof l) == 0;
        }
        if (!bound) {
            *why = std::string("bind to a reserved port: ") + std::strerror(errno);
            ::close(fd);
            return nullptr;
        }
    }
    sockaddr_in a{};
    a.sin_family = AF_INET;
    a.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
    a.sin_port = htons(port);
    if (::connect(fd, reinterpret_cast<sockaddr*>(&a), sizeof a) != 0) {
        *why = "connect 127.0.0.1:" + std::to_string(port) + ": " + std::strerror(errno);
        ::close(fd);
        return nullptr;
    }
    int one = 1;
    ::setsockopt(fd, IPPROTO_TCP, TCP_NODELAY, &one, sizeof one);
    return std::unique_ptr<Conn>(new Conn(fd));
}

std::unique_ptr<Conn> Conn::Open(uint16_t port, std::string* why) {
    return OpenFrom(port, false, why);
}

std::unique_ptr<Conn> Conn::OpenFromReservedPort(uint16_t port, std::string* why) {
    return OpenFrom(port, true, why);
}

Conn::~Conn() {
    if (fd_ >= 0) ::close(fd_);
}

bool Conn::Send(const Bytes& b, std::string* why) {
    size_t off = 0;
    while (off < b.size()) {
        ssize_t n = ::send(fd_, b.data() + off, b.size() - off, MSG_NOSIGNAL);
        if (n < 0 && errno == EINTR) continue;
        if (n <= 0) {
            if (why) *why = std::string("send: ") + std::strerror(errno);
            return false;
        }
        off += static_cast<size_t>(n);
    }
    return true;
}

Conn::Recv Conn::ReadExact(uint8_t* p, size_t n, int64_t deadline_ms, std::string* why) {
    size_t got = 0;
    while (got < n) {
        int64_t left = deadline_ms - NowMs();
        if (left <= 0) {
            if (why) *why = "timed out waiting for data";
            return Recv::kTimeout;
        }
        pollfd pf{fd_, POLLIN, 0};
        int pr = ::poll(&pf, 1, static_cast<int>(left));
        if (pr < 0 && errno == EINTR) continue;
        if (pr < 0) {
            if (why) *why = std::string("poll: ") + std::strerror(errno);
            return Recv::kError;
        }
        if (pr == 0) continue;
        ssize_t r = ::recv(fd_, p + got, n - got, 0);
        if (r < 0 && errno == EINTR) continue;
        if (r == 0) {
            if (why) *why = "connection closed by the server";
            return Recv::kClosed;
        }
        if (r < 0) {
            if (errno == ECONNRESET || errno == EPIPE) {
                if (why) *why = "connection reset by the server";
                return Recv::kClosed;
            }
            if (why) *why = std::string("recv: ") + std::strerror(errno);
            return Recv::kError;
        }
        got += static_cast<size_t>(r);
    }
    return Recv::kOk;
}

Conn::Recv Conn::RecvRecord(Bytes* out, int timeout_ms, std::string* why) {
    out->clear();
    const int64_t deadline = NowMs() + timeout_ms;
    for (;;) {
        uint8_t mark[4];
        Recv r = ReadExact(mark, 4, deadline, why);
        if (r != Recv::kOk) return r;
        uint32_t m = (uint32_t{mark[0]} << 24) | (uint32_t{mark[1]} << 16) |
                     (uint32_t{mark[2]} << 8) | uint32_t{mark[3]};
        uint32_t len = m & ~kLastFragment;
        if (out->size() + len > (16u << 20)) {
            if (why) *why = "reply record larger than 16 MiB";
            return Recv::kTooBig;
        }
        size_t old = out->size();
        out->resize(old + len);
        r = ReadExact(out->data() + old, len, deadline, why);
        if (r != Recv::kOk) return r;
        if (m & kLastFragment) return Recv::kOk;
    }
}

bool Conn::WaitForClose(int timeout_ms, size_t* discarded) {
    const int64_t deadline = NowMs() + timeout_ms;
    size_t total = 0;
    uint8_t buf[4096];
    for (;;) {
        int64_t left = deadline - NowMs();
        if (left <= 0) break;
        pollfd pf{fd_, POLLIN, 0};
        int pr = ::poll(&pf, 1, static_cast<int>(left));
        if (pr < 0 && errno == EINTR) continue;
        if (pr <= 0) continue;
        ssize_t r = ::recv(fd_, buf, sizeof buf, 0);
        if (r < 0 && errno == EINTR) continue;
        if (r == 0 || (r < 0 && (errno == ECONNRESET || errno == EPIPE))) {
            if (discarded) *discarded = total;
            return true;
        }
        if (r < 0) break;
        total += static_cast<size_t>(r);
    }
    if (discarded) *discarded = total;
    return false;
}

void Conn::ShutdownWrite() {
    ::shutdown(fd_, SHUT_WR);
}

Reply RoundTrip(uint16_t port, const Bytes& payload, int timeout_ms) {
    Reply bad;
    std::string why;
    auto c = Conn::Open(port, &why);
    if (!c) {
        bad.parse_error = why;
        return bad;
    }
    if (!c->SendRecord(payload, &why)) {
        bad.parse_error = why;
        return bad;
    }
    Bytes rec;
    if (c->RecvRecord(&rec, timeout_ms, &why) != Conn::Recv::kOk) {
        bad.parse_error = "no reply record: " + why;
        return bad;
    }
    return ParseReply(rec);
}

}  // namespace nfsrdmad::e2e::wire
