#!/usr/bin/env bash
# Builds the libFuzzer program fuzzer (clang-16, ASan+UBSan) and runs it for a while on a copy of the seed corpus.
# Usage: tools/fuzz.sh [seconds (default 60)] [extra libFuzzer flags...]
# Environment: AUTOBATCH_FUZZ_BUILD_DIR (default build-fuzz), AUTOBATCH_JOBS
# (build parallelism, default 2), AUTOBATCH_FUZZ_CXX (default clang++-16),
# AUTOBATCH_FUZZ_CORPUS: a working corpus directory that keeps what the
# fuzzer finds across runs (long campaigns; the seeds are added to it);
# default a fresh temporary copy of tests/fuzz/corpus, so a run takes the
# time asked for. Crashes go to <build>/fuzz-artifacts/. Exits 1 if the
# fuzzer found a crash (its path and how to reproduce and minimize it are
# printed). docs/FUZZING.md has the log of campaigns.
set -euo pipefail
cd "$(dirname "$0")/.."
seconds=${1:-60}
shift || true
build=${AUTOBATCH_FUZZ_BUILD_DIR:-build-fuzz}
jobs=${AUTOBATCH_JOBS:-2}
cxx=${AUTOBATCH_FUZZ_CXX:-clang++-16}
if ! command -v "$cxx" >/dev/null; then
  echo "fuzz: $cxx not found; tools/install_deps.sh installs clang-16 and libclang-rt-16-dev" >&2
  exit 1
fi
generator=()
if [[ ! -f $build/CMakeCache.txt ]] && command -v ninja >/dev/null; then
  generator=(-G Ninja)
fi
cmake -S . -B "$build" "${generator[@]}" -DCMAKE_CXX_COMPILER="$cxx" \
  -DCMAKE_BUILD_TYPE=RelWithDebInfo -DAUTOBATCH_FUZZ=ON -DAUTOBATCH_INTERNAL_CHECKS=ON \
  -DAUTOBATCH_WERROR=OFF -DAUTOBATCH_BUILD_BENCH=OFF -DAUTOBATCH_BUILD_TESTS=ON >/dev/null
cmake --build "$build" -j"$jobs" --target autobatch_program_fuzzer

corpus=${AUTOBATCH_FUZZ_CORPUS:-}
if [[ -z $corpus ]]; then
  corpus=$(mktemp -d)
  trap 'rm -rf "$corpus"' EXIT
fi
artifacts=$build/fuzz-artifacts
mkdir -p "$corpus" "$artifacts"
for seed in tests/fuzz/corpus/*.json; do
  [[ -e $corpus/${seed##*/} ]] || cp "$seed" "$corpus"/
done
# Slow inputs (slow-unit-*) are written there too, but are no crash.
crashes_before=$(find "$artifacts" -type f ! -name 'slow-unit-*' | wc -l)
artifacts_before=$(find "$artifacts" -type f | sort)
log=$build/fuzz-last.log
echo "fuzz: running ${seconds} s on $(find "$corpus" -type f | wc -l) corpus files"
start=$SECONDS
status=0
"$build/tests/fuzz/autobatch_program_fuzzer" "$corpus" \
  -max_total_time="$seconds" -timeout=30 -rss_limit_mb=2048 -max_len=131072 \
  -dict=tests/fuzz/ir_json.dict -artifact_prefix="$artifacts/" -print_final_stats=1 \
  "$@" >"$log" 2>&1 || status=$?
elapsed=$((SECONDS - start))
runs=$(sed -n 's/^stat::number_of_executed_units: *//p' "$log" | tail -1)
rate=$(sed -n 's/^stat::average_exec_per_sec: *//p' "$log" | tail -1)
crashes=$(( $(find "$artifacts" -type f ! -name 'slow-unit-*' | wc -l) - crashes_before ))
echo "fuzz: ${runs:-?} executions in ${elapsed} s (${rate:-?} exec/s), corpus now" \
     "$(find "$corpus" -type f | wc -l) files, new crashes: $crashes (log: $log)"
if ((status != 0)); then
  grep -A1 -E "ERROR|finding|Test unit written|SUMMARY" "$log" | head -20 >&2 || true
  echo "fuzz: the fuzzer stopped with status $status. Reproduce a crash with" >&2
  echo "  $build/tests/fuzz/autobatch_program_fuzzer <crash file>" >&2
  echo "minimize it with -minimize_crash=1 -runs=100000, save it in tests/fuzz/regressions/" >&2
  # The crash files themselves, so that a finding on another machine (CI's
  # clean clone keeps nothing) can be reproduced from its log.
  comm -13 <(echo "$artifacts_before") <(find "$artifacts" -type f | sort) | head -3 |
    while read -r crash; do
      if (($(stat -c %s "$crash") <= 65536)); then
        echo "fuzz: $crash, base64 (decode with: base64 -d > crash.json):" >&2
        base64 -w 120 "$crash" >&2
      fi
    done
  exit 1
fi
