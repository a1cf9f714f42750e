// The RDMA devices of this host, their ports and GIDs: logged at start (Server::
// log_devices) and examined by `nfsrdmad doctor`. Opens each device for a moment and
// closes it again.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

namespace nfsrdmad::rdma::verbs {

struct GidInfo {
    int index = 0;
    std::string text;  // IPv6 form; an IPv4 address shows as ::ffff:a.b.c.d
    enum Type { IB, RoceV1, RoceV2, Unknown } type = Unknown;
};

struct PortInfo {
    int number = 0;
    bool active = false;
    std::vector<GidInfo> gids;  // the non-zero entries
};

struct DeviceInfo {
    std::string name;
    bool opened = false;  // false: listed but could not be opened (permissions, driver)
    std::vector<PortInfo> ports;
};

std::vector<DeviceInfo> list_devices();

}  // namespace nfsrdmad::rdma::verbs
