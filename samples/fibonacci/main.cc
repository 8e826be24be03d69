// Demo: prints the Fibonacci sample's IR, then runs a batch of 1024 lanes on
// the stack VM, the stackless VM and the reference interpreter, checks they
// agree, and prints results and batch utilization.
#include <chrono>
#include <cstdint>
#include <cstdio>
#include <random>
#include <string>
#include <vector>

#include "frontend/context.h"
#include "ir/printer.h"
#include "samples/fibonacci/fibonacci.h"
#include "frontend/run.h"

namespace {

int Fail(const absl::Status& status) {
  std::fprintf(stderr, "error: %s\n", std::string(status.message()).c_str());
  return 1;
}

}  // namespace

int main() {
  using namespace autobatch;
  Context ctx;
  BatchFunction fib = samples::DefineFibonacci(ctx);
  absl::StatusOr<const Program*> lowered = ctx.LoweredProgram(fib, {Scalar(DType::kI64)});
  if (!lowered.ok()) return Fail(lowered.status());
  std::printf("The program, lowered for the stack VM:\n\n%s\n",
              PrintProgram(**lowered).c_str());

  std::mt19937_64 rng(1);
  std::vector<int64_t> n(1024);
  for (int64_t& v : n) v = std::uniform_int_distribution<int64_t>(0, 20)(rng);
  Tensor input = *Tensor::FromVector(n);

  std::vector<int64_t> reference;
  for (auto [name, options] : std::vector<std::pair<std::string, CallOptions>>{
           {"stack VM", {.vm = Vm::kStack}},
           {"stackless VM", {.vm = Vm::kStackless}},
           {"reference interpreter (dry run)", {.dry_run = true}}}) {
    Profile profile;
    auto start = std::chrono::steady_clock::now();
    absl::StatusOr<std::vector<Tensor>> out =
        RunProgram(*ctx.Program(fib), {input}, &ctx.kernels(), options, &profile);
    double seconds = std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
    if (!out.ok()) return Fail(out.status());
    std::vector<int64_t> values = out->front().ToVector<int64_t>();
    if (reference.empty()) reference = values;
    bool agree = values == reference;
    std::printf("%-32s %8.2f ms", name.c_str(), seconds * 1e3);
    if (!options.dry_run) {
      std::printf("  %6lld block executions, batch utilization %5.1f%%",
                  static_cast<long long>(profile.steps), 100 * profile.Utilization());
    }
    std::printf("  %s\n", agree ? "(results agree)" : "(RESULTS DIFFER)");
    if (!agree) return 1;
  }
  std::printf("\nfirst lanes:");
  for (int i = 0; i < 8; ++i) {
    std::printf("  fib(%lld) = %lld", static_cast<long long>(n[i]),
                static_cast<long long>(reference[i]));
  }
  std::printf("\n");
  for (size_t i = 0; i < n.size(); ++i) {
    if (reference[i] != samples::FibonacciReference(n[i])) {
      std::fprintf(stderr, "lane %zu: wrong result\n", i);
      return 1;
    }
  }
  std::printf("all %zu lanes match plain C++\n", n.size());
  return 0;
}
