// The backends the parameterized backend suites run against: every backend
// MakeBackend knows, plus the threaded backend at 1, 2, 3 and 8 threads with
// every op split however small it is (so its chunked paths run at the small
// batches tests use, which the measured threshold would run inline).
#ifndef AUTOBATCH_TESTS_BACKENDS_BACKENDS_UNDER_TEST_H_
#define AUTOBATCH_TESTS_BACKENDS_BACKENDS_UNDER_TEST_H_

#include <memory>
#include <string>
#include <string_view>
#include <vector>

#include "absl/status/statusor.h"
#include "backends/backend.h"
#include "backends/threaded_backend.h"

namespace autobatch::testing {

inline constexpr std::string_view kSplitAllSuffix = "/split-all";
inline constexpr int kSplitAllThreadCounts[] = {1, 2, 3, 8};

// KnownBackendNames(), then "threaded:N/split-all" for N in
// kSplitAllThreadCounts.
inline std::vector<std::string> BackendsUnderTest() {
  std::vector<std::string> names = KnownBackendNames();
  for (int n : kSplitAllThreadCounts) {
    names.push_back("threaded:" + std::to_string(n) + std::string(kSplitAllSuffix));
  }
  return names;
}

// MakeBackend(name), or for "threaded:N/split-all" a ThreadedBackend with N
// threads and min_chunk_cost 0.
inline absl::StatusOr<std::unique_ptr<Backend>> MakeBackendUnderTest(std::string_view name) {
  if (name.size() > kSplitAllSuffix.size() &&
      name.substr(name.size() - kSplitAllSuffix.size()) == kSplitAllSuffix) {
    const std::string threads(name.substr(9, name.size() - 9 - kSplitAllSuffix.size()));
    return std::unique_ptr<Backend>(std::make_unique<ThreadedBackend>(
        ThreadedBackendOptions{.num_threads = std::stoi(threads), .min_chunk_cost = 0}));
  }
  return MakeBackend(name);
}

// A GoogleTest parameter name for a backend name ("threaded:3/split-all" ->
// "threaded_3_split_all").
inline std::string BackendParamName(std::string name) {
  for (char& c : name) {
    if (!std::isalnum(static_cast<unsigned char>(c))) c = '_';
  }
  return name;
}

}  // namespace autobatch::testing

#endif  // AUTOBATCH_TESTS_BACKENDS_BACKENDS_UNDER_TEST_H_
