#!/usr/bin/env bash
# Installs what is missing, builds, and runs the whole test suite, timing each stage.
# Usage: tools/test.sh [ctest arguments...]   (e.g. -L slow to run the slow tests)
set -euo pipefail
cd "$(dirname "$0")/.."
stage() {
  local name=$1; shift
  local start=$SECONDS
  echo "=== stage: $name"
  "$@"
  echo "=== stage: $name took $((SECONDS - start)) s"
}
stage install-deps tools/install_deps.sh
stage build tools/build.sh
stage test ctest --test-dir build --output-on-failure -j2 --timeout 1200 "$@"
