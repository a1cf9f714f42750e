// Validated daemon configuration: plain data, produced by load.h and overrides.h.
#pragma once

#include <array>
#include <cstdint>
#include <optional>
#include <string>
#include <vector>

namespace nfsrdmad::config {

enum class Access { ReadOnly, ReadWrite };
enum class Squash { None, Root, All };  // no_root_squash, root_squash (default), all_squash
enum class SecFlavor { None, Sys, Krb5, Krb5i, Krb5p };

// How a client is recognised. Cidr networks never have host bits set.
struct ClientMatch {
    enum class Kind { Any, Cidr, Hostname } kind = Kind::Any;
    int family = 0;                  // AF_INET / AF_INET6 for Cidr
    std::array<uint8_t, 16> addr{};  // network-order bytes (first 4 used for AF_INET)
    int prefix = 0;                  // 32 / 128 for a single address
    std::string hostname;            // Hostname: lower-cased, may contain '*' and '?'
    std::string text = "*";          // as written, for logs
};

struct ClientRule {
    ClientMatch match;
    Access access = Access::ReadOnly;
    Squash squash = Squash::Root;
    uint32_t anonuid = 65534;
    uint32_t anongid = 65534;
    std::vector<SecFlavor> sec{SecFlavor::Sys};
    bool secure = true;  // exports(5) secure: calls must come from a port below 1024
};

struct Export {
    std::string path;  // absolute, normalised: no trailing '/', no "//", no "." or ".."
    std::optional<uint32_t> fsid;
    std::vector<ClientRule> clients;  // in file order; never empty
    // exports(5) `mp`: served only while the path is a mount point, so an unmounted
    // filesystem is never served from the empty directory beneath it.
    bool mountpoint = false;
};

struct TcpListener {
    std::string address;  // canonical IPv4 or IPv6 text, no brackets
    uint16_t port = 0;
    bool operator==(const TcpListener&) const = default;
};

inline constexpr uint32_t kMinRecordSize = 64 * 1024;
inline constexpr uint32_t kMaxRecordSize = 64 * 1024 * 1024;
inline constexpr unsigned kMaxThreads = 1024;
inline constexpr unsigned kMaxWorkers = 1024;

// RPC-over-RDMA transport tuning (the `rdma:` section).
struct RdmaTuning {
    uint32_t credits = 128;              // RFC 8166 §3.3.1: the most one connection is granted
    uint32_t max_connections = 1024;     // more are rejected at CONNECT_REQUEST
    uint32_t receive_buffers = 4096;     // per device, shared by its connections (SRQ)
    uint32_t max_read_bytes = 0;         // RDMA Read bytes in flight per device; 0: the
                                         // payload pool's (max_payload_buffers MiB)
    uint32_t inline_size = 4096;         // receive/send buffer size advertised (RFC 8797)
    uint32_t max_payload_buffers = 256;  // 1 MiB registered buffers, in all
    bool huge_pages = false;             // back payload buffers with 2 MiB pages
    uint32_t send_timeout = 60;          // s a reply Send may wait for the peer; 0 = never
    bool operator==(const RdmaTuning&) const = default;
};

// Per-client bounds on the TCP side (the `tcp:` section).
struct TcpTuning {
    uint32_t max_connections = 1024;  // more are accepted and closed at once
    uint32_t idle_timeout = 360;      // seconds without a call or a reply (knfsd: 6 min); 0: never
    uint32_t max_pipes = 256;         // pipes holding spliced READ data, in all
    bool operator==(const TcpTuning&) const = default;
};

// NFSv4.1 (RFC 8881), on by default as on the Linux server: 100003 version 4 is
// registered and served on the NFS listeners (TCP and RDMA) beside version 3, and a Linux
// client's mount without vers= (4.2, then 4.1 ...) gets 4.1.
struct Nfs4Tuning {
    bool enabled = true;
    uint32_t lease_time = 90;              // seconds (RFC 8881 §5.8.1.11 lease_time)
    // owner@domain mapping (§5.9; numeric ids always work). Empty: found at start as the
    // client's nfsidmap finds its own (idmapd.conf, then the host's DNS domain).
    std::string domain;
    uint32_t max_clients = 4096;           // client records, confirmed and not
    // Delegations (RFC 8881 §10.2) granted on OPEN when the client can be called back;
    // write delegations for opens that read and write.
    bool delegations = true;
    bool write_delegations = true;
    bool operator==(const Nfs4Tuning&) const = default;
};

// Byte-range locks (the `locks:` section; NFSv4.1 and NLM). Granted locks are
// also taken on the file with Linux open file description locks, so local processes on
// the server see them and theirs stop clients, as with the kernel nfsd. Each file with
// locks keeps one descriptor open, whoever holds them: bounded in all, and per client by
// the files it locks; past the bound a lock is denied (the client retries).
struct LockTuning {
    bool local = true;                  // mirror granted locks to the file (OFD locks)
    uint32_t max_files = 4096;          // descriptors held for that (files), in all
    uint32_t max_files_per_client = 512;
    // The name this server gives in NSM's SM_NOTIFY after a restart (as `sm-notify -v`):
    // clients' statd match it against the name or address they watch this server by.
    // Empty: the host name.
    std::string nsm_name;
    bool operator==(const LockTuning&) const = default;
};

// RPCSEC_GSS with Kerberos V5 (the `kerberos:` section). On when an export lists a krb5
// flavor, or when the section is given.
struct KerberosTuning {
    bool configured = false;                  // the section was given
    std::string keytab = "/etc/krb5.keytab";  // the service keys (nfs/<host>)
    uint32_t max_contexts = 65536;            // server-wide
    uint32_t seq_window = 4096;               // RFC 2203 §5.2.3.1, sent to clients
    bool operator==(const KerberosTuning&) const = default;
};

// How reactor threads wait for completions: sleep on events, busy-poll (one core per
// reactor at 100%), or poll while busy and sleep when idle.
enum class EngineMode { Event, Poll, Adaptive };

struct Config {
    std::vector<TcpListener> tcp{{"0.0.0.0", 2049}};    // never empty
    std::vector<TcpListener> rdma{{"0.0.0.0", 20049}};  // empty: no RDMA
    RdmaTuning rdma_tuning;
    TcpTuning tcp_tuning;
    Nfs4Tuning nfs4;
    LockTuning locks;
    KerberosTuning kerberos;
    EngineMode engine_mode = EngineMode::Adaptive;
    uint32_t spin_us = 50;           // adaptive: the most it polls after the last completion
    uint16_t mount_port = 20048;     // MOUNT gets its own TCP listener, same address as tcp[0]
    // The Prometheus endpoint (`metrics: {listen: ADDR:PORT}`, GET /metrics); none: off.
    std::optional<TcpListener> metrics;
    unsigned engine_threads = 0;     // 0 = one per core
    unsigned workers = 16;           // disk worker pool size
    uint32_t fd_cache = 0;           // open files kept for READ/WRITE; 0 = from RLIMIT_NOFILE
    // Calls that need no disk (a GETATTR, ACCESS, LOOKUP or READ of what the descriptor,
    // dentry and page caches hold, NFSv3 or NFSv4.1) are answered on the reactor, without a
    // worker's hop (over TCP, READ excepted: a worker splices it).
    bool reactor_calls = true;
    std::string log_level = "info";  // trace, debug, info, warn, error, critical, off
    std::string state_dir = "/var/lib/nfsrdmad";
    uint32_t max_record_size = (1u << 20) + 65536;  // TCP record limit
    std::vector<Export> exports;
};

// What a reload (SIGHUP) cannot change, named for each setting that differs between the
// running configuration and the new one ("listeners.tcp", "engine.workers", ...): those
// take effect at the next restart. Exports and the log level are reloaded.
std::vector<std::string> restart_only_changes(const Config& running, const Config& next);

// A configuration problem. line/column are 1-based; line 0 means "no position"
// (unreadable file, command line).
struct Error {
    std::string file;
    int line = 0;
    int column = 0;
    std::string message;

    // "FILE:LINE:COL: message", or "FILE: message" when line is 0.
    std::string str() const {
        if (line <= 0) return file + ": " + message;
        return file + ":" + std::to_string(line) + ":" + std::to_string(column) + ": " + message;
    }
};

}  // namespace nfsrdmad::config
