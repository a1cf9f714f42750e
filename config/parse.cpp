#include "config/parse.h"

#include <arpa/inet.h>
#include <sys/socket.h>

#include <algorithm>
#include <charconv>
#include <vector>

namespace nfsrdmad::config {

namespace {

bool fail(std::string* why, std::string msg) {
    if (why) *why = std::move(msg);
    return false;
}

// For functions returning an optional.
std::nullopt_t reject(std::string* why, std::string msg) {
    fail(why, std::move(msg));
    return std::nullopt;
}

std::string quoted(std::string_view s) {
    std::string out(1, '\'');  // not "'" + string: GCC 12 -O3 gives a bogus -Wrestrict
    return out.append(s) += '\'';
}

// inet_pton into `out`; returns the family or 0.
int parse_ip(std::string_view text, std::array<uint8_t, 16>& out) {
    std::string s(text);  // inet_pton needs a NUL-terminated string
    out = {};
    if (inet_pton(AF_INET, s.c_str(), out.data()) == 1) return AF_INET;
    if (inet_pton(AF_INET6, s.c_str(), out.data()) == 1) return AF_INET6;
    return 0;
}

std::string format_ip(int family, const std::array<uint8_t, 16>& addr) {
    char buf[INET6_ADDRSTRLEN] = {};
    inet_ntop(family, addr.data(), buf, sizeof buf);
    return buf;
}

int max_prefix(int family) {
    return family == AF_INET ? 32 : 128;
}

// Dotted netmask ("255.255.0.0") to a prefix length; -1 if not contiguous.
int netmask_prefix(std::string_view text) {
    std::array<uint8_t, 16> mask{};
    if (parse_ip(text, mask) != AF_INET) return -1;
    uint32_t m =
        (uint32_t(mask[0]) << 24) | (uint32_t(mask[1]) << 16) | (uint32_t(mask[2]) << 8) | mask[3];
    int prefix = 0;
    while (prefix < 32 && (m & (0x80000000u >> prefix))) ++prefix;
    uint32_t expect = prefix == 0 ? 0 : ~0u << (32 - prefix);
    return m == expect ? prefix : -1;
}

// Clears host bits; returns true if any were set.
bool clear_host_bits(std::array<uint8_t, 16>& addr, int prefix) {
    bool had = false;
    for (int i = 0; i < 16; ++i) {
        int keep = std::clamp(prefix - i * 8, 0, 8);
        uint8_t mask = keep == 0 ? 0 : uint8_t(0xff << (8 - keep));
        if (addr[i] & ~mask) had = true;
        addr[i] &= mask;
    }
    return had;
}

bool parse_cidr(std::string_view text, ClientMatch& m, std::string* why) {
    size_t slash = text.find('/');
    std::string_view ip = text.substr(0, slash), len = text.substr(slash + 1);
    m.family = parse_ip(ip, m.addr);
    if (m.family == 0) return fail(why, "invalid network address " + quoted(ip));
    int maxp = max_prefix(m.family);
    if (m.family == AF_INET && len.find('.') != std::string_view::npos) {
        m.prefix = netmask_prefix(len);
        if (m.prefix < 0) return fail(why, "invalid netmask " + quoted(len));
    } else {
        std::string reason;
        auto p = parse_uint(len, 0, maxp, &reason);
        if (!p) return fail(why, "bad prefix length: " + reason);
        m.prefix = int(*p);
    }
    auto net = m.addr;
    if (clear_host_bits(net, m.prefix)) {
        return fail(why, "host bits are set (did you mean " + format_ip(m.family, net) + "/" +
                             std::to_string(m.prefix) + "?)");
    }
    return true;
}

bool valid_label(std::string_view label) {
    if (label.empty() || label.size() > 63) return false;
    return label.front() != '-' && label.back() != '-';
}

bool parse_hostname(std::string_view text, ClientMatch& m, std::string* why) {
    if (text.size() > 253) return fail(why, "hostname too long");
    std::string host;
    for (char c : text) {
        if (c >= 'A' && c <= 'Z') c = char(c - 'A' + 'a');
        bool ok = (c >= 'a' && c <= 'z') || (c >= '0' && c <= '9') || c == '-' || c == '.' ||
                  c == '*' || c == '?';
        if (!ok)
            return fail(why, "invalid character " + quoted(std::string(1, c)) + " in hostname");
        host += c;
    }
    size_t start = 0;
    while (true) {
        size_t dot = host.find('.', start);
        if (!valid_label(std::string_view(host).substr(start, dot - start))) {
            return fail(why,
                        "invalid hostname (empty label, label over 63 characters, "
                        "or label starting or ending with '-')");
        }
        if (dot == std::string::npos) break;
        start = dot + 1;
    }
    m.hostname = std::move(host);
    return true;
}

bool only_digits_and_dots(std::string_view s) {
    return std::all_of(s.begin(), s.end(),
                       [](char c) { return c == '.' || (c >= '0' && c <= '9'); });
}

}  // namespace

std::optional<ClientMatch> parse_client_match(std::string_view text, std::string* why) {
    ClientMatch m;
    m.text = std::string(text);
    if (text.empty()) return reject(why, "empty client");
    if (text == "*") return m;
    if (text.front() == '@') return reject(why, "netgroups are not supported");
    if (text.find_first_of("[]") != std::string_view::npos) {
        return reject(why, "write IPv6 clients without brackets, e.g. fe80::/10");
    }
    if (text.find('/') != std::string_view::npos) {
        m.kind = ClientMatch::Kind::Cidr;
        if (!parse_cidr(text, m, why)) return std::nullopt;
        return m;
    }
    bool ipv6 = text.find(':') != std::string_view::npos;
    if (ipv6 || only_digits_and_dots(text)) {
        m.kind = ClientMatch::Kind::Cidr;
        m.family = parse_ip(text, m.addr);
        if (m.family == 0) {
            return reject(why, std::string("invalid ") + (ipv6 ? "IPv6" : "IPv4") + " address");
        }
        m.prefix = max_prefix(m.family);
        return m;
    }
    m.kind = ClientMatch::Kind::Hostname;
    if (!parse_hostname(text, m, why)) return std::nullopt;
    return m;
}

std::optional<std::string> canonical_ip(std::string_view text, std::string* why) {
    std::array<uint8_t, 16> addr{};
    int family = parse_ip(text, addr);
    if (family == 0) return reject(why, "invalid IP address " + quoted(text));
    return format_ip(family, addr);
}

std::optional<TcpListener> parse_listener(std::string_view text, std::string* why) {
    std::string_view addr, port;
    if (!text.empty() && text.front() == '[') {
        size_t close = text.find("]:");
        if (close == std::string_view::npos) {
            return reject(why, "expected [IPV6]:PORT, e.g. [::]:2049");
        }
        addr = text.substr(1, close - 1);
        port = text.substr(close + 2);
        std::array<uint8_t, 16> tmp{};
        if (parse_ip(addr, tmp) != AF_INET6) {
            return reject(why, "invalid IPv6 address " + quoted(addr));
        }
    } else {
        size_t colon = text.rfind(':');
        if (colon == std::string_view::npos) {
            return reject(why, "expected ADDR:PORT, e.g. 0.0.0.0:2049");
        }
        addr = text.substr(0, colon);
        port = text.substr(colon + 1);
        if (addr.find(':') != std::string_view::npos) {
            return reject(why, "write IPv6 addresses in brackets, e.g. [::]:2049");
        }
    }
    auto ip = canonical_ip(addr, why);
    if (!ip) return std::nullopt;
    std::string reason;
    auto p = parse_uint(port, 1, 65535, &reason);
    if (!p) return reject(why, "bad port: " + reason);
    return TcpListener{*ip, uint16_t(*p)};
}

std::optional<std::string> normalize_export_path(std::string_view text, std::string* why) {
    if (text.empty() || text.front() != '/') {
        return reject(why, "export path must be absolute");
    }
    if (text.find('\0') != std::string_view::npos) {
        return reject(why, "export path contains a NUL byte");
    }
    std::string out;
    size_t pos = 0;
    while (pos < text.size()) {
        size_t end = std::min(text.find('/', pos), text.size());
        std::string_view part = text.substr(pos, end - pos);
        if (part == "." || part == "..") {
            return reject(why, "export path must not contain '.' or '..'");
        }
        if (!part.empty()) (out += '/') += part;
        pos = end + 1;
    }
    return out.empty() ? "/" : out;
}

std::optional<uint64_t> parse_uint(std::string_view text, uint64_t lo, uint64_t hi,
                                   std::string* why) {
    std::string range = std::to_string(lo) + "-" + std::to_string(hi);
    range = '(' + range + ')';  // (not "(" + to_string(..): bogus -Wrestrict, see quoted())
    bool digits = !text.empty() && std::all_of(text.begin(), text.end(),
                                               [](char c) { return c >= '0' && c <= '9'; });
    if (!digits) return reject(why, quoted(text) + " is not an integer " + range);
    uint64_t v = 0;
    auto [ptr, ec] = std::from_chars(text.data(), text.data() + text.size(), v);
    if (ec != std::errc() || v < lo || v > hi) {
        return reject(why, std::string(text) + " is out of range " + range);
    }
    return v;
}

std::optional<Access> parse_access(std::string_view text) {
    if (text == "ro") return Access::ReadOnly;
    if (text == "rw") return Access::ReadWrite;
    return std::nullopt;
}

std::optional<Squash> parse_squash(std::string_view text) {
    if (text == "none") return Squash::None;
    if (text == "root") return Squash::Root;
    if (text == "all") return Squash::All;
    return std::nullopt;
}

std::optional<SecFlavor> parse_sec(std::string_view text) {
    for (auto f :
         {SecFlavor::None, SecFlavor::Sys, SecFlavor::Krb5, SecFlavor::Krb5i, SecFlavor::Krb5p}) {
        if (text == to_string(f)) return f;
    }
    return std::nullopt;
}

bool is_log_level(std::string_view text) {
    for (std::string_view l : {"trace", "debug", "info", "warn", "error", "critical", "off"}) {
        if (text == l) return true;
    }
    return false;
}

std::string_view to_string(Access a) {
    return a == Access::ReadOnly ? "ro" : "rw";
}

std::string_view to_string(Squash s) {
    switch (s) {
        case Squash::None:
            return "none";
        case Squash::Root:
            return "root";
        case Squash::All:
            return "all";
    }
    return "?";
}

std::string_view to_string(SecFlavor f) {
    switch (f) {
        case SecFlavor::None:
            return "none";
        case SecFlavor::Sys:
            return "sys";
        case SecFlavor::Krb5:
            return "krb5";
        case SecFlavor::Krb5i:
            return "krb5i";
        case SecFlavor::Krb5p:
            return "krb5p";
    }
    return "?";
}

std::string to_string(const TcpListener& l) {
    bool v6 = l.address.find(':') != std::string::npos;
    return (v6 ? "[" + l.address + "]" : l.address) + ":" + std::to_string(l.port);
}

}  // namespace nfsrdmad::config
