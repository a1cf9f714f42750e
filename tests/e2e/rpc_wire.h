// Hand-built ONC RPC over TCP (RFC 5531 record marking) for malformed-input tests: no libnfs,
// every byte on the wire is chosen by the test.
#pragma once

#include <cstdint>
#include <memory>
#include <string>
#include <string_view>
#include <vector>

namespace nfsrdmad::e2e::wire {

using Bytes = std::vector<uint8_t>;

// RPC constants (RFC 5531).
inline constexpr uint32_t kCall = 0, kReply = 1;
inline constexpr uint32_t kMsgAccepted = 0, kMsgDenied = 1;
inline constexpr uint32_t kSuccess = 0, kProgUnavail = 1, kProgMismatch = 2, kProcUnavail = 3,
                          kGarbageArgs = 4, kSystemErr = 5;
inline constexpr uint32_t kRpcMismatch = 0, kAuthError = 1;
inline constexpr uint32_t kAuthBadcred = 1, kAuthRejectedcred = 2, kAuthBadverf = 3,
                          kAuthTooweak = 5;
inline constexpr uint32_t kAuthNone = 0, kAuthSys = 1;
inline constexpr uint32_t kLastFragment = 0x80000000u;

// Big-endian XDR writer.
class XdrOut {
  public:
    XdrOut& u32(uint32_t v);
    XdrOut& u64(uint64_t v);
    // Variable-length opaque / string: length word, bytes, zero padding to 4.
    XdrOut& opaque(const void* p, size_t n);
    XdrOut& opaque(const Bytes& b) { return opaque(b.data(), b.size()); }
    XdrOut& str(std::string_view s) { return opaque(s.data(), s.size()); }
    // Raw bytes, no length, no padding.
    XdrOut& raw(const void* p, size_t n);
    XdrOut& raw(const Bytes& b) { return raw(b.data(), b.size()); }
    const Bytes& bytes() const { return b_; }
    Bytes take() { return std::move(b_); }

  private:
    Bytes b_;
};

void PutU32(Bytes& b, uint32_t v);

// Big-endian XDR reader; every getter returns false once the input is exhausted.
class XdrIn {
  public:
    explicit XdrIn(const Bytes& b, size_t off = 0) : b_(b), off_(off) {}
    bool u32(uint32_t* v);
    bool u64(uint64_t* v);
    bool opaque(Bytes* out, size_t max_len);
    bool skip(size_t n);
    size_t remaining() const { return b_.size() - off_; }
    size_t offset() const { return off_; }

  private:
    const Bytes& b_;
    size_t off_;
};

struct Call {
    uint32_t xid = 1;
    uint32_t rpcvers = 2;
    uint32_t prog = 0, vers = 0, proc = 0;
    uint32_t cred_flavor = kAuthNone;
    Bytes cred_body;
    uint32_t verf_flavor = kAuthNone;
    Bytes verf_body;
    Bytes args;  // already XDR-encoded procedure arguments
};

// The call message body (no record mark).
Bytes EncodeCall(const Call& c);

// authsys_parms: stamp, machinename<255>, uid, gid, gids<16>.
Bytes AuthSysBody(uint32_t stamp, std::string_view machine, uint32_t uid, uint32_t gid,
                  const std::vector<uint32_t>& gids = {});

// A call with AUTH_SYS uid 0 / gid 0.
Call RootCall(uint32_t xid, uint32_t prog, uint32_t vers, uint32_t proc, Bytes args = {});

// 4-byte record mark.
Bytes RecordMark(uint32_t len, bool last);
// payload as one last fragment.
Bytes Frame(const Bytes& payload);
// payload split into fragments of the given sizes (must sum to payload.size()); only the final
// one carries the last-fragment bit.
Bytes FrameFragments(const Bytes& payload, const std::vector<size_t>& sizes);

struct Reply {
    std::string parse_error;  // non-empty: the record is not a well-formed RPC reply
    uint32_t xid = 0;
    uint32_t msg_type = 0;
    uint32_t reply_stat = 0;
    // MSG_ACCEPTED
    uint32_t verf_flavor = 0;
    Bytes verf_body;
    uint32_t accept_stat = 0;
    uint32_t mismatch_low = 0, mismatch_high = 0;  // PROG_MISMATCH or RPC_MISMATCH
    Bytes results;                                 // SUCCESS: the procedure's results
    // MSG_DENIED
    uint32_t reject_stat = 0;
    uint32_t auth_stat = 0;

    std::string Describe() const;
};
Reply ParseReply(const Bytes& record);

// Blocking TCP connection to 127.0.0.1:port with timeouts on reads.
class Conn {
  public:
    static std::unique_ptr<Conn> Open(uint16_t port, std::string* why);
    // The same from a reserved source port (the first free one in 600..1023; needs root),
    // for exports(5) `secure` exports.
    static std::unique_ptr<Conn> OpenFromReservedPort(uint16_t port, std::string* why);
    ~Conn();
    Conn(const Conn&) = delete;
    Conn& operator=(const Conn&) = delete;

    // Writes everything (MSG_NOSIGNAL). false + why on error (EPIPE/ECONNRESET: peer closed).
    bool Send(const Bytes& b, std::string* why);
    bool SendRecord(const Bytes& payload, std::string* why) { return Send(Frame(payload), why); }

    enum class Recv { kOk, kClosed, kTimeout, kError, kTooBig };
    // Reads one complete record (all fragments, up to 16 MiB).
    Recv RecvRecord(Bytes* out, int timeout_ms, std::string* why);
    // Reads and discards until the peer closes (EOF or reset). True if that happened in time.
    bool WaitForClose(int timeout_ms, size_t* discarded = nullptr);
    // Half-close / close the write side.
    void ShutdownWrite();
    int fd() const { return fd_; }

  private:
    explicit Conn(int fd) : fd_(fd) {}
    static std::unique_ptr<Conn> OpenFrom(uint16_t port, bool reserved, std::string* why);
    // Reads exactly n bytes before the deadline.
    Recv ReadExact(uint8_t* p, size_t n, int64_t deadline_ms, std::string* why);
    int fd_;
};

// Connects, sends `payload` as one record, returns the parsed reply (parse_error set on any
// transport problem).
Reply RoundTrip(uint16_t port, const Bytes& payload, int timeout_ms = 10000);

}  // namespace nfsrdmad::e2e::wire
