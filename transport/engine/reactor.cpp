#include "transport/engine/reactor.h"

#include <pthread.h>
#include <sys/eventfd.h>

#include <cerrno>
#include <stdexcept>
#include <spdlog/fmt/fmt.h>

namespace nfsrdmad::engine {

Reactor::Reactor()
    : epfd_(epoll_create1(EPOLL_CLOEXEC)), wakefd_(eventfd(0, EFD_NONBLOCK | EFD_CLOEXEC)) {
    if (!epfd_ || !wakefd_) throw std::runtime_error("reactor: epoll/eventfd failed");
    epoll_event ev{};
    ev.events = EPOLLIN;
    ev.data.fd = wakefd_.get();
    epoll_ctl(epfd_.get(), EPOLL_CTL_ADD, wakefd_.get(), &ev);
}

Reactor::~Reactor() { stop(); }

void Reactor::start(std::string name) {
    thread_ = std::thread([this, name = std::move(name)] {
        pthread_setname_np(pthread_self(), name.substr(0, 15).c_str());
        run();
    });
}

void Reactor::stop() {
    if (!thread_.joinable()) return;
    stopping_ = true;
    uint64_t one = 1;
    (void)!write(wakefd_.get(), &one, sizeof one);
    thread_.join();
}

bool Reactor::add(int fd, uint32_t events, Handler h) {
    epoll_event ev{};
    ev.events = events;
    ev.data.fd = fd;
    if (epoll_ctl(epfd_.get(), EPOLL_CTL_ADD, fd, &ev) != 0) return false;
    handlers_[fd] = std::make_shared<Handler>(std::move(h));
    return true;
}

bool Reactor::modify(int fd, uint32_t events) {
    epoll_event ev{};
    ev.events = events;
    ev.data.fd = fd;
    return epoll_ctl(epfd_.get(), EPOLL_CTL_MOD, fd, &ev) == 0;
}

void Reactor::remove(int fd) {
    epoll_ctl(epfd_.get(), EPOLL_CTL_DEL, fd, nullptr);
    handlers_.erase(fd);
}

void Reactor::post(std::function<void()> fn) {
    {
        std::lock_guard lock(post_mu_);
        posted_.push_back(std::move(fn));
    }
    uint64_t one = 1;
    (void)!write(wakefd_.get(), &one, sizeof one);
}

void Reactor::drain_posted() {
    uint64_t n;
    (void)!read(wakefd_.get(), &n, sizeof n);
    std::vector<std::function<void()>> work;
    {
        std::lock_guard lock(post_mu_);
        work.swap(posted_);
    }
    for (auto& fn : work) fn();
}

void Reactor::run() {
    epoll_event events[64];
    while (!stopping_) {
        int n = epoll_wait(epfd_.get(), events, 64, -1);
        if (n < 0 && errno != EINTR) break;
        for (int i = 0; i < n; ++i) {
            int fd = events[i].data.fd;
            if (fd == wakefd_.get()) {
                drain_posted();
                continue;
            }
            auto it = handlers_.find(fd);
            if (it == handlers_.end()) continue;
            auto h = it->second;  // the handler may remove itself
            (*h)(events[i].events);
        }
    }
    drain_posted();
}

ReactorGroup::ReactorGroup(unsigned count) {
    for (unsigned i = 0; i < count; ++i) reactors_.push_back(std::make_unique<Reactor>());
}

void ReactorGroup::start() {
    for (size_t i = 0; i < reactors_.size(); ++i) reactors_[i]->start(fmt::format("reactor-{}", i));
}

void ReactorGroup::stop() {
    for (auto& r : reactors_) r->stop();
}

Reactor& ReactorGroup::next() { return *reactors_[next_++ % reactors_.size()]; }

}  // namespace nfsrdmad::engine
