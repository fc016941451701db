#!/usr/bin/env bash
# fuzz.sh - build the libFuzzer targets (clang, -DSTRATA_FUZZ=ON) in
# build-fuzz and run each for a while over its seed corpus.
#
# Usage: scripts/fuzz.sh [SECONDS [TARGET...]]
#   SECONDS  time per target (default 300); .ci/run uses 15
#   TARGET   trace, cluster, hwloc, plan (default: all four)
# Environment: FUZZ_BUILD (default build-fuzz), FUZZ_JOBS (default 1:
# parallel workers per target, libFuzzer's -fork), FUZZ_ARGS (more
# libFuzzer flags), FUZZ_NOBUILD=1 (use the targets already built).
# LeakSanitizer reads tests/fuzz/lsan.supp (a leak inside hwloc itself).
#
# The seeds in tests/fuzz/corpus/<target> are only read; what a run learns
# goes to $FUZZ_BUILD/corpus/<target>, kept between runs.  A crash, leak,
# timeout or failed property leaves its input in $FUZZ_BUILD/crashes/ and
# makes the script exit 1: reproduce with
#   $FUZZ_BUILD/tests/fuzz/fuzz_<target> $FUZZ_BUILD/crashes/<file>
# then add the input to tests/bad-inputs (or a unit test) with the fix.
# When clang or libFuzzer is missing it says so and exits 0 (nothing run).
set -uo pipefail
cd "$(dirname "$0")/.."
secs=${1:-300}
shift || true
targets=("$@")
[ ${#targets[@]} -eq 0 ] && targets=(trace hf cluster hwloc plan)
build=${FUZZ_BUILD:-build-fuzz}
jobs=${FUZZ_JOBS:-1}

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
[ "${FUZZ_NOBUILD:-0}" = 1 ] || cmake -S . -B "$build" -DCMAKE_C_COMPILER=clang -DCMAKE_BUILD_TYPE=RelWithDebInfo \
  -DSTRATA_FUZZ=ON -DSTRATA_TESTS=OFF -DSTRATA_BENCH=OFF >/dev/null || exit 1
[ "${FUZZ_NOBUILD:-0}" = 1 ] || cmake --build "$build" -j2 --target fuzz_trace fuzz_hf fuzz_cluster fuzz_hwloc fuzz_plan \
  >/dev/null || { echo "fuzz.sh: build failed" >&2; exit 1; }

status=0
mkdir -p "$build/crashes"
for t in "${targets[@]}"; do
  case $t in
    trace|hf|cluster) dict=tests/fuzz/json.dict; extra="-max_len=16384 -timeout=10" ;;
    hwloc) dict=tests/fuzz/xml.dict; extra="-max_len=65536 -timeout=30" ;;
    plan) dict=""; extra="-max_len=8192 -timeout=10" ;;
    *) echo "fuzz.sh: unknown target '$t' (trace, hf, cluster, hwloc, plan)" >&2; exit 2 ;;
  esac
  bin="$build/tests/fuzz/fuzz_$t"
  corpus="$build/corpus/$t"
  mkdir -p "$corpus"
  log="$build/fuzz_$t.log"
  echo "fuzz.sh: $t for ${secs}s ($log)"
  # shellcheck disable=SC2086
  ASAN_OPTIONS=detect_leaks=1:allocator_may_return_null=1 \
  LSAN_OPTIONS=suppressions=$PWD/tests/fuzz/lsan.supp \
  UBSAN_OPTIONS=print_stacktrace=1:halt_on_error=1 \
    "$bin" "$corpus" "tests/fuzz/corpus/$t" ${dict:+-dict=$dict} $extra \
      -max_total_time="$secs" -rss_limit_mb=2048 -print_final_stats=1 \
      -artifact_prefix="$build/crashes/$t-" \
      $([ "$jobs" -gt 1 ] && echo "-fork=$jobs -ignore_crashes=0") \
      ${FUZZ_ARGS:-} >"$log" 2>&1
  rc=$?
  runs=$(grep -o 'stat::number_of_executed_units: *[0-9]*' "$log" | tail -1 | grep -o '[0-9]*$')
  cov=$(grep -o 'cov: [0-9]*' "$log" | tail -1)
  if [ $rc -ne 0 ]; then
    echo "fuzz.sh: $t FAILED (exit $rc); the end of $log:" >&2
    tail -40 "$log" >&2
    status=1
  else
    echo "fuzz.sh: $t ok: ${runs:-?} inputs, ${cov:-cov ?}"
  fi
done
exit $status
