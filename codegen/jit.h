// Just-in-time fused blocks: the C++ that codegen/codegen.h writes for a lowered
// program, compiled on first use by the C++ compiler the project was built
// with and loaded into this process, so that `CallOptions::jit_fused_blocks`
// (`autobatch run/sample --fused`) gets fused blocks without a build step.
//
// What it does, for a program whose fused blocks this process has not loaded
// yet:
//   1. EmitFusedBlocks(program), plus a few lines that route the generated
//      code's calls into this library (RandomLanes, EvalTranscendental,
//      EvalLogSumExp, Pow)
//      through a table of function pointers, so the executable need not
//      export its symbols (-rdynamic);
//   2. looks the source up in the cache directory by a 64-bit hash of the
//      source, the compiler, its flags, the CPU's feature flags (with
//      -march=native) and the project headers the source includes (copies
//      embedded in this library when it was built, codegen/jit_headers.h,
//      which the compiler reads from <cache dir>/include_<their hash>: the
//      generated code sees the structs and element semantics of the binary
//      that loads it, whatever the source tree holds by then, and an
//      installed library needs neither the source nor the build tree);
//   3. takes an exclusive flock(2) on <key>.lock in the cache directory, so
//      that processes compiling one program at once compile it once: the
//      others wait, then load the first one's library;
//   4. loads <key>.so only if it matches <key>.sum (its size and the FNV-1a
//      hash of its bytes, written atomically after the library is renamed
//      into place): a library cut short after its ELF header would
//      otherwise be mapped past its end and crash the process (SIGBUS). A
//      library that does not match is removed and compiled again, once,
//      with a note on stderr;
//   5. if absent, runs `compiler flags... -shared -o ...` (no shell), writes
//      the library under a temporary name of its own (process id and 64
//      random bits) and renames it into place, so processes sharing the
//      directory, from any host, never load half a file;
//   6. dlopen()s it (never closed: the FusedProgram lives as long as the
//      process) and checks its fingerprint against the program.
// A cached library that fails to load is compiled again once. When the disk
// is full (or a file size limit is reached), the error names the cache
// directory and the temporary files are removed; after any other compiler
// failure the source and the compiler's output stay, and the error names them.
//
// The flags are the build's: -std=c++20 -O3 (GCC 12 vectorizes the
// generated loops only at -O3) -ffp-contract=off, and -march=native unless
// the build is AUTOBATCH_PORTABLE, then the environment's AUTOBATCH_JIT_FLAGS
// and JitOptions::extra_flags. The bits of a fused segment do not depend
// on the optimization level, so JIT-compiled blocks give the interpreter's
// bits (tests/codegen/jit_test.cc) when run on the machine type the library was
// built for.
#ifndef AUTOBATCH_CODEGEN_JIT_H_
#define AUTOBATCH_CODEGEN_JIT_H_

#include <cstdint>
#include <string>
#include <vector>

#include "absl/status/statusor.h"
#include "backends/element_ops.h"
#include "ir/ir.h"
#include "vm/fused_blocks.h"

namespace autobatch {

struct CallOptions;  // vm/options.h (not included: generated code includes this header)

struct JitOptions {
  // Where compiled libraries are kept (created if missing, mode 0700). Empty:
  // the environment's AUTOBATCH_CACHE_DIR, else $XDG_CACHE_HOME/autobatch,
  // else $HOME/.cache/autobatch, else /tmp/autobatch-cache-<uid>. The
  // directory and its libraries must belong to this user and be writable by
  // no one else, and no component of the directory's path may be a
  // symbolic link ("link/", "link/." and "link/x/.." are refused too; links
  // that root owns are allowed unless the process is root): their code runs
  // in this process.
  std::string cache_dir = {};
  // The C++ compiler. Empty: the environment's AUTOBATCH_JIT_CXX, else the
  // one the project was built with.
  std::string compiler = {};
  // Appended to the default flags (e.g. "-g") and to the environment's
  // AUTOBATCH_JIT_FLAGS (whitespace-separated; "-O1" compiles a NUTS
  // program in a fraction of the time, with the same bits, slower code).
  // Part of the cache key.
  std::vector<std::string> extra_flags = {};
};

// The fused blocks of `program` (stage kLowered), compiled and loaded as
// described above; the same pointer for the same program for the life of
// the process. Thread-safe (one compilation at a time per process) and safe
// across processes sharing the cache (step 3).
// Errors: InvalidArgument for a program that is not lowered; Unavailable
// when the compiler cannot be run or fails (with the command and the start
// of its output), the cache directory is full, cannot be written or is not
// private (see JitOptions::cache_dir; the message names the directory), or
// the library does not load; each says how to run without JIT (omit --fused).
absl::StatusOr<const FusedProgram*> JitFusedBlocks(const Program& program,
                                                   const JitOptions& options = {});

// The same for the whole program (EmitCompiledProgram, codegen/codegen.h):
// CallOptions::jit_compiled_program, `--compiled`. Errors as JitFusedBlocks'
// (saying to omit --compiled).
absl::StatusOr<const FusedProgram*> JitCompiledProgram(const Program& program,
                                                       const JitOptions& options = {});

// What `options` asks the JIT for, compiled and loaded: the whole program
// (jit_compiled_program), else its fused blocks (jit_fused_blocks); null
// when it asks for neither or passes its own in options.fused_blocks.
absl::StatusOr<const FusedProgram*> JitForCall(const Program& program,
                                               const CallOptions& options);

// The host functions a JIT-compiled library calls (see above). Its layout is
// part of the cache key, through this header.
struct JitHost {
  void (*random_lanes)(const uint64_t* key, const uint64_t* counter, int64_t lanes,
                       int64_t elements, bool normal, double* out);
  void (*transcendental_f64)(element::Transcendental fn, const double* x, double* y,
                             int64_t n);
  void (*transcendental_f32)(element::Transcendental fn, const float* x, float* y,
                             int64_t n);
  void (*log_sum_exp_f64)(const double* x, double* y, int64_t lanes, int64_t n);
  void (*log_sum_exp_f32)(const float* x, float* y, int64_t lanes, int64_t n);
  double (*pow)(double a, double b);
};

}  // namespace autobatch

#endif  // AUTOBATCH_CODEGEN_JIT_H_
