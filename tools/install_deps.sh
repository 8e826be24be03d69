#!/usr/bin/env bash
# Installs the Debian packages autobatch needs, only those that are missing.
set -euo pipefail
packages=(cmake g++ make ninja-build libeigen3-dev libabsl-dev nlohmann-json3-dev
          libgtest-dev libbenchmark-dev librandom123-dev libcli11-dev
          # Deterministic vectorized transcendentals (support/math).
          libsleef-dev pkg-config
          # The tests render `autobatch ir --dot` with Graphviz's dot.
          graphviz
          # Runs sharded over processes under mpirun (support/mpi; optional
          # at build time, AUTOBATCH_MPI); the MPI tests find ranks with pgrep.
          openmpi-bin libopenmpi-dev procps
          # The fuzzer (tools/fuzz.sh): libFuzzer; clang-14 lacks
          # std::source_location with this libstdc++.
          clang-16 libclang-rt-16-dev
          # Links our programs in a quarter of GNU ld's time (AUTOBATCH_LINKER).
          mold)
missing=()
for p in "${packages[@]}"; do
  dpkg-query -W -f='${Status}' "$p" 2>/dev/null | grep -q "install ok installed" \
    || missing+=("$p")
done
if ((${#missing[@]})); then
  echo "install_deps: installing ${missing[*]}"
  sudo_cmd=()
  [[ $(id -u) -ne 0 ]] && sudo_cmd=(sudo)
  "${sudo_cmd[@]}" apt-get update
  DEBIAN_FRONTEND=noninteractive "${sudo_cmd[@]}" apt-get install -y "${missing[@]}"
else
  echo "install_deps: all dependencies present"
fi
