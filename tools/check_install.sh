#!/usr/bin/env bash
# Checks autobatch as a library (README, "Use as a library"): installs an
# already-built tree into a temporary prefix, builds the consumer project
# tests/install/consumer against it with find_package(autobatch) and CMake's
# default flags (no -march=native) and runs its programs (a per-example
# program, with JIT-fused blocks and compiled whole at build time
# (autobatch_compile_program), and a Sample() run, also over 2 MPI ranks
# when autobatch was built with MPI); then configures the
# consumer with add_subdirectory(autobatch) and compiles its sources; checks
# that neither way hands the consumer our build flags or tree paths, and
# that no two installed libraries need each other's symbols.
# Usage: tools/check_install.sh [build dir (default build)]
# AUTOBATCH_SUBDIRECTORY_LINK=1 also builds autobatch inside the
# add_subdirectory consumer and runs newton there (minutes: the libraries
# compile again).
set -euo pipefail
cd "$(dirname "$0")/.."
root=$PWD
build=$(realpath "${1:-build}")
jobs=${AUTOBATCH_JOBS:-2}
work=$(mktemp -d "${TMPDIR:-/tmp}/autobatch-install.XXXXXX")
trap 'rm -rf "$work"' EXIT
fail() { echo "check_install: $*" >&2; exit 1; }
# no_leaks <what> <file...>: none of our build flags or tree paths in them.
no_leaks() {
  local what=$1; shift
  if grep -nE -- "-march=native|-Werror|-Wextra|-ffp-contract|AUTOBATCH_INTERNAL_CHECKS|$root/|$build" "$@"; then
    fail "$what carries a build flag of autobatch's or a path into its tree (above)"
  fi
}

# consumer_flags <build dir>: the compile commands of the consumer's own
# sources, their file names left out.
consumer_flags() {
  python3 - "$1/compile_commands.json" <<'PY'
import json, sys
for entry in json.load(open(sys.argv[1])):
    if "/tests/install/consumer/" in entry["file"]:
        print(entry["command"].replace(entry["file"], "SOURCE"))
PY
}

echo "--- install $build into $work/prefix"
cmake --install "$build" --prefix "$work/prefix" > "$work/install.log"
config=$(find "$work/prefix" -name autobatchConfig.cmake)
[[ -n $config ]] || fail "no autobatchConfig.cmake installed"
[[ -f $(dirname "$config")/autobatchConfigVersion.cmake ]] || fail "no version file installed"
[[ -f $work/prefix/include/autobatch/frontend/context.h ]] || fail "no frontend/context.h installed"
# autobatchCompile.cmake gives -ffp-contract=off to the one file it
# generates (the generated code's bits depend on it), on purpose.
no_leaks "the exported package" $(ls "$(dirname "$config")"/*.cmake | grep -v '/autobatchCompile.cmake$')

# The installed libraries link in one order, with no --start-group: no two
# of them need each other's symbols, directly or through others (nm: each
# archive's undefined symbols against the others' strong definitions).
python3 - "$work/prefix" <<'PY'
import glob, subprocess, sys
defined, needs = {}, {}
for archive in sorted(glob.glob(sys.argv[1] + "/lib*/libautobatch_*.a")):
    name = archive.rsplit("/", 1)[1][3:-2]
    out = subprocess.run(["nm", "-g", archive], capture_output=True, text=True, check=True).stdout
    needs[name] = set()
    for line in out.splitlines():
        fields = line.split()
        if len(fields) == 3 and fields[1] in "TDBR":
            defined.setdefault(fields[2], name)
        elif len(fields) == 2 and fields[0] == "U":
            needs[name].add(fields[1])
graph = {a: {defined[s] for s in syms if s in defined and defined[s] != a} for a, syms in needs.items()}
def reaches(a, b, seen=()):
    return b in graph[a] or any(c not in seen and reaches(c, b, seen + (a,)) for c in graph[a])
cycles = sorted({tuple(sorted((a, b))) for a in graph for b in graph[a] if reaches(b, a)})
for a, b in cycles:
    print(f"check_install: {a} and {b} need each other's symbols", file=sys.stderr)
sys.exit(1 if cycles or not graph else 0)
PY

echo "--- consumer, find_package(autobatch)"
cmake -S tests/install/consumer -B "$work/installed" -DCMAKE_PREFIX_PATH="$work/prefix" \
  -DCMAKE_BUILD_TYPE=Release -DCMAKE_EXPORT_COMPILE_COMMANDS=ON > "$work/configure.log" ||
  { cat "$work/configure.log"; fail "configuring the consumer failed"; }
consumer_flags "$work/installed" > "$work/consumer_flags.txt"
[[ -s $work/consumer_flags.txt ]] || fail "no compile command for the consumer's sources"
no_leaks "the consumer's compile commands" "$work/consumer_flags.txt"
cmake --build "$work/installed" -j"$jobs"
# A fresh JIT cache: the fused run compiles against the header copies the
# installed library carries, nothing from the build or source tree.
AUTOBATCH_CACHE_DIR="$work/cache" "$work/installed/newton"
# autobatch_compile_program: the program compiled whole by the installed
# tool at build time, the interpreter's bits.
[[ -x $work/installed/newton_compiled ]] || fail "autobatch_compile_program built no newton_compiled"
"$work/installed/newton_compiled"
# Called wrong, autobatch_compile_program stops the configure with a
# message saying what to give.
mkdir -p "$work/bad_helper"
cat > "$work/bad_helper/CMakeLists.txt" <<'CMAKE'
cmake_minimum_required(VERSION 3.25)
project(bad_helper LANGUAGES CXX)
find_package(autobatch 0.1 REQUIRED)
add_executable(app main.cc)
autobatch_compile_program(app PROGRAM program.json)
CMAKE
if cmake -S "$work/bad_helper" -B "$work/bad_helper/build" -DCMAKE_PREFIX_PATH="$work/prefix" \
    > "$work/bad_helper.log" 2>&1; then
  fail "autobatch_compile_program without SYMBOL configured"
fi
grep -q "give PROGRAM <file> and SYMBOL <name>" "$work/bad_helper.log" ||
  { cat "$work/bad_helper.log"; fail "autobatch_compile_program without SYMBOL: no clear message"; }
"$work/installed/normal_mean" > "$work/one_process.txt"
cat "$work/one_process.txt"
# Built with MPI (autobatch::mpi installed): the same run over 2 ranks gives
# the same summary, but for the lines of times and other per-process figures.
if grep -qs '^set(autobatch_HAVE_MPI ON)' "$config"; then
  echo "--- consumer over 2 MPI ranks"
  OMPI_ALLOW_RUN_AS_ROOT=1 OMPI_ALLOW_RUN_AS_ROOT_CONFIRM=1 \
    OMPI_MCA_btl_vader_single_copy_mechanism=none \
    mpirun --oversubscribe --bind-to none -n 2 "$work/installed/normal_mean" > "$work/ranks.txt" ||
    fail "normal_mean over 2 MPI ranks failed"
  per_process='Wall time|ESS_bulk\(lp__\)|Batch utilization'
  diff <(grep -Ev "$per_process" "$work/one_process.txt") <(grep -Ev "$per_process" "$work/ranks.txt") ||
    fail "normal_mean over 2 MPI ranks summarized differently from one process (diff above)"
fi

echo "--- consumer, add_subdirectory(autobatch)"
cmake -G "Unix Makefiles" -S tests/install/consumer -B "$work/subdirectory" -DAUTOBATCH_SOURCE_DIR="$root" \
  -DAUTOBATCH_BINARY_DIR="$work/subdirectory/autobatch" -DCMAKE_BUILD_TYPE=Release \
  -DCMAKE_EXPORT_COMPILE_COMMANDS=ON > "$work/configure.log" ||
  { cat "$work/configure.log"; fail "configuring the consumer failed"; }
# Not the top-level project: no tests, benchmarks or tools configured.
for dir in tests bench tools; do
  [[ ! -e $work/subdirectory/autobatch/$dir ]] || fail "add_subdirectory configured autobatch's $dir/"
done
# The include directory is the source tree here, by design; nothing else.
consumer_flags "$work/subdirectory" | sed "s| -I$root | |g" > "$work/consumer_flags.txt"
[[ -s $work/consumer_flags.txt ]] || fail "no compile command for the consumer's sources"
no_leaks "the add_subdirectory consumer's compile commands" "$work/consumer_flags.txt"
# The libraries themselves are what the installed consumer just linked and
# ran; compiling the consumer's program checks the targets' usage
# requirements without building autobatch a second time.
make -C "$work/subdirectory" --no-print-directory newton.cc.o
if [[ ${AUTOBATCH_SUBDIRECTORY_LINK:-0} == 1 ]]; then
  cmake --build "$work/subdirectory" -j"$jobs" --target newton
  AUTOBATCH_CACHE_DIR="$work/cache" "$work/subdirectory/newton"
fi
echo "check_install: OK"
