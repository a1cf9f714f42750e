// A call as it reaches the RPC layer, and a reply as it leaves it. Transport
// neutral: TCP and RPC-over-RDMA both hand the dispatcher a whole RPC message
// (plus, on RDMA, the read chunks that travelled out of band) and get back inline
// bytes plus payload segments to send without copying (RFC 8166 §3.4.2: several
// DDP-eligible items per call and per reply, as an NFSv4 COMPOUND may carry).
#pragma once

#include <sys/socket.h>

#include <cstdint>
#include <memory>
#include <optional>
#include <span>
#include <string>
#include <vector>

#include "transport/rpc/groups.h"
#include "xdr/runtime/xdr.h"

namespace nfsrdmad::rpc {

// RFC 5531 appendix A; at most 16 groups.
struct AuthSys {
    uint32_t stamp = 0;
    std::string machinename;
    uint32_t uid = 0;
    uint32_t gid = 0;
    Groups gids;
};

// RPCSEC_GSS calls carry the pseudo-flavor of their service (RFC 2623 §2.2), so that
// exports list and check them like any flavor.
inline constexpr uint32_t kAuthGssKrb5 = 390003;   // krb5: authentication only
inline constexpr uint32_t kAuthGssKrb5i = 390004;  // krb5i: integrity
inline constexpr uint32_t kAuthGssKrb5p = 390005;  // krb5p: privacy

struct Credential {
    // AUTH_NONE (0), AUTH_SYS (1), or for RPCSEC_GSS (auth/gss/gss.h) the service's
    // pseudo-flavor above; RPCSEC_GSS (6) itself only for its control calls.
    uint32_t flavor = 0;
    AuthSys sys;            // AUTH_SYS as sent; RPCSEC_GSS: the identity the principal maps to
    std::string principal;  // RPCSEC_GSS: "alice@REALM"
    // RPCSEC_GSS: the principal has no local user; it acts as the export's anonuid and
    // anongid, whatever `sys` holds.
    bool anonymous = false;
};

struct Peer {
    sockaddr_storage addr{};
    socklen_t len = 0;
    std::string text;  // "10.0.0.1:812", for logs and the duplicate request cache
    // RPC-over-RDMA: every call counts as from a reserved port (knfsd's svc_rdma sets
    // RQ_SECURE unconditionally), since the RDMA CM port says nothing about privilege.
    bool rdma = false;
    // Which connection the call came on, unique for the daemon's life (0: none known).
    // NFSv4.1 binds connections to sessions (RFC 8881 §2.10.3.1) by it.
    uint64_t conn = 0;
};

// "10.0.0.1:812" or "[fd00::1]:812"; "?" for other families.
std::string format_address(const sockaddr* sa);
// "10.0.0.1" or "fd00::1" with `port` as a socket address; false when it is neither.
bool parse_address(const std::string& addr, uint16_t port, sockaddr_storage& ss, socklen_t& len);
// A Peer for an IPv4 or IPv6 address (the transports' accepted connections).
Peer make_peer(const sockaddr* sa);
// A new connection id for Peer::conn.
uint64_t next_connection_id();

// Memory for a reply payload (READ data). The transport decides what it is: heap on
// TCP, registered memory on RDMA, so the file is read straight into what is sent.
//
// A transport that sends from a pipe (TCP: splice(2) to the socket) may also offer one
// with splice_fd(): the back end then splices file data into it, page references and
// no copy, and reports how much with set_spliced(n). The payload's first n bytes are
// then in the pipe (data() holds nothing there); any rest is in data() + n.
class PayloadBuffer {
  public:
    virtual ~PayloadBuffer() = default;
    virtual uint8_t* data() = 0;
    virtual size_t capacity() const = 0;
    virtual int splice_fd() { return -1; }  // the pipe's write end; -1: none offered
    virtual void set_spliced(size_t) {}
    virtual size_t spliced() const { return 0; }       // bytes waiting in the pipe
    virtual int spliced_source() const { return -1; }  // the pipe's read end
};

class PayloadAllocator {
  public:
    virtual ~PayloadAllocator() = default;
    // nullptr when no memory is free right now (a bounded registered pool).
    virtual std::unique_ptr<PayloadBuffer> allocate(size_t bytes) = 0;
};

// One received RPC message. The bytes stay alive until the reply is sent.
struct Message {
    std::shared_ptr<const void> owner;        // keeps `bytes` alive
    std::span<const uint8_t> bytes;           // the whole RPC call message
    std::vector<xdr::ReadChunk> read_chunks;  // positions ascending (RFC 8166 §3.4.5)
};

struct Reply {
    std::vector<uint8_t> bytes;                  // header + results, inline
    std::vector<xdr::ExternalSegment> payloads;  // stream order; offsets are into `bytes`
    // Every buffer the procedure asked for (CallContext::payload_buffer), kept until
    // the reply is sent: the segments point into them.
    std::vector<std::unique_ptr<PayloadBuffer>> payload_owners;
};

}  // namespace nfsrdmad::rpc
