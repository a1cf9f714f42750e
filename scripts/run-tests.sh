#!/usr/bin/env bash
# Runs every test: the Release build's unit and end-to-end tests, then the same
# tests under AddressSanitizer + UndefinedBehaviorSanitizer, then the fuzz tier (the
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

# The Release build's unit and end-to-end tests first (in parallel, two at a time).
run_tier "release: unit + e2e" "$build" -LE 'vm|package' "$@"

# $ASAN_BUILD_CMD (make test sets it) builds the sanitizer tree, in the background and at
# idle priority (SCHED_IDLE, nice 19) while the VM tier runs: its TCG guests keep about
# 60 % of two cores busy, and the build takes what they leave instead of adding its own
# dozen minutes before the first test. It starts after the end-to-end tests, whose daemons
# would otherwise race it for the CPU. The sanitizer and fuzz tiers wait for it; a failed
# build fails them.
asan_built=1
asan_build_pid=
asan_build_log=
if [ -n "${ASAN_BUILD_CMD:-}" ]; then
  asan_build_log=$(mktemp)
  echo "=== sanitizer build, in the background at idle priority: $ASAN_BUILD_CMD"
  idle="chrt --idle 0 nice -n 19"
  $idle true 2>/dev/null || idle="nice -n 19"  # SCHED_IDLE refused (a container's seccomp)
  $idle bash -c "$ASAN_BUILD_CMD" > "$asan_build_log" 2>&1 &
  asan_build_pid=$!
fi

# The VM tier (label vm) boots a guest and runs the Release daemon in it: once is
# enough, so the sanitizer pass leaves it out. The package tests go with it: the .deb
# (package_deb) is the fixture of vm_nfsrdmad_package.
run_tier "release: vm + package" "$build" -L 'vm|package' "$@"

if [ -n "$asan_build_pid" ]; then
  echo "=== waiting for the sanitizer build"
  if wait "$asan_build_pid"; then
    tail -2 "$asan_build_log"
  else
    echo "!!! the sanitizer build failed; its last lines:"
    tail -60 "$asan_build_log"
    asan_built=0
    status=1
  fi
  rm -f "$asan_build_log"
fi
if [ "$asan_built" -eq 0 ]; then
  echo "!!! no sanitizer or fuzz tier: the sanitizer build failed"
  echo "SOME TESTS FAILED"
  exit 1
fi
ASAN_OPTIONS=detect_leaks=1:abort_on_error=1 UBSAN_OPTIONS=print_stacktrace=1:halt_on_error=1 \
  run_tier "asan+ubsan: unit + e2e" "$asan" -LE 'vm|fuzz' "$@"
# libFuzzer targets (label fuzz): corpus replay, then a short fuzzing run each.
run_tier "fuzz: libFuzzer corpus replay + short runs" "$fuzz" -L fuzz "$@"

if [ $status -eq 0 ]; then echo "ALL TESTS PASSED"; else echo "SOME TESTS FAILED"; fi
exit $status
