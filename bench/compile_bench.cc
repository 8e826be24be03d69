// Compile time against program size for chains and trees of calls: the time
// LowerProgram takes (inlining, typing, the cleanup passes, lowering, the
// verifier after each pass) on testing::CallChain and testing::CallTree of
// several sizes, and the time per function relative to the smallest size,
// which stays near 1 when compiling is linear (issue 28; it was cubic).
//
// Usage: compile_bench [--reps R] [--max N]   (N: the largest size, 5000)
#include <algorithm>
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <functional>
#include <string>
#include <vector>

#include "ir/testing/call_trees.h"
#include "passes/pipeline.h"

namespace autobatch {
namespace {

// The fastest of `reps` compiles, in seconds.
double CompileSeconds(const Program& program, int reps) {
  double best = 1e300;
  for (int r = 0; r < reps; ++r) {
    const auto start = std::chrono::steady_clock::now();
    absl::StatusOr<Program> lowered = LowerProgram(program, {Scalar(DType::kI64)});
    const double seconds =
        std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
    if (!lowered.ok()) {
      std::fprintf(stderr, "compile_bench: %s\n", lowered.status().ToString().c_str());
      std::exit(1);
    }
    best = std::min(best, seconds);
  }
  return best;
}

int Main(int argc, char** argv) {
  int reps = 3;
  int max = 5000;
  for (int i = 1; i < argc; ++i) {
    if (std::strcmp(argv[i], "--reps") == 0 && i + 1 < argc) {
      reps = std::max(1, std::atoi(argv[++i]));
    } else if (std::strcmp(argv[i], "--max") == 0 && i + 1 < argc) {
      max = std::max(500, std::atoi(argv[++i]));
    } else {
      std::fprintf(stderr, "usage: compile_bench [--reps R] [--max N]\n");
      return 2;
    }
  }
  const std::vector<std::pair<const char*, std::function<Program(int)>>> shapes = {
      {"chain", testing::CallChain}, {"tree", testing::CallTree}};
  std::printf("%-6s %8s %10s %14s %18s\n", "shape", "functions", "seconds", "us/function",
              "vs smallest size");
  for (const auto& [name, make] : shapes) {
    double first_per_function = 0;
    for (int n = 500; n <= max; n *= 2) {
      const double seconds = CompileSeconds(make(n), reps);
      const double per_function = seconds / n;
      if (first_per_function == 0) first_per_function = per_function;
      std::printf("%-6s %8d %10.3f %14.1f %18.2f\n", name, n, seconds, per_function * 1e6,
                  per_function / first_per_function);
    }
  }
  return 0;
}

}  // namespace
}  // namespace autobatch

int main(int argc, char** argv) { return autobatch::Main(argc, argv); }
