#!/usr/bin/env bash
# Runs one libFuzzer target: first replays every stored input (seeds and past crashes) once,
# then fuzzes for SECONDS. Fails loudly when it cannot run, when an input crashes, or when
# fuzzing finds a new crash (kept in CRASH_DIR, to be fixed and added to the corpus).
#
#   run_target.sh BINARY CORPUS_DIR SECONDS WORK_DIR CRASH_DIR
#
# New interesting inputs go to WORK_DIR/corpus (kept between runs), never into CORPUS_DIR.
set -uo pipefail
bin=${1:?fuzz target binary} corpus=${2:?corpus dir} secs=${3:?seconds} work=${4:?work dir}
crashes=${5:?crash dir}
name=$(basename "$bin")

fail() { echo "!!! $name: $*"; exit 1; }
[ -x "$bin" ] || fail "no fuzz target at $bin (make build-fuzz)"
shopt -s nullglob
inputs=("$corpus"/*)
[ ${#inputs[@]} -gt 0 ] || fail "empty corpus $corpus"
mkdir -p "$work/corpus" "$crashes" || fail "cannot create $work or $crashes"

echo "=== $name: replaying ${#inputs[@]} stored inputs"
timeout -s KILL 300 "$bin" -timeout=25 -rss_limit_mb=1024 "${inputs[@]}" >"$work/replay.log" 2>&1 ||
  { tail -60 "$work/replay.log"; fail "a stored input fails (log: $work/replay.log)"; }

echo "=== $name: fuzzing for ${secs}s"
before=$(ls "$crashes" | wc -l)
# An input that runs away with memory can leave libFuzzer's own OOM report stuck
# (ASan walks millions of chunks): the outer timeout turns that into a failure too.
timeout -s KILL $((secs + 120)) \
  "$bin" -max_total_time="$secs" -timeout=25 -rss_limit_mb=1024 -max_len=65536 -print_final_stats=1 \
  -artifact_prefix="$crashes/" "$work/corpus" "$corpus" >"$work/fuzz.log" 2>&1
rc=$?
grep -E "^(stat::number_of_executed_units|stat::new_units_added|Done)" "$work/fuzz.log"
after=$(ls "$crashes" | wc -l)
if [ $rc -ne 0 ] || [ "$after" -ne "$before" ]; then
  tail -80 "$work/fuzz.log"
  fail "fuzzing failed (exit $rc); new inputs in $crashes (log: $work/fuzz.log)"
fi
grep -q "^Done" "$work/fuzz.log" || fail "libFuzzer did not finish normally (log: $work/fuzz.log)"
echo "=== $name: ok"
