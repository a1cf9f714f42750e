#include "daemon/signals.h"

#include <signal.h>
#include <sys/signalfd.h>
#include <unistd.h>

#include <cerrno>

#include "nfs/vfs/lease.h"

namespace nfsrdmad::daemon {

SignalWaiter::SignalWaiter() {
    sigset_t set;
    sigemptyset(&set);
    for (int s : {SIGTERM, SIGINT, SIGHUP, SIGUSR1, SIGIO, vfs::lease_signal()}) sigaddset(&set, s);
    pthread_sigmask(SIG_BLOCK, &set, nullptr);
    signal(SIGPIPE, SIG_IGN);  // a peer that closes mid-reply is not a reason to die
    signal(SIGXFSZ, SIG_IGN);  // a write past RLIMIT_FSIZE fails with EFBIG instead
    fd_.reset(signalfd(-1, &set, SFD_CLOEXEC));
}

Signal SignalWaiter::wait(int* fd) {
    signalfd_siginfo si;
    for (;;) {
        ssize_t n = read(fd_.get(), &si, sizeof si);
        if (n == sizeof si) break;
        if (n < 0 && errno != EINTR) return Signal::Terminate;
    }
    if (static_cast<int>(si.ssi_signo) == vfs::lease_signal()) {
        if (fd) *fd = si.ssi_fd;
        return Signal::LeaseBreak;
    }
    switch (si.ssi_signo) {
        case SIGIO:
            return Signal::LeasesOverflow;
        case SIGHUP:
            return Signal::Reload;
        case SIGUSR1:
            return Signal::DumpStats;
        default:
            return Signal::Terminate;
    }
}

}  // namespace nfsrdmad::daemon
