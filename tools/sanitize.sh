#!/usr/bin/env bash
# Builds and runs the tests under sanitizers: ASan+UBSan (the whole suite) in
# build-asan/, or TSan (the concurrency tests) in build-tsan/.
# Usage: tools/sanitize.sh address|thread [extra ctest arguments...]
#   address  configures build-asan/ with AUTOBATCH_SANITIZE=address,undefined
#            (ASan and UBSan instrument the libraries and tools; the test
#            code is not instrumented, its process has ASan's run-time:
#            CMakeLists.txt says why;
#            -O1 -g1, internal checks on, no benchmarks, no MPI: Open MPI's
#            own allocations would read as leaks), builds, runs every
#            test but those labelled `slow` (tests/CMakeLists.txt, SLOW), which
#            repeat at scale what faster tests check and would take most of
#            the stage under ASan.
#   thread   configures build-tsan/ with AUTOBATCH_SANITIZE=thread, builds only
#            concurrency_test, threaded_backend_test, run_test, sample_test,
#            jit_test and progress_relay_test, and runs, in one ctest run, the
#            tests of the binaries labelled `concurrency` (ConcurrencyTest,
#            ProgressRelayTest), the ThreadedBackendTest, ShardsTest and
#            JitTest.Concurrent* cases, and the sharded sampler test (its
#            user kernels called from two threads at once).
# Every sanitizer report aborts its test, so any finding fails the run.
set -euo pipefail
cd "$(dirname "$0")/.."
mode=${1:-}
if [[ $# -gt 0 ]]; then shift; fi
jobs=${AUTOBATCH_JOBS:-2}
# ASan's tests run one more at a time than the build's jobs
# (AUTOBATCH_TEST_JOBS): two at a time on two cores used about 900 s of CPU
# in 640 s of wall time, the rest spent waiting (deadlines, child processes,
# files).
test_jobs=${AUTOBATCH_TEST_JOBS:-$((jobs + 1))}

# Portable code (no -march=native): on an AVX-512 host GCC 12 initializes
# stack objects with 64-byte-aligned stores (vmovdqa64), and ASan's fake
# stack (detect_stack_use_after_return) gives frames only 32-byte alignment,
# so a test that builds a struct on its stack dies with SEGV (seen on
# SamplesPipelineTest.EvenOdd, 2026-11-24). The sanitizers look for memory and
# threading errors, which do not depend on the instruction set.
configure() {  # configure <build dir> <sanitizers>
  cmake -S . -B "$1" -G Ninja -DCMAKE_BUILD_TYPE=RelWithDebInfo \
    -DAUTOBATCH_INTERNAL_CHECKS=ON -DAUTOBATCH_WERROR=ON -DAUTOBATCH_PORTABLE=ON \
    -DAUTOBATCH_BUILD_BENCH=OFF -DAUTOBATCH_MPI=OFF -DAUTOBATCH_SANITIZE="$2"
}

# The stackless VM and the reference interpreter recurse on the host up to
# max_stack_depth (default 10000) frames: about 4 MB in a normal build, but
# ASan's redzones make each frame several times larger (10000 frames need
# 32-64 MB), so the deep-recursion tests get a larger stack (threads too:
# glibc sizes their stacks from this limit).
raise_stack_limit() {
  ulimit -S -s 131072 2>/dev/null || ulimit -S -s unlimited 2>/dev/null ||
    echo "warning: could not raise the stack limit (ulimit -s $(ulimit -s));" \
         "deep-recursion tests may overflow under ASan" >&2
}

case "$mode" in
  address)
    configure build-asan address,undefined
    cmake --build build-asan -j"$jobs"
    raise_stack_limit
    # The JIT compiles at -O1 here (codegen/jit.h): the generated code is not
    # instrumented either way, and the NUTS programs' compiles at -O3 were
    # about a minute of this stage. detect_stack_use_after_return is off for
    # CI's time: it made the sampler tests 35-75% slower. The portable-bits
    # stage runs the differential suite (every VM, executor and backend) from
    # this build with it on (tools/check_portable_bits.sh).
    AUTOBATCH_JIT_FLAGS=${AUTOBATCH_JIT_FLAGS:--O1} \
    ASAN_OPTIONS=detect_leaks=1:abort_on_error=1:strict_string_checks=1:detect_stack_use_after_return=0 \
    UBSAN_OPTIONS=print_stacktrace=1:halt_on_error=1 \
      ctest --test-dir build-asan --output-on-failure -j"$test_jobs" --timeout 1200 -LE slow "$@"
    ;;
  thread)
    configure build-tsan thread
    cmake --build build-tsan -j"$jobs" --target concurrency_test threaded_backend_test run_test \
      sample_test jit_test progress_relay_test
    export TSAN_OPTIONS=halt_on_error=1:second_deadlock_stack=1
    export AUTOBATCH_JIT_FLAGS=${AUTOBATCH_JIT_FLAGS:--O1}  # as for address, above
    # One ctest run, so that its jobs overlap the long tests (three runs, one
    # after the other, left a core idle for minutes); the first names are
    # the binaries labelled `concurrency` (tests/CMakeLists.txt).
    ctest --test-dir build-tsan --no-tests=error --output-on-failure -j"$jobs" --timeout 1200 \
      -R '^(ConcurrencyTest\.|ProgressRelayTest\.|ThreadedBackendTest\.|ShardsTest\.|SampleTest\.ShardedRunsGiveTheSameChains$|JitTest\.Concurrent)' \
      "$@"
    ;;
  *)
    echo "usage: tools/sanitize.sh address|thread [ctest arguments...]" >&2
    exit 2
    ;;
esac
