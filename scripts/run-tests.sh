#!/usr/bin/env bash
# Runs every test: the Release build's VM tier and package tests, then its unit and
# end-to-end tests, then the same tests under AddressSanitizer +
# UndefinedBehaviorSanitizer, then the fuzz tier (the
# libFuzzer targets in $FUZZ_BUILD, default the sanitizer build: each replays its
# corpus and fuzzes briefly). Fails if any fails or if a tier ran no test at all.
# Tests run $CTEST_JOBS at a time (default: the CPU count): every e2e daemon picks its own
# ports, and what cannot share the machine (the VM groups, the rpcbind table check) is
# RUN_SERIAL.
set -uo pipefail
build=${1:?release build dir}
asan=${2:?sanitizer build dir}
fuzz=${FUZZ_BUILD:-$asan}
shift 2
jobs=${CTEST_JOBS:-$(nproc)}

status=0
run_tier() {
  local name=$1 dir=$2
  echo "=== $name"
  local log
  log=$(mktemp)
  [ -d "$dir" ] || { echo "!!! $name: no build directory $dir"; status=1; rm -f "$log"; return 0; }
  (cd "$dir" && ctest --output-on-failure --timeout 900 -j "$jobs" "${@:3}") 2>&1 | tee "$log"
  local rc=${PIPESTATUS[0]}
  if grep -q "No tests were found" "$log"; then
    echo "!!! $name: no tests ran"; rc=1
  fi
  rm -f "$log"
  [ "$rc" -ne 0 ] && status=1
  return 0
}

# $BACKGROUND_BUILD_CMD (make test sets it) builds what the VM tier does not need: the rest
# of the Release tree (unit, end-to-end and bench programs), then the sanitizer tree. It runs
# in the background at idle priority (SCHED_IDLE, nice 19) while the VM tier runs: the TCG
# guests keep about 60-70 % of two cores busy, and the builds take what they leave instead
# of adding their minutes before the first test. make test builds only the daemon and the
# crafted requester before the VM tier. Every other tier waits for the builds, so no test
# daemon races a compiler for the CPU; a failed build prints its last 60 lines and fails
# the run.
bg_pid=
bg_log=
if [ -n "${BACKGROUND_BUILD_CMD:-}" ]; then
  bg_log=$(mktemp)
  echo "=== builds for the other tiers, in the background at idle priority: $BACKGROUND_BUILD_CMD"
  idle="chrt --idle 0 nice -n 19"
  $idle true 2>/dev/null || idle="nice -n 19"  # SCHED_IDLE refused (a container's seccomp)
  $idle bash -c 't0=$SECONDS; eval "$1" || exit; echo "=== built in $((SECONDS - t0)) s"' \
    _ "$BACKGROUND_BUILD_CMD" > "$bg_log" 2>&1 &
  bg_pid=$!
fi

# The VM tier (label vm) boots a guest and runs the Release daemon in it: once is
# enough, so the sanitizer pass leaves it out. The package tests go with it: the .deb
# (package_deb) is the fixture of vm_nfsrdmad_package.
run_tier "release: vm + package" "$build" -L 'vm|package' "$@"

if [ -n "$bg_pid" ]; then
  echo "=== waiting for the background builds"
  if wait "$bg_pid"; then
    tail -1 "$bg_log"
  else
    echo "!!! a background build failed; its last lines:"
    tail -60 "$bg_log"
    rm -f "$bg_log"
    echo "!!! no unit, end-to-end, sanitizer or fuzz tier: the build failed"
    echo "SOME TESTS FAILED"
    exit 1
  fi
  rm -f "$bg_log"
fi

# The Release build's unit and end-to-end tests (in parallel, two at a time).
run_tier "release: unit + e2e" "$build" -LE 'vm|package' "$@"

ASAN_OPTIONS=detect_leaks=1:abort_on_error=1 UBSAN_OPTIONS=print_stacktrace=1:halt_on_error=1 \
  run_tier "asan+ubsan: unit + e2e" "$asan" -LE 'vm|fuzz' "$@"
# libFuzzer targets (label fuzz): corpus replay, then a short fuzzing run each.
run_tier "fuzz: libFuzzer corpus replay + short runs" "$fuzz" -L fuzz "$@"

if [ $status -eq 0 ]; then echo "ALL TESTS PASSED"; else echo "SOME TESTS FAILED"; fi
exit $status
