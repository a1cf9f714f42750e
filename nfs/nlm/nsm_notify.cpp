#include "nfs/nlm/nsm_notify.h"

#include <arpa/inet.h>
#include <netinet/in.h>
#include <spdlog/spdlog.h>

#include "nfs/common/log_text.h"
#include "xdr/runtime/xdr.h"

namespace nfsrdmad::nfs::nlm {

namespace {
constexpr uint32_t kSmProg = 100024, kSmVers = 1, kSmNotify = 6;
constexpr size_t kSmMaxStrLen = 1024;  // SM_MAXSTRLEN
}  // namespace

int32_t nsm_state(uint32_t epoch) {
    return static_cast<int32_t>((epoch % (1u << 30)) * 2 + 1);
}

size_t notify_reboot(rpc::CallbackSender& sender, const std::vector<std::string>& addresses,
                     const std::string& my_name, int32_t state) {
    size_t sent = 0;
    for (const std::string& a : addresses) {
        rpc::OutgoingCall c;
        auto* in = reinterpret_cast<sockaddr_in*>(&c.peer);
        auto* in6 = reinterpret_cast<sockaddr_in6*>(&c.peer);
        if (::inet_pton(AF_INET, a.c_str(), &in->sin_addr) == 1) {
            in->sin_family = AF_INET;
            c.peer_len = sizeof *in;
        } else if (::inet_pton(AF_INET6, a.c_str(), &in6->sin6_addr) == 1) {
            in6->sin6_family = AF_INET6;
            c.peer_len = sizeof *in6;
        } else {
            spdlog::warn("nsm: '{}' is not an address: not notified", log_text(a));
            continue;
        }
        c.prog = kSmProg;
        c.vers = kSmVers;
        c.proc = kSmNotify;
        // stat_chge: mon_name<SM_MAXSTRLEN>, state.
        xdr::Encoder e(c.args);
        e.put_string(std::string_view(my_name).substr(0, kSmMaxStrLen));
        e.put_i32(state);
        const std::string who = a;
        if (sender.call(std::move(c), [who](rpc::CallbackResult r) {
                if (r.ok)
                    spdlog::info("nsm: {} notified of our restart", who);
                else
                    spdlog::warn("nsm: {} not notified of our restart: {}", who, r.error);
            }))
            ++sent;
    }
    return sent;
}

}  // namespace nfsrdmad::nfs::nlm
