#include "daemon/signals.h"

#include <signal.h>
#include <sys/signalfd.h>
#include <unistd.h>

#include <cerrno>

namespace nfsrdmad::daemon {

SignalWaiter::SignalWaiter() {
    sigset_t set;
    sigemptyset(&set);
    for (int s : {SIGTERM, SIGINT, SIGHUP, SIGUSR1}) sigaddset(&set, s);
    pthread_sigmask(SIG_BLOCK, &set, nullptr);
    signal(SIGPIPE, SIG_IGN);  // a peer that closes mid-reply is not a reason to die
    signal(SIGXFSZ, SIG_IGN);  // a write past RLIMIT_FSIZE fails with EFBIG instead
    fd_.reset(signalfd(-1, &set, SFD_CLOEXEC));
}

Signal SignalWaiter::wait() {
    signalfd_siginfo si;
    for (;;) {
        ssize_t n = read(fd_.get(), &si, sizeof si);
        if (n == sizeof si) break;
        if (n < 0 && errno != EINTR) return Signal::Terminate;
    }
    switch (si.ssi_signo) {
        case SIGHUP:
            return Signal::Reload;
        case SIGUSR1:
            return Signal::DumpStats;
        default:
            return Signal::Terminate;
    }
}

}  // namespace nfsrdmad::daemon
