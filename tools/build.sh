#!/usr/bin/env bash
# Configures and builds autobatch into build/ (RelWithDebInfo, internal checks on).
# Usage: tools/build.sh [extra cmake -D options...]
set -euo pipefail
cd "$(dirname "$0")/.."
jobs=${AUTOBATCH_JOBS:-2}
# Ninja where installed (tools/install_deps.sh installs it) for a new build
# directory: it schedules every target's files as one graph; an existing
# build/ keeps the generator it was configured with.
generator=()
if [[ ! -f build/CMakeCache.txt ]] && command -v ninja >/dev/null; then
  generator=(-G Ninja)
fi
cmake -S . -B build "${generator[@]}" -DCMAKE_BUILD_TYPE=RelWithDebInfo \
  -DAUTOBATCH_INTERNAL_CHECKS=ON -DAUTOBATCH_WERROR=ON "$@"
cmake --build build -j"$jobs"
