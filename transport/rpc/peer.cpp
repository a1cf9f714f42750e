#include <arpa/inet.h>
#include <netinet/in.h>

#include <atomic>
#include <cstring>

#include "transport/rpc/call.h"

namespace nfsrdmad::rpc {

std::string format_address(const sockaddr* sa) {
    char buf[INET6_ADDRSTRLEN] = "?";
    if (sa->sa_family == AF_INET) {
        auto* v4 = reinterpret_cast<const sockaddr_in*>(sa);
        inet_ntop(AF_INET, &v4->sin_addr, buf, sizeof buf);
        return std::string(buf) + ":" + std::to_string(ntohs(v4->sin_port));
    }
    if (sa->sa_family == AF_INET6) {
        auto* v6 = reinterpret_cast<const sockaddr_in6*>(sa);
        inet_ntop(AF_INET6, &v6->sin6_addr, buf, sizeof buf);
        return "[" + std::string(buf) + "]:" + std::to_string(ntohs(v6->sin6_port));
    }
    return "?";
}

uint64_t next_connection_id() {
    static std::atomic<uint64_t> next{0};
    return ++next;
}

Peer make_peer(const sockaddr* sa) {
    Peer p;
    p.conn = next_connection_id();
    p.len = sa->sa_family == AF_INET6 ? sizeof(sockaddr_in6) : sizeof(sockaddr_in);
    std::memcpy(&p.addr, sa, p.len);
    p.text = format_address(sa);
    return p;
}

bool parse_address(const std::string& addr, uint16_t port, sockaddr_storage& ss, socklen_t& len) {
    std::memset(&ss, 0, sizeof ss);
    auto* v4 = reinterpret_cast<sockaddr_in*>(&ss);
    auto* v6 = reinterpret_cast<sockaddr_in6*>(&ss);
    if (inet_pton(AF_INET, addr.c_str(), &v4->sin_addr) == 1) {
        v4->sin_family = AF_INET;
        v4->sin_port = htons(port);
        len = sizeof *v4;
        return true;
    }
    if (inet_pton(AF_INET6, addr.c_str(), &v6->sin6_addr) == 1) {
        v6->sin6_family = AF_INET6;
        v6->sin6_port = htons(port);
        len = sizeof *v6;
        return true;
    }
    return false;
}

}  // namespace nfsrdmad::rpc
