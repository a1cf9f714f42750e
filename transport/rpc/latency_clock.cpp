#include "transport/rpc/latency_clock.h"

#include <time.h>

#include <fstream>
#include <string>

#if defined(__x86_64__)
#include <x86intrin.h>
#endif

namespace nfsrdmad::rpc::latency {
namespace {

uint64_t monotonic_ns() {
    struct timespec ts {};
    ::clock_gettime(CLOCK_MONOTONIC, &ts);
    return static_cast<uint64_t>(ts.tv_sec) * 1000000000u + static_cast<uint64_t>(ts.tv_nsec);
}

// The clock sources whose readings the vDSO cannot serve (arch/x86: vdso_clock_mode
// VDSO_CLOCKMODE_NONE).
bool clock_source_needs_a_system_call() {
    std::ifstream f("/sys/devices/system/clocksource/clocksource0/current_clocksource");
    std::string name;
    if (!(f >> name)) return false;
    return name == "hpet" || name == "acpi_pm";
}

}  // namespace

namespace detail {

Source detect() {
    if (!clock_source_needs_a_system_call()) return {};
    Source s;
    s.tsc = tsc_rate(&s.ns_per_tick);
    return s;
}

uint64_t tsc() {
#if defined(__x86_64__)
    return __rdtsc();
#else
    return 0;
#endif
}

bool tsc_rate(double* ns_per_tick) {
#if defined(__x86_64__)
    const uint64_t ns0 = monotonic_ns();
    const uint64_t t0 = __rdtsc();
    struct timespec pause {0, 5000000};
    ::nanosleep(&pause, nullptr);
    const uint64_t t1 = __rdtsc();
    const uint64_t ns1 = monotonic_ns();
    if (t1 <= t0 || ns1 <= ns0) return false;
    *ns_per_tick = static_cast<double>(ns1 - ns0) / static_cast<double>(t1 - t0);
    return true;
#else
    (void)ns_per_tick;
    return false;
#endif
}

}  // namespace detail

void init() {
    (void)detail::source();
}

bool uses_tsc() {
    return detail::source().tsc;
}

uint64_t now_ns() {
    const detail::Source& s = detail::source();
    if (!s.tsc) return now();
    return static_cast<uint64_t>(static_cast<double>(detail::tsc()) * s.ns_per_tick);
}

Ticks ticks_of_ns(uint64_t ns) {
    const detail::Source& s = detail::source();
    if (!s.tsc) return ns;
    return static_cast<Ticks>(static_cast<double>(ns) / s.ns_per_tick);
}

}  // namespace nfsrdmad::rpc::latency
