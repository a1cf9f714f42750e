#!/usr/bin/env bash
# Runs every test: the Release build's VM tier and package tests, then its end-to-end and
# bench smoke tests, then the unit tests under AddressSanitizer +
# UndefinedBehaviorSanitizer, then the Release build's end-to-end programs again against
# the sanitizer build's daemon (NFSRDMAD_E2E_DAEMON: each test program is compiled once),
# then the fuzz tier (the libFuzzer targets in $FUZZ_BUILD, default the sanitizer build:
# each replays its corpus and fuzzes briefly). Fails if any fails or if a tier ran no test
# at all. (Built in full, either tree also runs the other's tests: `make test-unit`.)
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

# $RELEASE_BUILD_CMD and $ASAN_BUILD_CMD (make test sets them) build what the VM tier does
# not need: the Release tree's end-to-end and bench programs, then the sanitizer tree's
# daemon, unit tests and fuzz targets. They run one after the other in the background at
# idle priority (SCHED_IDLE, nice 19) while the VM tier runs (make test builds only the
# daemon and the crafted requester first). That is not free: a TCG guest beside a compiler
# does about half its work per CPU second (the tcp group took 693 s beside a Release build
# against 347 s alone, on two cores), and the build went on at about 60 % of its pace, so
# the pair gains only some 15 % over one after the other. Whatever is compiled costs the
# VM tier time: hence each test program is compiled once (Makefile).
# The fuzz tier follows them there when the fuzz targets are in the sanitizer tree (the
# default): it replays each corpus and fuzzes for a fixed time, needs no daemon and no
# timing, and so only runs fewer inputs when the guests leave it less CPU. Its output is
# printed after the VM tier. Every other tier waits for all of it, so no test daemon races
# a compiler or a fuzzer for the CPU. A failed build prints its last 60 lines, fails the
# run, and skips the tiers it feeds. The background work runs in a session of its own: an
# interrupted run stops it too.
bg_pid=
bg_dir=
stop_builds() {
  [ -n "$bg_pid" ] && kill -- -"$bg_pid" 2>/dev/null
  [ -n "$bg_dir" ] && rm -rf "$bg_dir"
}
trap stop_builds EXIT
trap 'exit 130' INT TERM
if [ -n "${RELEASE_BUILD_CMD:-}${ASAN_BUILD_CMD:-}" ]; then
  bg_dir=$(mktemp -d)
  echo "=== builds for the other tiers, in the background at idle priority"
  idle="chrt --idle 0 nice -n 19"
  $idle true 2>/dev/null || idle="nice -n 19"  # SCHED_IDLE refused (a container's seccomp)
  # Each build: its output in $bg_dir/NAME.log, its exit status in $bg_dir/NAME.rc.
  # shellcheck disable=SC2016
  fuzz_bg=
  [ -n "${ASAN_BUILD_CMD:-}" ] && [ "$fuzz" = "$asan" ] && fuzz_bg=$fuzz
  D=$bg_dir FUZZ_DIR=$fuzz_bg JOBS=$jobs setsid $idle bash -c '
    for b in release asan; do
      cmd=$1; shift
      [ -n "$cmd" ] || { echo 0 > "$D/$b.rc"; continue; }
      t0=$SECONDS
      eval "$cmd" > "$D/$b.log" 2>&1
      echo $? > "$D/$b.rc"
      echo "=== $b build: $((SECONDS - t0)) s" >> "$D/$b.log"
    done
    if [ -n "$FUZZ_DIR" ] && [ "$(cat "$D/asan.rc")" = 0 ]; then
      t0=$SECONDS
      (cd "$FUZZ_DIR" && ctest --output-on-failure --timeout 900 -j "$JOBS" -L fuzz "$@") \
        > "$D/fuzz.log" 2>&1
      echo $? > "$D/fuzz.rc"
      echo "=== fuzz tier (in the background): $((SECONDS - t0)) s" >> "$D/fuzz.log"
    fi' _ "${RELEASE_BUILD_CMD:-}" "${ASAN_BUILD_CMD:-}" "$@" &
  bg_pid=$!
fi

# built NAME: 0 when the background build NAME succeeded (or none ran), else prints why.
built() {
  [ -n "$bg_dir" ] || return 0
  if [ "$(cat "$bg_dir/$1.rc" 2>/dev/null)" = 0 ]; then
    tail -1 "$bg_dir/$1.log" 2>/dev/null
    return 0
  fi
  echo "!!! the $1 build failed; its last lines:"
  tail -60 "$bg_dir/$1.log" 2>/dev/null
  status=1
  return 1
}

# The VM tier (label vm) boots a guest and runs the Release daemon in it: once is
# enough, so the sanitizer pass leaves it out. The package tests go with it: the .deb
# (package_deb) is the fixture of vm_nfsrdmad_package.
run_tier "release: vm + package" "$build" -L 'vm|package' "$@"

if [ -n "$bg_pid" ]; then
  echo "=== waiting for the background builds"
  wait "$bg_pid"
  bg_pid=
fi

# The Release build's end-to-end and bench smoke tests (in parallel, two at a time).
release_ok=0
if built release; then
  release_ok=1
  run_tier "release: e2e + bench" "$build" -L 'e2e|bench' "$@"
else
  echo "!!! no Release end-to-end tier: the build failed"
fi

asan_options=detect_leaks=1:abort_on_error=1
ubsan_options=print_stacktrace=1:halt_on_error=1
if built asan; then
  ASAN_OPTIONS=$asan_options UBSAN_OPTIONS=$ubsan_options \
    run_tier "asan+ubsan: unit" "$asan" -L unit "$@"
  # The end-to-end programs are clients: the daemon they start is what is under test.
  if [ $release_ok = 1 ]; then
    ASAN_OPTIONS=$asan_options UBSAN_OPTIONS=$ubsan_options \
      NFSRDMAD_E2E_DAEMON="$(cd "$asan" && pwd)/daemon/nfsrdmad" \
      run_tier "asan+ubsan: e2e (the Release tree's programs, the sanitized daemon)" "$build" -L e2e "$@"
  else
    echo "!!! no sanitizer end-to-end tier: the Release build of its programs failed"
  fi
  # libFuzzer targets (label fuzz): corpus replay, then a short fuzzing run each. Run in the
  # background during the VM tier when they are in the sanitizer tree (above).
  if [ -n "${fuzz_bg:-}" ]; then
    echo "=== fuzz: libFuzzer corpus replay + short runs (ran in the background)"
    cat "$bg_dir/fuzz.log" 2>/dev/null
    if [ "$(cat "$bg_dir/fuzz.rc" 2>/dev/null)" != 0 ]; then
      echo "!!! fuzz: failed (or never ran)"; status=1
    elif grep -q "No tests were found" "$bg_dir/fuzz.log"; then
      echo "!!! fuzz: no tests ran"; status=1
    fi
  else
    run_tier "fuzz: libFuzzer corpus replay + short runs" "$fuzz" -L fuzz "$@"
  fi
else
  echo "!!! no sanitizer or fuzz tier: the build failed"
fi

if [ $status -eq 0 ]; then echo "ALL TESTS PASSED"; else echo "SOME TESTS FAILED"; fi
exit $status
