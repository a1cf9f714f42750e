#include "daemon/service_manager.h"

#include <pthread.h>
#include <systemd/sd-daemon.h>
#include <time.h>

#include <chrono>
#include <cstring>
#include <string>
#include <vector>

#include <spdlog/spdlog.h>

#include "transport/engine/liveness.h"
#include "transport/engine/reactor.h"

namespace nfsrdmad::daemon {
namespace {

void notify(const std::string& state) {
    // unset_environment 0: the watchdog thread reads WATCHDOG_USEC after this.
    if (int r = sd_notify(0, state.c_str()); r < 0)
        spdlog::warn("systemd: notify {}: {}", state.substr(0, state.find('\n')),
                     std::strerror(-r));
}

std::string status_line(std::string_view s) {
    return "STATUS=" + std::string(s);
}

}  // namespace

void ServiceManager::ready(std::string_view status) {
    notify("READY=1\n" + status_line(status));
}

void ServiceManager::reloading() {
    // MONOTONIC_USEC: systemd 253's Type=notify-reload asks for it; older ones ignore it.
    timespec ts{};
    ::clock_gettime(CLOCK_MONOTONIC, &ts);
    const uint64_t usec = uint64_t(ts.tv_sec) * 1000000 + uint64_t(ts.tv_nsec) / 1000;
    notify("RELOADING=1\nMONOTONIC_USEC=" + std::to_string(usec) + "\n" +
           status_line("reloading the configuration"));
}

void ServiceManager::reloaded(std::string_view status) {
    notify("READY=1\n" + status_line(status));
}

void ServiceManager::stopping() {
    notify("STOPPING=1\n" + status_line("stopping: finishing calls in flight"));
}

void ServiceManager::start_watchdog(engine::ReactorGroup& reactors) {
    uint64_t usec = 0;
    if (sd_watchdog_enabled(0, &usec) <= 0 || usec == 0) return;
    const auto period = std::chrono::microseconds(usec / 2);
    spdlog::info("systemd: watchdog every {} ms while the {} reactor(s) turn", usec / 2000,
                 reactors.size());
    watchdog_ = std::thread([this, &reactors, period] {
        pthread_setname_np(pthread_self(), "watchdog");
        engine::Liveness live(reactors.size());
        std::vector<size_t> stalled;
        std::unique_lock lock(mu_);
        while (!stop_) {
            auto late = live.next_round(reactors);
            if (late.empty()) {
                if (!stalled.empty()) spdlog::warn("systemd: every reactor turns again");
                sd_notify(0, "WATCHDOG=1");
            } else if (late != stalled) {
                std::string names;
                for (size_t i : late) names += fmt::format(" reactor-{}", i);
                spdlog::error(
                    "systemd: no watchdog ping:{} did not run for {} ms (blocked); systemd "
                    "restarts the daemon if it stays so",
                    names, period.count() / 1000);
            }
            stalled = std::move(late);
            cv_.wait_for(lock, period, [this] { return stop_; });
        }
    });
}

void ServiceManager::stop_watchdog() {
    {
        std::lock_guard lock(mu_);
        stop_ = true;
    }
    cv_.notify_all();
    if (watchdog_.joinable()) watchdog_.join();
}

}  // namespace nfsrdmad::daemon
