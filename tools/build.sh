#!/usr/bin/env bash
# Configures and builds autobatch into build/ (RelWithDebInfo, internal checks on).
# Usage: tools/build.sh [extra cmake -D options...]
set -euo pipefail
cd "$(dirname "$0")/.."
jobs=${AUTOBATCH_JOBS:-2}
cmake -S . -B build -DCMAKE_BUILD_TYPE=RelWithDebInfo \
  -DAUTOBATCH_INTERNAL_CHECKS=ON -DAUTOBATCH_WERROR=ON "$@"
cmake --build build -j"$jobs"
