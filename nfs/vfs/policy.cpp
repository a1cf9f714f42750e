#include "nfs/vfs/policy.h"

#include <fnmatch.h>
#include <netinet/in.h>

#include <array>
#include <cstring>
#include <optional>
#include <string>

namespace nfsrdmad::vfs {
namespace {

using Addr16 = std::array<uint8_t, 16>;

// Every address as 16 bytes; IPv4 as the IPv4-mapped IPv6 address ::ffff:a.b.c.d.
Addr16 mapped_v4(const uint8_t* v4) {
    Addr16 a{};
    a[10] = 0xff;
    a[11] = 0xff;
    std::memcpy(a.data() + 12, v4, 4);
    return a;
}

std::optional<Addr16> peer_address(const sockaddr* peer) {
    if (!peer) return std::nullopt;
    if (peer->sa_family == AF_INET) {
        const auto* sin = reinterpret_cast<const sockaddr_in*>(peer);
        return mapped_v4(reinterpret_cast<const uint8_t*>(&sin->sin_addr));
    }
    if (peer->sa_family == AF_INET6) {
        const auto* sin6 = reinterpret_cast<const sockaddr_in6*>(peer);
        Addr16 a;
        std::memcpy(a.data(), &sin6->sin6_addr, 16);
        return a;
    }
    return std::nullopt;
}

bool prefix_equal(const Addr16& a, const Addr16& b, int bits) {
    for (int i = 0; bits > 0; ++i, bits -= 8) {
        const uint8_t mask = bits >= 8 ? 0xff : static_cast<uint8_t>(0xff << (8 - bits));
        if ((a[i] & mask) != (b[i] & mask)) return false;
    }
    return true;
}

bool cidr_matches(const ClientRule::Match& m, const sockaddr* peer) {
    const auto addr = peer_address(peer);
    if (!addr) return false;
    if (m.family == AF_INET && m.prefix >= 0 && m.prefix <= 32) {
        return prefix_equal(*addr, mapped_v4(m.addr.data()), 96 + m.prefix);
    }
    if (m.family == AF_INET6 && m.prefix >= 0 && m.prefix <= 128) {
        return prefix_equal(*addr, m.addr, m.prefix);
    }
    return false;
}

bool hostname_matches(const std::string& pattern, std::string_view hostname) {
    if (!hostname.empty() && hostname.back() == '.') hostname.remove_suffix(1);
    if (hostname.empty() || pattern.empty()) return false;
    const std::string host(hostname);
    return ::fnmatch(pattern.c_str(), host.c_str(), FNM_CASEFOLD) == 0;
}

}  // namespace

bool matches(const ClientRule::Match& m, const sockaddr* peer, std::string_view hostname) {
    switch (m.kind) {
        case ClientRule::Match::Any:
            return true;
        case ClientRule::Match::Cidr:
            return cidr_matches(m, peer);
        case ClientRule::Match::Hostname:
            return hostname_matches(m.hostname, hostname);
    }
    return false;
}

const ClientRule* match(const ExportSpec& spec, const sockaddr* peer, std::string_view hostname) {
    for (const ClientRule& rule : spec.rules) {
        if (matches(rule.match, peer, hostname)) return &rule;
    }
    return nullptr;
}

bool flavor_allowed(const ClientRule& rule, uint32_t flavor) {
    if (rule.flavors.empty()) return flavor == kAuthSys;
    for (uint32_t f : rule.flavors) {
        if (f == flavor) return true;
    }
    return false;
}

void squash_in_place(const ClientRule& rule, Identity& id, uint32_t flavor, bool anonymous) {
    if (flavor == kAuthNone || anonymous || rule.squash == ClientRule::All) {
        id.uid = rule.anonuid;
        id.gid = rule.anongid;
        id.groups.clear();
        return;
    }
    if (rule.squash == ClientRule::Root) {
        if (id.uid == 0) id.uid = rule.anonuid;
        if (id.gid == 0) id.gid = rule.anongid;
        for (uint32_t& g : id.groups) {
            if (g == 0) g = rule.anongid;
        }
    }
}

Identity squash(const ClientRule& rule, Identity id, uint32_t flavor, bool anonymous) {
    squash_in_place(rule, id, flavor, anonymous);
    return id;
}

}  // namespace nfsrdmad::vfs
