// service_manager.h — what systemd is told (sd_notify(3); the unit is Type=notify).
//
//   READY=1       once every listener is up and rpcbind knows the programs;
//   RELOADING=1   when a SIGHUP is taken, then READY=1 again when it is done, accepted
//                 or not (a rejected file is logged and the running exports stay);
//   STOPPING=1    when SIGTERM starts the shutdown;
//   STATUS=...    a line for `systemctl status` with each of the above;
//   WATCHDOG=1    every half WatchdogSec while every reactor turns (engine/liveness.h).
//                 A stalled reactor stops the pings, so systemd restarts the daemon
//                 (Restart=on-failure) instead of leaving its connections hung.
//
// Without NOTIFY_SOCKET (started by hand, by a test) every call does nothing.
#pragma once

#include <condition_variable>
#include <mutex>
#include <string_view>
#include <thread>

namespace nfsrdmad::engine {
class ReactorGroup;
}

namespace nfsrdmad::daemon {

class ServiceManager {
  public:
    ServiceManager() = default;
    ~ServiceManager() { stop_watchdog(); }
    ServiceManager(const ServiceManager&) = delete;
    ServiceManager& operator=(const ServiceManager&) = delete;

    void ready(std::string_view status);
    void reloading();
    void reloaded(std::string_view status);
    void stopping();

    // WATCHDOG_USEC set for this process: pings from a thread of its own until
    // stop_watchdog(), which must run before the reactors are stopped.
    void start_watchdog(engine::ReactorGroup& reactors);
    void stop_watchdog();

  private:
    std::thread watchdog_;
    std::mutex mu_;
    std::condition_variable cv_;
    bool stop_ = false;
};

}  // namespace nfsrdmad::daemon
