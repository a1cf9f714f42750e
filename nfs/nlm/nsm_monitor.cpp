#include "nfs/nlm/nsm_monitor.h"

#include <arpa/inet.h>
#include <netinet/in.h>
#include <spdlog/spdlog.h>

#include "nfs/common/log_text.h"
#include "xdr/runtime/xdr.h"

namespace nfsrdmad::nfs::nlm {

namespace {
constexpr uint32_t kSmProg = 100024, kSmVers = 1, kSmMon = 2, kSmUnmon = 3;
constexpr uint32_t kNlmProg = 100021, kNlmVers = 4;
constexpr size_t kSmMaxStrLen = 1024, kSmPrivSize = 16;

// A call to the statd at 127.0.0.1 whose arguments start with mon_id {mon_name, my_id
// {my_name, my_prog, my_vers, my_proc}}: SM_MON's and SM_UNMON's.
rpc::OutgoingCall statd_call(uint32_t proc, const std::string& mon_name) {
    rpc::OutgoingCall c;
    auto* in = reinterpret_cast<sockaddr_in*>(&c.peer);
    in->sin_family = AF_INET;
    in->sin_addr.s_addr = htonl(INADDR_LOOPBACK);
    c.peer_len = sizeof *in;
    c.prog = kSmProg;
    c.vers = kSmVers;
    c.proc = proc;
    xdr::Encoder e(c.args);
    e.put_string(std::string_view(mon_name).substr(0, kSmMaxStrLen));
    e.put_string("127.0.0.1");
    e.put_u32(kNlmProg);
    e.put_u32(kNlmVers);
    e.put_u32(kNsmNotifyProc);
    return c;
}

}  // namespace

bool monitor_host(rpc::CallbackSender& sender, const std::string& mon_name) {
    // mon: mon_id, then priv[SM_PRIV_SIZE].
    rpc::OutgoingCall c = statd_call(kSmMon, mon_name);
    uint8_t priv[kSmPrivSize] = {};
    xdr::Encoder(c.args).put_fixed(priv, sizeof priv);
    const std::string who = log_text(mon_name);
    return sender.call(std::move(c), [who](rpc::CallbackResult r) {
        xdr::Decoder d(r.results);
        const uint32_t res_stat = d.get_u32();  // sm_stat_res: STAT_SUCC 0, STAT_FAIL 1
        if (r.ok && d.ok() && res_stat == 0)
            spdlog::info("nsm: statd watches host '{}' for us", who);
        else
            spdlog::warn(
                "nsm: statd does not watch host '{}' ({}): its reboot will not free "
                "its locks",
                who, r.ok ? "STAT_FAIL" : r.error);
    });
}

bool unmonitor_host(rpc::CallbackSender& sender, const std::string& mon_name,
                    std::function<void()> after) {
    const std::string who = log_text(mon_name);
    // The result is sm_stat {state}: statd's own state, nothing to act on.
    return sender.call(statd_call(kSmUnmon, mon_name), [who, after](rpc::CallbackResult r) {
        if (r.ok)
            spdlog::info("nsm: statd no longer watches idle host '{}'", who);
        else
            spdlog::warn("nsm: SM_UNMON of idle host '{}' failed: {}", who, r.error);
        if (after) after();
    });
}

}  // namespace nfsrdmad::nfs::nlm
