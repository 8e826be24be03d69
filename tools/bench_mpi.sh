#!/usr/bin/env bash
# MPI's cost on one machine (docs/SCALING.md): the gather of 1024 chains x
# 1000 draws x 25 parameters to rank 0, and the same Sample() run as 1 rank
# x 2 threads and as 2 ranks x 1 thread, alternated --rounds times.
# Usage: tools/bench_mpi.sh [build dir (default build)] [rounds (default 3)]
set -euo pipefail
cd "$(dirname "$0")/.."
build=${1:-build}
rounds=${2:-3}
bench=$build/bench/mpi_bench
if [[ ! -x $bench ]]; then
  echo "bench_mpi: $bench is missing: build with MPI (tools/install_deps.sh installs" \
       "Open MPI; cmake --build $build --target mpi_bench)" >&2
  exit 1
fi
# Root in containers and CI: allowed explicitly; no single-copy mechanism.
export OMPI_ALLOW_RUN_AS_ROOT=1 OMPI_ALLOW_RUN_AS_ROOT_CONFIRM=1
export OMPI_MCA_btl_vader_single_copy_mechanism=none
run() { mpirun --oversubscribe --bind-to none -n "$@"; }
run 2 "$bench" gather --chains 1024 --draws 1000 --params 25
for _ in $(seq "$rounds"); do
  for target in eight_schools; do
    run 1 "$bench" sample --target "$target" --chains 1024 --warmup 300 --samples 300 --shards 2
    run 2 "$bench" sample --target "$target" --chains 1024 --warmup 300 --samples 300 --shards 1
  done
done
