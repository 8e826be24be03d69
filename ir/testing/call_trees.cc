// Programs of many small non-recursive functions calling each other.
#include "ir/testing/call_trees.h"

#include <string>

#include "absl/strings/str_cat.h"
#include "ir/parser.h"
#include "support/status.h"

namespace autobatch::testing {
namespace {

// Appends function f<k>(%x<k>) -> (%r<k>) whose entry block has `body`.
void AppendFunction(std::string& text, int k, const std::string& body) {
  absl::StrAppend(&text, "\nfunc @f", k, "(%x", k, ": ? full) -> (%r", k,
                  ": ? full) {\n^0 entry:\n", body, "  return\n}\n");
}

Program Parsed(const std::string& text) {
  absl::StatusOr<Program> program = ParseProgram(text);
  AB_CHECK(program.ok(), "a generated call tree does not parse");
  return *std::move(program);
}

}  // namespace

Program CallChain(int length) {
  std::string text = "program stage=untyped entry=@f1\n";
  for (int k = 1; k <= length; ++k) {
    AppendFunction(text, k,
                   k < length ? absl::StrCat("  %y", k, ": ? full = call @f", k + 1, "(%x", k,
                                             ")\n  %r", k, ": ? full = add %y", k, ", %x", k, "\n")
                              : absl::StrCat("  %r", k, ": ? full = copy %x", k, "\n"));
  }
  return Parsed(text);
}

Program CallTree(int count) {
  std::string text = "program stage=untyped entry=@f1\n";
  for (int k = 1; k <= count; ++k) {
    const int left = 2 * k, right = 2 * k + 1;
    std::string body;
    if (left > count) {
      body = absl::StrCat("  %r", k, ": ? full = copy %x", k, "\n");
    } else if (right > count) {
      body = absl::StrCat("  %a", k, ": ? full = call @f", left, "(%x", k, ")\n  %r", k,
                          ": ? full = add %a", k, ", %x", k, "\n");
    } else {
      body = absl::StrCat("  %a", k, ": ? full = call @f", left, "(%x", k, ")\n  %b", k,
                          ": ? full = call @f", right, "(%x", k, ")\n  %s", k,
                          ": ? full = add %a", k, ", %b", k, "\n  %r", k, ": ? full = add %s", k,
                          ", %x", k, "\n");
    }
    AppendFunction(text, k, body);
  }
  return Parsed(text);
}

int64_t CallTreeValue(int count) {
  // Every function adds its x once, a leaf returns x: the sum is one x per
  // function.
  return count;
}

}  // namespace autobatch::testing
