#include "daemon/control.h"

#include <poll.h>
#include <sys/eventfd.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/un.h>
#include <unistd.h>

#include <spdlog/spdlog.h>

#include <cerrno>
#include <cstring>
#include <thread>

namespace nfsrdmad::daemon {

namespace {

class Fd {
  public:
    explicit Fd(int fd = -1) : fd_(fd) {}
    ~Fd() {
        if (fd_ >= 0) ::close(fd_);
    }
    Fd(const Fd&) = delete;
    Fd& operator=(const Fd&) = delete;
    int get() const { return fd_; }

  private:
    int fd_;
};

bool address(const std::string& path, sockaddr_un& a, std::string* why) {
    a = {};
    a.sun_family = AF_UNIX;
    if (path.size() >= sizeof a.sun_path) {
        *why = path + ": path too long for a unix socket";
        return false;
    }
    path.copy(a.sun_path, path.size());
    return true;
}

void timeouts(int fd, int seconds) {
    timeval tv{seconds, 0};
    ::setsockopt(fd, SOL_SOCKET, SO_RCVTIMEO, &tv, sizeof tv);
    ::setsockopt(fd, SOL_SOCKET, SO_SNDTIMEO, &tv, sizeof tv);
}

bool send_all(int fd, const std::string& s) {
    size_t at = 0;
    while (at < s.size()) {
        ssize_t n = ::send(fd, s.data() + at, s.size() - at, MSG_NOSIGNAL);
        if (n < 0 && errno == EINTR) continue;
        if (n <= 0) return false;
        at += size_t(n);
    }
    return true;
}

class Server final : public ControlServer {
  public:
    Server(int listener, std::string path, Handler h)
        : listener_(listener),
          stop_(::eventfd(0, EFD_CLOEXEC)),
          path_(std::move(path)),
          handler_(std::move(h)),
          thread_([this] { run(); }) {}
    ~Server() override {
        uint64_t one = 1;
        [[maybe_unused]] auto n = ::write(stop_.get(), &one, sizeof one);
        thread_.join();
        ::unlink(path_.c_str());
    }

  private:
    void run() {
        for (;;) {
            pollfd p[2] = {{listener_.get(), POLLIN, 0}, {stop_.get(), POLLIN, 0}};
            if (::poll(p, 2, -1) < 0) {
                if (errno == EINTR) continue;
                spdlog::error("control: poll: {}", std::strerror(errno));
                return;
            }
            if (p[1].revents) return;
            if (p[0].revents) serve_one();
        }
    }

    void serve_one() {
        Fd c(::accept4(listener_.get(), nullptr, nullptr, SOCK_CLOEXEC));
        if (c.get() < 0) return;
        // Root, or the user the daemon runs as; the socket's mode says the same.
        ucred who{};
        socklen_t len = sizeof who;
        if (::getsockopt(c.get(), SOL_SOCKET, SO_PEERCRED, &who, &len) != 0 ||
            (who.uid != 0 && who.uid != ::geteuid())) {
            spdlog::warn("control: refused a caller with uid {}", who.uid);
            return;
        }
        timeouts(c.get(), 1);
        std::string request;
        char buf[512];
        while (request.find('\n') == std::string::npos && request.size() < kMaxControlRequest) {
            ssize_t n = ::recv(c.get(), buf, sizeof buf, 0);
            if (n < 0 && errno == EINTR) continue;
            if (n <= 0) break;
            request.append(buf, size_t(n));
        }
        const size_t nl = request.find('\n');
        if (nl == std::string::npos) {
            send_all(c.get(), R"({"error":"a request is one line of at most 4096 bytes"})");
            return;
        }
        request.resize(nl);
        timeouts(c.get(), 5);
        send_all(c.get(), handler_(request) + "\n");
    }

    Fd listener_, stop_;
    std::string path_;
    Handler handler_;
    std::thread thread_;
};

}  // namespace

std::unique_ptr<ControlServer> ControlServer::start(const std::string& path, Handler handler,
                                                    std::string* why) {
    sockaddr_un a;
    if (!address(path, a, why)) return nullptr;
    // A socket left by a daemon that did not stop cleanly is replaced; one a live daemon
    // answers on (a second daemon given the same state_dir) and anything else are not.
    struct stat st {};
    if (::lstat(path.c_str(), &st) == 0) {
        if (!S_ISSOCK(st.st_mode)) {
            *why = path + ": exists and is not a socket";
            return nullptr;
        }
        Fd probe(::socket(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0));
        if (probe.get() >= 0 &&
            ::connect(probe.get(), reinterpret_cast<sockaddr*>(&a), sizeof a) == 0) {
            *why = path + ": another nfsrdmad answers on it (two daemons with one state_dir)";
            return nullptr;
        }
        ::unlink(path.c_str());
    }
    int fd = ::socket(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0);
    if (fd < 0) {
        *why = std::string("socket: ") + std::strerror(errno);
        return nullptr;
    }
    // Connecting takes write permission on the socket: the umask already denies it to
    // others (the unit's UMask=0077, or 022); 0600 says so plainly before listen().
    if (::bind(fd, reinterpret_cast<sockaddr*>(&a), sizeof a) != 0 ||
        ::chmod(path.c_str(), 0600) != 0 || ::listen(fd, 16) != 0) {
        *why = path + ": " + std::strerror(errno);
        ::close(fd);
        return nullptr;
    }
    return std::make_unique<Server>(fd, path, std::move(handler));
}

bool control_request(const std::string& path, const std::string& request, std::string* reply,
                     std::string* why) {
    sockaddr_un a;
    if (!address(path, a, why)) return false;
    Fd c(::socket(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0));
    if (c.get() < 0 || ::connect(c.get(), reinterpret_cast<sockaddr*>(&a), sizeof a) != 0) {
        *why = path + ": " + std::strerror(errno) +
               (errno == ENOENT || errno == ECONNREFUSED ? " (is nfsrdmad running?)" : "") +
               (errno == EACCES ? " (the control socket is root's)" : "");
        return false;
    }
    timeouts(c.get(), 10);
    if (!send_all(c.get(), request + "\n")) {
        *why = path + ": send: " + std::strerror(errno);
        return false;
    }
    reply->clear();
    char buf[4096];
    for (;;) {
        ssize_t n = ::recv(c.get(), buf, sizeof buf, 0);
        if (n < 0 && errno == EINTR) continue;
        if (n < 0) {
            *why = path + ": receive: " + std::strerror(errno);
            return false;
        }
        if (n == 0) break;
        reply->append(buf, size_t(n));
    }
    if (reply->empty()) {
        *why = path + ": the daemon closed the connection without an answer";
        return false;
    }
    return true;
}

}  // namespace nfsrdmad::daemon
