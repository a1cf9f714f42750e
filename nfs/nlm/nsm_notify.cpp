#include "nfs/nlm/nsm_notify.h"

#include <arpa/inet.h>
#include <netinet/in.h>
#include <spdlog/spdlog.h>

#include <algorithm>

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

RebootNotices::RebootNotices(const std::vector<std::string>& addresses, std::string my_name,
                             int32_t state, Clock::time_point now)
    : my_name_(std::move(my_name)),
      state_(state),
      give_up_(now + kGiveUp),
      s_(std::make_shared<State>()) {
    for (const std::string& a : addresses) {
        Host h;
        h.address = a;
        h.next = now;
        auto* in = reinterpret_cast<sockaddr_in*>(&h.peer);
        auto* in6 = reinterpret_cast<sockaddr_in6*>(&h.peer);
        if (::inet_pton(AF_INET, a.c_str(), &in->sin_addr) == 1) {
            in->sin_family = AF_INET;
            h.peer_len = sizeof *in;
        } else if (::inet_pton(AF_INET6, a.c_str(), &in6->sin6_addr) == 1) {
            in6->sin6_family = AF_INET6;
            h.peer_len = sizeof *in6;
        } else {
            spdlog::warn("nsm: '{}' is not an address: not notified", log_text(a));
            continue;
        }
        s_->hosts.push_back(std::move(h));
    }
}

size_t RebootNotices::send_due(rpc::CallbackSender& sender, Clock::time_point now) {
    std::vector<rpc::OutgoingCall> calls;
    std::vector<std::string> addresses;
    {
        std::lock_guard l(s_->mu);
        auto& hosts = s_->hosts;
        if (now >= give_up_) {
            for (const Host& h : hosts)
                if (!h.done && !h.in_flight)
                    spdlog::warn("nsm: {} not notified of our restart within {} s: given up",
                                 h.address, kGiveUp.count());
            std::erase_if(hosts, [](const Host& h) { return !h.in_flight; });
            return 0;
        }
        for (Host& h : hosts) {
            if (h.done || h.in_flight || h.next > now) continue;
            h.in_flight = true;
            rpc::OutgoingCall c;
            c.peer = h.peer;
            c.peer_len = h.peer_len;
            c.prog = kSmProg;
            c.vers = kSmVers;
            c.proc = kSmNotify;
            // stat_chge: mon_name<SM_MAXSTRLEN>, state.
            xdr::Encoder e(c.args);
            e.put_string(std::string_view(my_name_).substr(0, kSmMaxStrLen));
            e.put_i32(state_);
            calls.push_back(std::move(c));
            addresses.push_back(h.address);
        }
    }
    // A host is found again by its address (the list changes only at give-up).
    auto find = [](State& s, const std::string& address) {
        return std::find_if(s.hosts.begin(), s.hosts.end(),
                            [&](const Host& h) { return h.address == address; });
    };
    size_t sent = 0;
    for (size_t i = 0; i < calls.size(); ++i) {
        auto done = [s = s_, address = addresses[i], find](rpc::CallbackResult r) {
            std::lock_guard l(s->mu);
            auto it = find(*s, address);
            if (it == s->hosts.end()) return;
            it->in_flight = false;
            if (r.ok) {
                it->done = true;
                spdlog::info("nsm: {} notified of our restart", address);
                return;
            }
            it->backoff = std::min(kMaxRetry, it->backoff.count() ? it->backoff * 2 : kFirstRetry);
            it->next = Clock::now() + it->backoff;
            spdlog::info("nsm: {} not notified of our restart yet ({}): again in {} s", address,
                         r.error, it->backoff.count());
        };
        if (sender.call(std::move(calls[i]), std::move(done))) {
            ++sent;
        } else {
            std::lock_guard l(s_->mu);  // the callback bound: the next round sends it
            if (auto it = find(*s_, addresses[i]); it != s_->hosts.end()) it->in_flight = false;
        }
    }
    return sent;
}

size_t RebootNotices::pending() const {
    std::lock_guard l(s_->mu);
    return static_cast<size_t>(
        std::count_if(s_->hosts.begin(), s_->hosts.end(), [](const Host& h) { return !h.done; }));
}

}  // namespace nfsrdmad::nfs::nlm
