// Option type texts for --help (tools/cli_types.h).
#include "tools/cli_types.h"

#include <limits>

#include "absl/strings/str_cat.h"
#include "absl/strings/str_join.h"

namespace autobatch {

std::string IntegerText(int64_t min, int64_t max) {
  if (max == std::numeric_limits<int64_t>::max()) return absl::StrCat("INT >= ", min);
  return absl::StrCat("INT in [", min, ", ", max, "]");
}

std::string ChoiceText(const std::vector<std::string>& choices) {
  return absl::StrCat("{", absl::StrJoin(choices, ","), "}");
}

}  // namespace autobatch
