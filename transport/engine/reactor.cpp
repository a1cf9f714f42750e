#include "transport/engine/reactor.h"

#include <pthread.h>
#include <sys/eventfd.h>

#include <spdlog/fmt/fmt.h>
#include <spdlog/spdlog.h>
#include <algorithm>
#include <cerrno>
#include <climits>
#include <cstdlib>
#include <ctime>
#include <stdexcept>
#include <type_traits>

#include "transport/engine/worker_pool.h"

namespace nfsrdmad::engine {

const char* mode_name(Mode m) {
    switch (m) {
        case Mode::Event:
            return "event";
        case Mode::Poll:
            return "poll";
        case Mode::Adaptive:
            return "adaptive";
    }
    return "?";
}

Reactor::Reactor(Mode mode, std::chrono::microseconds spin, SpinClock spin_clock)
    : mode_(mode),
      spin_(static_cast<uint64_t>(std::chrono::nanoseconds(spin).count())),
      spin_clock_(spin_clock),
      epfd_(epoll_create1(EPOLL_CLOEXEC)),
      wakefd_(eventfd(0, EFD_NONBLOCK | EFD_CLOEXEC)) {
    if (!epfd_ || !wakefd_) throw std::runtime_error("reactor: epoll/eventfd failed");
    epoll_event ev{};
    ev.events = EPOLLIN;
    ev.data.fd = wakefd_.get();
    epoll_ctl(epfd_.get(), EPOLL_CTL_ADD, wakefd_.get(), &ev);
}

Reactor::~Reactor() {
    stop();
}

void Reactor::start(std::string name) {
    thread_ = std::thread([this, name = std::move(name)] {
        pthread_setname_np(pthread_self(), name.substr(0, 15).c_str());
        run_here(nullptr);
    });
}

void Reactor::start(WorkerPool& pool) {
    hosted_ = true;
    pool.host(*this);
}

void Reactor::stop() {
    if (!thread_.joinable() && !hosted_) return;
    stopping_ = true;
    uint64_t one = 1;
    (void)!write(wakefd_.get(), &one, sizeof one);
    if (thread_.joinable()) {
        thread_.join();
        return;
    }
    // Hosted: whichever pool thread has the loop now ends it. The loop's last act is to
    // set stopped_ under the mutex, so nothing touches the reactor once this returns.
    std::unique_lock lock(stopped_mu_);
    stopped_cv_.wait(lock, [this] { return stopped_; });
    hosted_ = false;
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

uint64_t Reactor::add_poller(Poller p) {
    ++additions_;
    uint64_t id = next_poller_++;
    pollers_.emplace_back(id, std::make_shared<Poller>(std::move(p)));
    live_pollers_.fetch_add(1, std::memory_order_relaxed);
    return id;
}

void Reactor::remove_poller(uint64_t id) {
    for (auto& [pid, p] : pollers_)
        if (pid == id && p) {
            p.reset();  // erased by run_pollers(), which may be iterating now
            live_pollers_.fetch_sub(1, std::memory_order_relaxed);
        }
    pollers_dirty_ = true;
}

Reactor::Stats Reactor::stats() const {
    Stats s;
    s.sleeps = sleeps_.load(std::memory_order_relaxed);
    s.wakeups = wake_writes();
    s.lent = lent();
    s.spins = mode_ == Mode::Adaptive && live_pollers_.load(std::memory_order_relaxed) > 0;
    if (s.spins) s.spin_window_ns = spin_.ns();
    return s;
}

bool Reactor::run_pollers() {
    bool work = false;
    for (size_t i = 0; i < pollers_.size(); ++i) {  // a poller may add or remove pollers
        auto p = pollers_[i].second;
        if (p && p->poll()) work = true;
    }
    if (pollers_dirty_) {
        std::erase_if(pollers_, [](const auto& e) { return !e.second; });
        pollers_dirty_ = false;
    }
    return work;
}

bool Reactor::arm_pollers() {
    bool work = false;
    for (size_t i = 0; i < pollers_.size(); ++i) {
        auto p = pollers_[i].second;
        if (p && p->arm()) work = true;
    }
    return work;
}

uint64_t Reactor::spin_now() const {
    if (spin_clock_ != nullptr) return spin_clock_();
    return static_cast<uint64_t>(
        std::chrono::duration_cast<std::chrono::nanoseconds>(Clock::now().time_since_epoch())
            .count());
}

Reactor::Clock::time_point Reactor::coarse_now() {
    struct timespec ts {};
    ::clock_gettime(CLOCK_MONOTONIC_COARSE, &ts);
    // libstdc++'s steady_clock is CLOCK_MONOTONIC, of which this is the coarse reading.
    static_assert(std::is_same_v<Clock::duration, std::chrono::nanoseconds>);
    return Clock::time_point(std::chrono::seconds(ts.tv_sec) +
                             std::chrono::nanoseconds(ts.tv_nsec));
}

Reactor::TimerId Reactor::after(std::chrono::milliseconds delay, std::function<void()> fn) {
    ++additions_;
    TimerId id{coarse_now() + delay, next_timer_++};
    timers_.emplace(id, std::move(fn));
    return id;
}

void Reactor::cancel(TimerId id) {
    timers_.erase(id);
}

int Reactor::run_timers() {
    for (;;) {
        if (timers_.empty()) return -1;
        auto it = timers_.begin();
        auto now = coarse_now();
        if (it->first.at > now) {
            auto ms = std::chrono::ceil<std::chrono::milliseconds>(it->first.at - now).count();
            return static_cast<int>(std::min<int64_t>(ms, INT32_MAX));
        }
        auto fn = std::move(it->second);
        timers_.erase(it);  // before running: it may add or cancel timers
        fn();
    }
}

// The eventfd is written only when the reactor sleeps (or is about to): a reactor that is
// awake runs what was posted before it next waits, so a busy one costs its posters no
// system call and itself no extra epoll round (issue 13). The two flags are a Dekker pair:
// post() raises pending_ then reads sleeping_; run() raises sleeping_ then reads pending_.
// Sequentially consistent, at least one of them sees the other's store, so work is never
// left waiting on a sleeping reactor.
void Reactor::post(std::function<void()> fn) {
    {
        std::lock_guard lock(post_mu_);
        posted_.push_back(std::move(fn));
    }
    pending_.store(true);
    if (sleeping_.load()) {
        wake_writes_.fetch_add(1, std::memory_order_relaxed);
        uint64_t one = 1;
        (void)!write(wakefd_.get(), &one, sizeof one);
    }
}

bool Reactor::drain_posted() {
    pending_.store(false);  // before taking the list: what is posted after it is seen next round
    std::vector<std::function<void()>> work;
    {
        std::lock_guard lock(post_mu_);
        work.swap(posted_);
    }
    for (auto& fn : work) fn();
    return !work.empty();
}

// run_if_asleep: the loop's thread holds loop_mu_ except around a blocking epoll_wait, so
// taking it means the loop is asleep (or just woken and waiting for it): no handler,
// poller, timer or posted job of the loop runs until lend_end(). A job the lent `fn`
// posts wakes the loop as any post() does (sleeping_ is still set).
bool Reactor::lend_begin() {
    if (!lendable_.load(std::memory_order_acquire) || stopping_.load()) return false;
    if (!loop_mu_.try_lock()) return false;
    if (!lendable_.load(std::memory_order_relaxed) || stopping_.load()) {
        loop_mu_.unlock();
        return false;
    }
    lender_ = owner_.load(std::memory_order_relaxed);
    owner_.store(std::this_thread::get_id(), std::memory_order_relaxed);
    additions_at_lend_ = additions_;
    return true;
}

void Reactor::lend_end() {
    owner_.store(lender_, std::memory_order_relaxed);
    const bool replan = additions_ != additions_at_lend_;
    lent_.fetch_add(1, std::memory_order_relaxed);
    loop_mu_.unlock();
    if (replan) {
        wake_writes_.fetch_add(1, std::memory_order_relaxed);
        uint64_t one = 1;
        (void)!write(wakefd_.get(), &one, sizeof one);
    }
}

// The loop stops being this thread's before it may become another's.
bool Reactor::handed_over(const std::function<bool()>& hand_over) {
    if (!hand_over) return false;
    const auto me = owner_.load(std::memory_order_relaxed);
    owner_.store(std::thread::id{}, std::memory_order_relaxed);
    looping_.store(false, std::memory_order_release);
    if (hand_over()) return true;
    looping_.store(true, std::memory_order_relaxed);
    owner_.store(me, std::memory_order_relaxed);
    return false;
}

bool Reactor::run_here(const std::function<bool()>& hand_over) {
    // One thread at a time, whatever the hand-overs do: two would corrupt everything the
    // loop owns, so a second is not let in.
    if (looping_.exchange(true, std::memory_order_acquire)) {
        spdlog::critical("reactor: two threads in one loop");
        std::abort();
    }
    owner_.store(std::this_thread::get_id(), std::memory_order_relaxed);
    // A loop on a thread of its own lends itself while it sleeps (run_if_asleep).
    std::unique_lock<std::mutex> loop_lock;
    if (!hand_over && !hosted_) {
        loop_lock = std::unique_lock(loop_mu_);
        lendable_.store(true, std::memory_order_release);
    }
    epoll_event events[64];
    auto& last_work = last_work_;
    if (last_work == 0) last_work = spin_now();
    while (!stopping_) {
        bool busy = false;
        // Only a loop with pollers that it may spin on looks at when it last had work
        // (a clock reading per round saved for the others).
        const bool spins = mode_ != Mode::Event && !pollers_.empty();
        if (spins) {
            busy = mode_ == Mode::Poll || spin_now() - last_work < spin_.ns();
            // Going to sleep: every poller must be armed first, and whatever completed
            // before the arm must be reaped now, or it would wait for the next event.
            if (!busy && arm_pollers()) {
                last_work = spin_now();
                continue;
            }
        }
        int timeout = run_timers();
        if (handed_over(hand_over)) return true;  // a timer's job: before any sleep
        if (busy) timeout = 0;
        if (timeout != 0) {
            sleeping_.store(true);
            if (pending_.load()) timeout = 0;  // posted while we were deciding: do not sleep
        }
        // Only the loop's thread writes the count: no locked add needed.
        if (timeout != 0)
            sleeps_.store(sleeps_.load(std::memory_order_relaxed) + 1, std::memory_order_relaxed);
        const bool lend = timeout != 0 && loop_lock.owns_lock();
        if (lend) loop_lock.unlock();
        int n = epoll_wait(epfd_.get(), events, 64, timeout);
        sleeping_.store(false, std::memory_order_relaxed);
        if (lend) loop_lock.lock();
        if (n < 0 && errno != EINTR) break;
        // A sleep after a spin: was the spin too short, or longer than any worth doing?
        // (A timer's wake-up counts as a long wait: nothing came within the spin.)
        if (timeout != 0 && spins && mode_ == Mode::Adaptive)
            spin_.woke_after(spin_now() - last_work);
        for (int i = 0; i < n; ++i) {
            int fd = events[i].data.fd;
            if (fd == wakefd_.get()) {
                uint64_t count;
                (void)!read(wakefd_.get(), &count, sizeof count);
                continue;
            }
            auto it = handlers_.find(fd);
            if (it == handlers_.end()) continue;
            auto h = it->second;  // the handler may remove itself
            (*h)(events[i].events);
        }
        // The spin counts from the end of the round's work, not from its start: a round
        // that ran calls for longer than the spin still gets to spin after them.
        if (n > 0 && spins) last_work = spin_now();
        if (mode_ != Mode::Event && run_pollers()) last_work = spin_now();
        // Posted work is work: it keeps an adaptive reactor spinning, as the eventfd's
        // wakeup did when every post wrote it (a worker's reply sent now is often
        // followed by the client's next call: the spin catches it without an interrupt).
        if (pending_.load() && drain_posted() && spins) last_work = spin_now();
        // A handler of this round left a job for this thread (WorkerPool::submit): once a
        // parked worker has the loop, run it here. Nothing of the reactor is touched after.
        if (handed_over(hand_over)) return true;
    }
    lendable_.store(false, std::memory_order_relaxed);  // under loop_mu_: no lend after this
    drain_posted();
    owner_.store(std::thread::id{}, std::memory_order_relaxed);
    if (loop_lock.owns_lock()) loop_lock.unlock();
    looping_.store(false, std::memory_order_release);
    std::lock_guard lock(stopped_mu_);
    stopped_ = true;
    stopped_cv_.notify_all();
    return false;
}

ReactorGroup::ReactorGroup(unsigned count, Mode mode, std::chrono::microseconds spin,
                           unsigned own_thread, SpinClock spin_clock)
    : mode_(mode), spin_(spin), shared_(count) {
    for (unsigned i = 0; i < count + own_thread; ++i)
        reactors_.push_back(std::make_unique<Reactor>(mode, spin, spin_clock));
}

std::vector<Reactor::Stats> ReactorGroup::stats() const {
    std::vector<Reactor::Stats> out;
    out.reserve(reactors_.size());
    for (const auto& r : reactors_) out.push_back(r->stats());
    return out;
}

void ReactorGroup::start() {
    for (size_t i = 0; i < reactors_.size(); ++i) reactors_[i]->start(fmt::format("reactor-{}", i));
}

void ReactorGroup::start(WorkerPool& pool) {
    hosted_ = true;
    for (size_t i = 0; i < reactors_.size(); ++i) {
        if (i < shared_)
            reactors_[i]->start(pool);
        else
            reactors_[i]->start(fmt::format("reactor-{}", i));
    }
}

void ReactorGroup::stop() {
    for (auto& r : reactors_) r->stop();
}

Reactor& ReactorGroup::next() {
    if (shared_ == 0) throw std::logic_error("reactors: none for next()");
    return *reactors_[next_++ % shared_];
}

Reactor& ReactorGroup::next_own_thread() {
    const size_t own = reactors_.size() - shared_;
    if (own > 0) return *reactors_[shared_ + next_own_++ % own];
    if (!hosted_) return next();
    throw std::logic_error("reactors: none runs on a thread of its own");
}

}  // namespace nfsrdmad::engine
