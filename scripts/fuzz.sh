#!/usr/bin/env bash
# make fuzz: runs every libFuzzer target of the fuzz build for SECONDS each (after
# replaying its corpus). New interesting inputs accumulate in BUILD/tests/fuzz/work/;
# crashes are kept in tests/fuzz/crashes/<target>/. Fails if any target fails.
set -uo pipefail
build=${1:?fuzz build dir} secs=${2:-60}
root=$(cd "$(dirname "$0")/.." && pwd)
shopt -s nullglob
bins=("$build"/tests/fuzz/fuzz_*)
[ ${#bins[@]} -gt 0 ] || { echo "!!! no fuzz targets in $build/tests/fuzz (make build-fuzz)"; exit 1; }
status=0
for bin in "${bins[@]}"; do
  [ -x "$bin" ] && [ -f "$bin" ] || continue
  t=$(basename "$bin"); t=${t#fuzz_}
  bash "$root/tests/fuzz/run_target.sh" "$bin" "$root/tests/fuzz/corpus/$t" "$secs" \
    "$build/tests/fuzz/work/$t" "$root/tests/fuzz/crashes/$t" || status=1
done
[ $status -eq 0 ] && echo "FUZZING FOUND NOTHING NEW" || echo "FUZZING FOUND CRASHES: see tests/fuzz/crashes/"
exit $status
