#include "transport/rdma/verbs/inventory.h"

#include <arpa/inet.h>
#include <infiniband/verbs.h>

namespace nfsrdmad::rdma::verbs {

std::vector<DeviceInfo> list_devices() {
    std::vector<DeviceInfo> out;
    int n = 0;
    ibv_device** list = ibv_get_device_list(&n);
    if (!list) return out;
    for (int i = 0; i < n; ++i) {
        DeviceInfo d;
        d.name = ibv_get_device_name(list[i]);
        ibv_context* ctx = ibv_open_device(list[i]);
        if (ctx) {
            d.opened = true;
            ibv_device_attr attr{};
            ibv_query_device(ctx, &attr);
            for (uint8_t port = 1; port <= attr.phys_port_cnt; ++port) {
                ibv_port_attr pa{};
                if (ibv_query_port(ctx, port, &pa) != 0) continue;
                PortInfo p;
                p.number = port;
                p.active = pa.state == IBV_PORT_ACTIVE;
                for (int g = 0; g < pa.gid_tbl_len; ++g) {
                    ibv_gid_entry e{};
                    if (ibv_query_gid_ex(ctx, port, uint32_t(g), &e, 0) != 0) continue;
                    if (e.gid.global.subnet_prefix == 0 && e.gid.global.interface_id == 0) continue;
                    char text[INET6_ADDRSTRLEN] = {};
                    inet_ntop(AF_INET6, e.gid.raw, text, sizeof text);
                    GidInfo gi;
                    gi.index = g;
                    gi.text = text;
                    gi.type = e.gid_type == IBV_GID_TYPE_IB        ? GidInfo::IB
                              : e.gid_type == IBV_GID_TYPE_ROCE_V1 ? GidInfo::RoceV1
                              : e.gid_type == IBV_GID_TYPE_ROCE_V2 ? GidInfo::RoceV2
                                                                   : GidInfo::Unknown;
                    p.gids.push_back(std::move(gi));
                }
                d.ports.push_back(std::move(p));
            }
            ibv_close_device(ctx);
        }
        out.push_back(std::move(d));
    }
    ibv_free_device_list(list);
    return out;
}

}  // namespace nfsrdmad::rdma::verbs
