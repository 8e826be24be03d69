// libFuzzer entry point: arbitrary bytes as an IR JSON program, through every executor.
//
// Build and run with tools/fuzz.sh (clang-16, -DAUTOBATCH_FUZZ=ON). A finding
// of RunFuzzInput (tests/fuzz/program_fuzz_target.h) aborts, so libFuzzer
// saves the input as a crash like any sanitizer report. Mutations are half
// structure-aware (tests/fuzz/json_mutator.h, so inputs stay JSON and reach
// the verifier and the executors) and half libFuzzer's byte-level ones (so
// the parser still sees broken text).
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <optional>
#include <string>
#include <string_view>

#include "tests/fuzz/json_mutator.h"
#include "tests/fuzz/program_fuzz_target.h"

extern "C" size_t LLVMFuzzerMutate(uint8_t* data, size_t size, size_t max_size);

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  autobatch::FuzzOutcome outcome = autobatch::RunFuzzInput(
      std::string_view(reinterpret_cast<const char*>(data), size));
  if (!outcome.finding.empty()) {
    std::fprintf(stderr, "autobatch fuzz finding: %s\n  %s\n",
                 outcome.finding.c_str(), outcome.Summary().c_str());
    std::abort();
  }
  return 0;
}

extern "C" size_t LLVMFuzzerCustomMutator(uint8_t* data, size_t size, size_t max_size,
                                          unsigned int seed) {
  if (seed % 2 == 0) {
    std::optional<std::string> mutated = autobatch::MutateJsonProgram(
        std::string_view(reinterpret_cast<const char*>(data), size), seed / 2);
    if (mutated && mutated->size() <= max_size) {
      std::memcpy(data, mutated->data(), mutated->size());
      return mutated->size();
    }
  }
  return LLVMFuzzerMutate(data, size, max_size);
}
