#!/usr/bin/env bash
# fuzz.sh - build the libFuzzer targets (clang, -DSTRATA_FUZZ=ON) in
# build-fuzz and run them over their seed corpora.
#
# Usage: scripts/fuzz.sh [SECONDS [TARGET...]]
#          each target for SECONDS (default 300); .ci/run uses 15
#        scripts/fuzz.sh --campaign TOTAL [TARGET...]
#          every target in turn, TOTAL seconds shared evenly among them,
#          then a report: executions, coverage, corpus, peak memory and
#          findings per target (also written to
#          $FUZZ_BUILD/campaign/report.md; docs/testing.md keeps the last)
#   TARGET   a name of tests/fuzz/targets.txt (default: all of them)
# Environment: FUZZ_BUILD (default build-fuzz), FUZZ_JOBS (default 1:
# parallel workers per target, libFuzzer's -fork), FUZZ_PARALLEL (default
# 1: targets run at once in a campaign; the machine's cores bound it),
# FUZZ_RSS_MB (default 2048: the memory limit of a fuzzing process),
# FUZZ_ARGS (more libFuzzer flags), FUZZ_NOBUILD=1 (use the targets
# already built).
#
# Targets of mode "fork" (targets.txt) run in libFuzzer's fork mode: each
# child process fuzzes for a while (at most 300 s) under the memory limit
# and exits, so memory that hwloc leaks on damaged XML cannot pile up in
# one process; a crash, leak, timeout or out-of-memory in a child still
# stops the run and is a finding.  LeakSanitizer reads tests/fuzz/lsan.supp,
# which suppresses leaks inside libhwloc only: Strata's own allocations
# stay checked.
#
# The seeds in tests/fuzz/corpus/<target> are only read; what a run learns
# goes to $FUZZ_BUILD/corpus/<target>, kept between runs.  A crash, leak,
# timeout, out-of-memory or failed property leaves its input in
# $FUZZ_BUILD/crashes/ and makes the script exit 1: reproduce with
#   $FUZZ_BUILD/tests/fuzz/fuzz_<target> $FUZZ_BUILD/crashes/<file>
# then fix it and keep the input as a regression: in tests/bad-inputs (a
# case of cases.txt) or the seed corpus (which every run replays first).
# When clang or libFuzzer is missing it says so and exits 0 (nothing run).
# The whole script is one block, read before it runs: a campaign takes
# hours, and bash would otherwise read an edited script mid-run.
{
set -uo pipefail
cd "$(dirname "$0")/.."
campaign=0
if [ "${1:-}" = "--campaign" ]; then
  campaign=1
  shift
  if ! [[ "${1:-}" =~ ^[0-9]+$ ]]; then
    echo "fuzz.sh: --campaign wants a total time in seconds" >&2
    exit 2
  fi
fi
secs=${1:-300}
shift || true
build=${FUZZ_BUILD:-build-fuzz}
jobs=${FUZZ_JOBS:-1}
parallel=${FUZZ_PARALLEL:-1}
rss=${FUZZ_RSS_MB:-2048}
here=$PWD

# name dict max_len timeout mode, from targets.txt
declare -A t_dict t_len t_timeout t_mode
all=()
while read -r name dict len timeout mode _; do
  [[ -z "$name" || "$name" == \#* ]] && continue
  all+=("$name")
  t_dict[$name]=$dict t_len[$name]=$len t_timeout[$name]=$timeout
  t_mode[$name]=$mode
done <tests/fuzz/targets.txt
targets=("$@")
[ ${#targets[@]} -eq 0 ] && targets=("${all[@]}")
for t in "${targets[@]}"; do
  if [ -z "${t_mode[$t]:-}" ]; then
    echo "fuzz.sh: unknown target '$t' (${all[*]})" >&2
    exit 2
  fi
done

if ! command -v clang >/dev/null 2>&1; then
  echo "fuzz.sh: clang is not installed; skipping the fuzz targets" >&2
  exit 0
fi
if ! echo 'int LLVMFuzzerTestOneInput(const char *d, long n){(void)d;(void)n;return 0;}' |
    clang -x c -fsanitize=fuzzer -o /dev/null - >/dev/null 2>&1; then
  echo "fuzz.sh: clang cannot link -fsanitize=fuzzer (install libclang-rt-dev);" \
       "skipping the fuzz targets" >&2
  exit 0
fi
if [ "${FUZZ_NOBUILD:-0}" != 1 ]; then
  cmake -S . -B "$build" -DCMAKE_C_COMPILER=clang -DCMAKE_BUILD_TYPE=RelWithDebInfo \
    -DSTRATA_FUZZ=ON -DSTRATA_TESTS=OFF -DSTRATA_BENCH=OFF >/dev/null || exit 1
  cmake --build "$build" -j2 --target fuzz_all >/dev/null ||
    { echo "fuzz.sh: build failed" >&2; exit 1; }
fi

# fuzz_one TARGET SECONDS: run it; its log is $build/fuzz_TARGET.log.
fuzz_one() {
  local t=$1 s=$2 dict extra=() fork=0
  dict=${t_dict[$t]}
  [ "${t_mode[$t]}" = fork ] && fork=1
  [ "$jobs" -gt 1 ] && fork=$jobs
  extra=(-max_len="${t_len[$t]}" -timeout="${t_timeout[$t]}")
  [ "$dict" != - ] && extra+=(-dict="tests/fuzz/$dict")
  # fork mode: any crash, leak, timeout or out-of-memory of a child stops
  # the run (libFuzzer's defaults would carry on past timeouts and OOMs)
  [ "$fork" -gt 0 ] && extra+=(-fork="$fork" -ignore_crashes=0 -ignore_timeouts=0 -ignore_ooms=0)
  mkdir -p "$build/corpus/$t" "$build/crashes"
  # GNU time's %M is the peak RSS of the fuzzer or, in fork mode, of its
  # largest child
  local timer=()
  rm -f "$build/fuzz_$t.maxrss"
  [ -x /usr/bin/time ] && timer=(/usr/bin/time -f %M -o "$build/fuzz_$t.maxrss")
  # shellcheck disable=SC2086
  ASAN_OPTIONS=detect_leaks=1:allocator_may_return_null=1 \
  LSAN_OPTIONS=suppressions=$here/tests/fuzz/lsan.supp \
  UBSAN_OPTIONS=print_stacktrace=1:halt_on_error=1 \
    "${timer[@]}" "$build/tests/fuzz/fuzz_$t" "$build/corpus/$t" "tests/fuzz/corpus/$t" "${extra[@]}" \
      -max_total_time="$s" -rss_limit_mb="$rss" -print_final_stats=1 \
      -artifact_prefix="$build/crashes/$t-" ${FUZZ_ARGS:-} >"$build/fuzz_$t.log" 2>&1
}

# stats TARGET: "runs cov ft corpus rss" from its log ("?" where absent).
# In-process runs end with libFuzzer's final stats; fork mode's parent
# prints "#RUNS: cov: C ft: F corp: N ..." lines instead.
stats() {
  local log=$build/fuzz_$1.log runs cov ft corp rssmb line
  runs=$(grep -o 'stat::number_of_executed_units: *[0-9]*' "$log" | tail -1 | grep -o '[0-9]*$')
  rssmb=$(grep -o 'stat::peak_rss_mb: *[0-9]*' "$log" | tail -1 | grep -o '[0-9]*$')
  line=$(grep -E '^#[0-9]+:?[[:space:]].*cov: [0-9]+' "$log" | tail -1)
  [ -z "$runs" ] && runs=$(echo "$line" | sed -n 's/^#\([0-9]*\).*/\1/p')
  cov=$(echo "$line" | grep -o 'cov: [0-9]*' | grep -o '[0-9]*')
  ft=$(echo "$line" | grep -o 'ft: [0-9]*' | grep -o '[0-9]*')
  corp=$(ls "$build/corpus/$1" 2>/dev/null | wc -l)
  if [ -s "$build/fuzz_$1.maxrss" ]; then
    rssmb=$(($(tail -1 "$build/fuzz_$1.maxrss" | grep -o '^[0-9]*') / 1024))
  fi
  echo "${runs:-?} ${cov:-?} ${ft:-?} $corp ${rssmb:-?}"
}

status=0
if [ "$campaign" = 0 ]; then
  for t in "${targets[@]}"; do
    echo "fuzz.sh: $t for ${secs}s ($build/fuzz_$t.log)"
    before=$(ls "$build/crashes" 2>/dev/null | grep -c "^$t-")
    fuzz_one "$t" "$secs"
    rc=$?
    # fork mode's first pass over the seeds saves a crashing seed and
    # goes on: an input left in crashes/ is a finding whatever the exit
    after=$(ls "$build/crashes" 2>/dev/null | grep -c "^$t-")
    [ "$rc" -eq 0 ] && [ "$after" -gt "$before" ] && rc=1
    read -r runs cov _ _ _ < <(stats "$t")
    if [ $rc -ne 0 ]; then
      echo "fuzz.sh: $t FAILED (exit $rc); the end of $build/fuzz_$t.log:" >&2
      tail -40 "$build/fuzz_$t.log" >&2
      status=1
    else
      echo "fuzz.sh: $t ok: $runs inputs, cov $cov"
    fi
  done
  exit $status
fi

# ---- campaign: every target in turn, FUZZ_PARALLEL at a time
n=${#targets[@]}
each=$((secs / n))
[ "$each" -lt 1 ] && each=1
dir=$build/campaign
mkdir -p "$dir"
rm -f "$dir"/*.rc "$dir"/*.found "$dir"/report.md
start=$(date -u +%Y-%m-%dT%H:%MZ)
rev=$(git rev-parse --short HEAD 2>/dev/null || echo "?")
[ -n "$(git status --porcelain --untracked-files=no 2>/dev/null)" ] && rev="$rev+changes"
echo "fuzz.sh: campaign of ${secs}s: ${n} targets, ${each}s each, $parallel at a time"
run_target() {
  local t=$1 before after
  before=$(ls "$build/crashes" 2>/dev/null | grep -c "^$t-")
  fuzz_one "$t" "$each"
  local rc=$?
  after=$(ls "$build/crashes" 2>/dev/null | grep -c "^$t-")
  [ "$rc" -eq 0 ] && [ "$after" -gt "$before" ] && rc=1
  echo "$rc" >"$dir/$t.rc"
  echo $((after - before)) >"$dir/$t.found"
}
running=0
for t in "${targets[@]}"; do
  echo "fuzz.sh: $t for ${each}s ($build/fuzz_$t.log)"
  run_target "$t" &
  running=$((running + 1))
  if [ "$running" -ge "$parallel" ]; then
    wait -n
    running=$((running - 1))
  fi
done
wait
{
  echo "Campaign of $start, commit $rev: ${each} s per target (${n} targets," \
    "$parallel at a time), clang $(clang -dumpversion), -rss_limit_mb=$rss."
  echo
  echo "| target | mode | seconds | executions | coverage (edges) | features | corpus | peak RSS (MB) | findings |"
  echo "|---|---|---|---|---|---|---|---|---|"
  for t in "${targets[@]}"; do
    read -r runs cov ft corp rssmb < <(stats "$t")
    rc=$(cat "$dir/$t.rc") found=$(cat "$dir/$t.found")
    [ "$rc" -ne 0 ] && [ "$found" -eq 0 ] && found="exit $rc"
    echo "| $t | ${t_mode[$t]} | $each | $runs | $cov | $ft | $corp | $rssmb | $found |"
    [ "$rc" -ne 0 ] && status=1
  done
} >"$dir/report.md"
cat "$dir/report.md"
if [ $status -ne 0 ]; then
  echo "fuzz.sh: findings: see $build/crashes/ and $build/fuzz_<target>.log" >&2
fi
exit $status
}
