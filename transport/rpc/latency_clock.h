// latency_clock.h — the clock calls and NFSv4.1 operations are timed with (the latency
// histograms of op_stats.h). A COMPOUND of n operations reads it n + 1 times.
//
// Normally CLOCK_MONOTONIC (what steady_clock reads), which the vDSO reads without
// entering the kernel (clock sources tsc, kvm-clock, hyperv, arm's arch timer). Where the
// kernel's clock source has no vDSO reader (hpet, acpi_pm: virtual machines, mostly)
// every CLOCK_MONOTONIC reading is a system call; there, on x86-64, the time-stamp counter
// is read instead (rdtsc, no system call), scaled to nanoseconds by a rate measured once
// against CLOCK_MONOTONIC. Readings serve differences only, never points in time: a
// difference that comes out negative (a thread moved to a CPU whose counter is behind)
// counts as 0. The kernel may have turned the counter down as its clock source for a
// drift that matters to wall time; for a histogram of calls it does not.
#pragma once

#include <time.h>

#include <cstdint>

namespace nfsrdmad::rpc::latency {

using Ticks = uint64_t;  // 0: no reading

namespace detail {
struct Source {
    bool tsc = false;
    double ns_per_tick = 1.0;
};
Source detect();
// Chosen once. Inline, as are now() and elapsed_ns(): a COMPOUND of n operations reads
// the clock n + 1 times, and each reading was two calls (issue 13).
inline const Source& source() {
    static const Source s = detect();
    return s;
}
}  // namespace detail

// Chooses the source and measures the counter's rate (a few ms, once); done on first use
// otherwise. The daemon calls it at start.
void init();
inline Ticks now() {
#if defined(__x86_64__)
    if (detail::source().tsc) return __builtin_ia32_rdtsc();
#endif
    struct timespec ts;
    ::clock_gettime(CLOCK_MONOTONIC, &ts);
    return static_cast<Ticks>(ts.tv_sec) * 1000000000u + static_cast<Ticks>(ts.tv_nsec);
}
// The same clock in nanoseconds from an arbitrary origin: what the reactors' adaptive spin
// is measured on (engine::SpinClock).
uint64_t now_ns();
// to - from in nanoseconds; 0 when `to` is not after `from`.
inline uint64_t elapsed_ns(Ticks from, Ticks to) {
    if (to <= from) return 0;
    const detail::Source& s = detail::source();
    if (!s.tsc) return to - from;
    return static_cast<uint64_t>(static_cast<double>(to - from) * s.ns_per_tick);
}
// The ticks of `ns` nanoseconds (tests move readings with it).
Ticks ticks_of_ns(uint64_t ns);
// Whether the counter is the source (for the start-up log line).
bool uses_tsc();

namespace detail {
// The counter's rate in nanoseconds per tick, measured against CLOCK_MONOTONIC over about
// 5 ms; false where there is no counter to read (not x86-64) or the measure failed.
bool tsc_rate(double* ns_per_tick);
// The counter itself (0 where there is none).
uint64_t tsc();
}  // namespace detail

}  // namespace nfsrdmad::rpc::latency
