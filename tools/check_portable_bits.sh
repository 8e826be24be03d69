#!/usr/bin/env bash
# Checks the cross-build promise (docs/DESIGN.md, "Determinism"): a portable
# build and a -march=native build on this machine give byte-identical results.
# Usage: tools/check_portable_bits.sh [native build dir, default build/]
#                                     [portable build dir, default build-portable/]
#   1. configures the portable build (-DAUTOBATCH_PORTABLE=ON, no benchmarks)
#      unless the directory named is already configured portable (CI names
#      build-asan/, the sanitizer build, which is portable, at -O1, and
#      instrumented, so it checks optimization levels as well), and builds
#      only the autobatch CLI and differential_test there, and those and
#      fused_blocks_test in the native build (a no-op after tools/build.sh);
#   2. checks that no code in those native binaries (generated fused blocks
#      included) uses FMA except the Eigen
#      matrix products behind matvec_batched and ar1_batched (not bit-stable)
#      and the diagnostics' FFT (outside the promise);
#   3. runs the differential suite with AUTOBATCH_DIFFERENTIAL_DUMP (every
#      program's outputs, hex bits, in test order) in both builds;
#   4. runs the README demo (eight_schools; 256 chains and 250 draws where
#      the demo has 1024 and 1000) with --sig-figs 17 in both builds; its Stan CSV files
#      (draws, adapted step sizes and inverse metrics) without the timing
#      lines, which are outside the promise;
#   5. compares with cmp and prints PASS, or FAIL with the first differing line.
# Outputs go to <portable build>/portable-bits/ (the demo texts, 28 MB, are
# kept only on failure). Measured on 2 cores (2026-11-30), against
# build-asan/: about 3 minutes once both trees are built (the differential
# suite and the demo: 159 s under ASan, 14 s native); building
# build-portable/ the first time would take 25 min more, which is why CI
# uses its sanitizer build.
set -euo pipefail
cd "$(dirname "$0")/.."
native=${1:-build}
native=${native%/}
portable=${2:-build-portable}
portable=${portable%/}
jobs=${AUTOBATCH_JOBS:-2}
out=$portable/portable-bits
targets=(autobatch differential_test)
demo_chains=256

fail() {
  echo "check_portable_bits: FAIL: $*" >&2
  exit 1
}

if [[ ! -f $native/CMakeCache.txt ]]; then
  fail "'$native' is not a configured build directory; run tools/build.sh or name one as the argument"
fi
if ! grep -q '^AUTOBATCH_PORTABLE:BOOL=OFF$' "$native/CMakeCache.txt"; then
  fail "'$native' is not a -march=native build (its AUTOBATCH_PORTABLE is not OFF); name the build tools/build.sh makes"
fi

if ! grep -qs '^AUTOBATCH_PORTABLE:BOOL=ON$' "$portable/CMakeCache.txt"; then
  if [[ -f $portable/CMakeCache.txt ]]; then
    fail "'$portable' is configured but not portable (its AUTOBATCH_PORTABLE is not ON)"
  fi
  cmake -S . -B "$portable" -DCMAKE_BUILD_TYPE=RelWithDebInfo -DAUTOBATCH_INTERNAL_CHECKS=ON \
    -DAUTOBATCH_WERROR=ON -DAUTOBATCH_PORTABLE=ON -DAUTOBATCH_BUILD_BENCH=OFF >/dev/null
fi
if grep -qs '^AUTOBATCH_SANITIZE:STRING=..*$' "$portable/CMakeCache.txt"; then
  # As tools/sanitize.sh: ASan's redzones make the host recursion of the deep
  # programs need a larger stack; and any finding fails the check.
  ulimit -S -s 131072 2>/dev/null || ulimit -S -s unlimited 2>/dev/null || true
  # CI's ASan stage leaves differential_test to this run (.ci/run), which
  # also checks stack use after return there; the demo, CLI and sampler
  # code, runs without it as in the ASan stage (tools/sanitize.sh).
  export ASAN_OPTIONS=detect_leaks=1:abort_on_error=1:strict_string_checks=1:detect_stack_use_after_return=1
  demo_asan_options=$ASAN_OPTIONS:detect_stack_use_after_return=0
  export UBSAN_OPTIONS=print_stacktrace=1:halt_on_error=1
fi
cmake --build "$portable" --target "${targets[@]}" -j"$jobs"
cmake --build "$native" --target "${targets[@]}" fused_blocks_test -j"$jobs"
if grep -q -- '-march=native' "$portable/compile_commands.json"; then
  fail "$portable compiles with -march=native; reconfigure it with -DAUTOBATCH_PORTABLE=ON"
fi

# FMA instructions by function in a binary: "count function" lines.
fma_functions() {
  objdump -d --no-show-raw-insn -C "$1" |
    awk '/^[0-9a-f]+ <.*>:$/ { fn = substr($0, index($0, "<")) }
         /\tv?fn?m(add|sub)(sub|add)?[0-9]+[ps][sd]/ { count[fn]++ }
         END { for (f in count) print count[f], f }'
}
# Where FMA may appear: Eigen's GEMM and GEMV kernels, reached only from
# matvec_batched (RunMatVecBatched) and ar1_batched
# (Ar1Gaussian::LogDensityGradientBatch), the documented exceptions; and
# Eigen's FFT in the diagnostics (ESS), outside the promise, where GCC 12's
# SLP vectorizer turns complex products into vfmaddsub even under
# -ffp-contract=off, which is why this check reads the machine code.
allowed_fma='<Eigen::internal::(gebp_kernel|general_matrix_vector_product|lhs_process_one_packet)<'
allowed_fma+='|<(void )?Eigen::internal::(kiss_cpx_fft|kissfft_impl)<'
allowed_fma+='|<autobatch::\(anonymous namespace\)::RunMatVecBatched\('
allowed_fma+='|<autobatch::mcmc::Ar1Gaussian::LogDensityGradientBatch\('
# fused_blocks_test holds generated code (codegen), compiled as the JIT does.
for binary in "$native/tools/autobatch" "$native/tests/vm/differential_test" \
              "$native/tests/vm/fused_blocks_test"; do
  unexpected=$(fma_functions "$binary" | grep -Ev "$allowed_fma" || true)
  if [[ -n $unexpected ]]; then
    fail "FMA instructions in $binary outside the matvec_batched exception (count, function):
$unexpected
Keep Eigen products (packet pmadd) and std::fma off bit-stable paths (docs/DESIGN.md, Determinism)."
  fi
done

rm -rf "$out"
mkdir -p "$out"
# Drops the Stan CSV timing lines ("#  Elapsed Time: 0.42 seconds (Warm-up)"
# and the two under it) and prefixes each file with its name.
strip_timings() {  # strip_timings <output dir>
  local file
  for file in $(cd "$1" && ls | sort -V); do
    echo "== $file"
    grep -Ev '^#.* seconds \((Warm-up|Sampling|Total)\)$' "$1/$file"
  done
}
# Runs the differential suite of build dir $1 one test per process, $jobs at
# a time (one process took 4.5 minutes under ASan), each dumping to its own
# file, then joins the dumps in test order into $2: the bytes one process
# would write.
run_differential() {  # run_differential <build dir> <dump file> <log file>
  local binary=$1/tests/vm/differential_test i failed=0 tests
  mapfile -t tests < <("$binary" --gtest_list_tests |
                       awk '/^[^ ]/ { suite = $1 } /^  / { print suite $1 }')
  ((${#tests[@]} > 0)) || return 1
  for i in "${!tests[@]}"; do
    while (($(jobs -rp | wc -l) >= jobs)); do wait -n || true; done
    (
      status=0
      AUTOBATCH_DIFFERENTIAL_DUMP="$2.$i" "$binary" --gtest_filter="${tests[$i]}" >"$3.$i" 2>&1 ||
        status=$?
      echo "$status" >"$3.$i.status"
    ) &
  done
  wait
  for i in "${!tests[@]}"; do
    [[ $(cat "$3.$i.status") == 0 ]] || failed=1
    cat "$3.$i" >>"$3" && rm "$3.$i" "$3.$i.status"
    if [[ -f $2.$i ]]; then cat "$2.$i" >>"$2" && rm "$2.$i"; fi
  done
  return $failed
}
for kind in native portable; do
  if [[ $kind == native ]]; then dir=$native; else dir=$portable; fi
  start=$SECONDS
  run_differential "$dir" "$out/$kind.differential.txt" "$out/$kind.differential.log" ||
    fail "$dir/tests/vm/differential_test failed; see $out/$kind.differential.log"
  # In $jobs shards (the same draws as one: docs/DESIGN.md, "Determinism"),
  # and a quarter of the demo's chains and draws: under ASan each 1000
  # iterations of 1024 chains took over a minute, and each chain runs the
  # same code as any other.
  ASAN_OPTIONS=${demo_asan_options:-${ASAN_OPTIONS:-}} \
  "$dir/tools/autobatch" sample --target eight_schools --chains "$demo_chains" --warmup 1000 \
    --samples 250 --seed 1 --delta 0.9 --sig-figs 17 --no-progress --shards "$jobs" \
    --output-dir "$out/$kind.demo" >"$out/$kind.demo.log" 2>&1 ||
    fail "the demo failed in $dir; see $out/$kind.demo.log"
  strip_timings "$out/$kind.demo" >"$out/$kind.demo.txt"
  rm -rf "$out/$kind.demo"
  echo "$kind ($dir): differential dump $(wc -l <"$out/$kind.differential.txt") lines," \
       "demo $(wc -l <"$out/$kind.demo.txt") lines, $((SECONDS - start)) s"
done

# A check that cannot fail is a defect: the files must hold what they claim.
for kind in native portable; do
  programs=$(grep -c '^BatchSizes/DifferentialTest\.' "$out/$kind.differential.txt" || true)
  step_sizes=$(grep -c '^# Step size = ' "$out/$kind.demo.txt" || true)
  if [[ $programs -lt 40 || $step_sizes -ne $demo_chains ]]; then
    fail "$out/$kind: $programs differential programs (expected at least 40) and" \
         "$step_sizes adapted step sizes (expected $demo_chains)"
  fi
done

status=0
for what in differential demo; do
  a=$out/native.$what.txt
  b=$out/portable.$what.txt
  if cmp_out=$(cmp "$a" "$b" 2>&1); then
    echo "PASS: $what: $a and $b are byte-identical ($(wc -c <"$a") bytes)"
    continue
  fi
  status=1
  echo "FAIL: $what: $cmp_out"
  line=$(sed -n 's/.* line \([0-9]*\).*/\1/p' <<<"$cmp_out")
  if [[ -n $line ]]; then
    # The section (test or CSV file) the line belongs to, then both lines.
    awk -v n="$line" 'NR <= n && /^(== |BatchSizes\/)/ { s = $0 } NR == n { print "  in: " s; exit }' "$a"
    echo "  native:   $(sed -n "${line}p" "$a" | cut -c1-1000)"
    echo "  portable: $(sed -n "${line}p" "$b" | cut -c1-1000)"
  fi
done
if [[ $status -ne 0 ]]; then
  fail "a portable and a -march=native build disagree; find the op whose bits moved (docs/DESIGN.md, Determinism)"
fi
rm -f "$out/native.demo.txt" "$out/portable.demo.txt"
echo "check_portable_bits: PASS (native $native vs portable $portable)"
