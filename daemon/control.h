// The control socket: a unix stream socket in the state directory (control.sock, mode
// 0600, callers checked with SO_PEERCRED: root or the daemon's own user) through which
// the admin commands of the same binary (`nfsrdmad stats`, `exports`, `clients`,
// `log-level`) ask the running daemon. One request line in, one JSON document out, then
// the connection closes. It runs on a thread of its own, one caller at a time, with
// timeouts on both directions, so a silent caller delays the next by at most a second
// and never touches a reactor or a worker.
#pragma once

#include <functional>
#include <memory>
#include <string>

namespace nfsrdmad::daemon {

inline constexpr const char* kControlSocketName = "control.sock";
inline constexpr size_t kMaxControlRequest = 4096;

class ControlServer {
  public:
    // Answers one request line (without its newline): the JSON text to send back.
    using Handler = std::function<std::string(const std::string& request)>;

    // Binds `path` (a stale socket there is replaced) and starts serving. nullptr with
    // `why` on failure.
    static std::unique_ptr<ControlServer> start(const std::string& path, Handler handler,
                                                std::string* why);
    virtual ~ControlServer() = default;  // stops the thread, removes the socket
};

// The client side: sends `request`, returns the reply, or nullopt-like empty with `why`.
bool control_request(const std::string& path, const std::string& request, std::string* reply,
                     std::string* why);

}  // namespace nfsrdmad::daemon
