// Helpers shared by the frontend tests: goldens and dry runs.
#ifndef AUTOBATCH_TESTS_FRONTEND_TEST_UTIL_H_
#define AUTOBATCH_TESTS_FRONTEND_TEST_UTIL_H_

#include <cstdint>
#include <string>
#include <vector>

#include <gtest/gtest.h>

#include "absl/status/statusor.h"
#include "backends/tensor.h"
#include "frontend/context.h"

namespace autobatch::testing {

// Compares `actual` with tests/frontend/golden/<name>.txt; with
// AUTOBATCH_UPDATE_GOLDENS=1 the file is (re)written instead.
::testing::AssertionResult MatchesGolden(const std::string& actual, const std::string& name);

// Runs `f` with dry_run on one input vector per parameter (all of dtype T,
// scalars), returning the first output as a vector of R.
template <typename R, typename T>
absl::StatusOr<std::vector<R>> DryRun(const BatchFunction& f,
                                      const std::vector<std::vector<T>>& inputs,
                                      CallOptions options = {}) {
  std::vector<Tensor> tensors;
  for (const std::vector<T>& in : inputs) {
    absl::StatusOr<Tensor> t = Tensor::FromVector(in);
    if (!t.ok()) return t.status();
    tensors.push_back(*std::move(t));
  }
  options.dry_run = true;
  absl::StatusOr<std::vector<Tensor>> out = f.Run(std::move(tensors), options);
  if (!out.ok()) return out.status();
  if (out->empty()) return absl::InvalidArgumentError("no outputs");
  return (*out)[0].ToVector<R>();
}

// The message of a failed status (empty if OK).
template <typename T>
std::string ErrorOf(const absl::StatusOr<T>& s) {
  return s.ok() ? std::string() : std::string(s.status().message());
}

// An executor the differential tests run a batch on.
struct Executor {
  std::string name;
  CallOptions options;
};

// The reference interpreter, the stackless VM, and the stack VM with its
// default and most-lanes policies, the threaded backend and 3 shards.
inline std::vector<Executor> EveryExecutor() {
  return {{"reference", {.dry_run = true}},
          {"stackless", {.vm = Vm::kStackless}},
          {"stack/eigen", {.vm = Vm::kStack}},
          {"stack/most-lanes", {.vm = Vm::kStack, .block_policy = BlockPolicy::kMostLanes}},
          {"stack/threaded", {.vm = Vm::kStack, .backend = "threaded"}},
          {"stack/3-shards", {.vm = Vm::kStack, .shards = 3}}};
}

}  // namespace autobatch::testing

#endif  // AUTOBATCH_TESTS_FRONTEND_TEST_UTIL_H_
