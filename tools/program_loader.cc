// Loads the program a command names: a JSON or text file, or a sample.
#include "tools/program_loader.h"

#include <filesystem>
#include <fstream>
#include <sstream>
#include <string_view>
#include <system_error>

#include "absl/strings/str_cat.h"
#include "ir/json.h"
#include "ir/parser.h"
#include "ir/verifier.h"

namespace autobatch {
namespace {

bool EndsWith(std::string_view s, std::string_view suffix) {
  return s.size() >= suffix.size() && s.substr(s.size() - suffix.size()) == suffix;
}

// JSON starts with `{`; the text form never does (it starts with `program`
// or a comment).
bool LooksLikeJson(std::string_view text) {
  size_t first = text.find_first_not_of(" \t\r\n");
  return first != std::string_view::npos && text[first] == '{';
}

}  // namespace

absl::StatusOr<NamedProgram> LoadProgramFile(const std::string& what, Context& ctx) {
  if (!EndsWith(what, ".json") && !EndsWith(what, ".ir") && !EndsWith(what, ".txt")) {
    return LoadSampleProgram(what, ctx);
  }
  std::error_code ec;
  if (std::filesystem::is_directory(what, ec)) {
    return absl::InvalidArgumentError(absl::StrCat(
        "'", what, "' is a directory, not a program file: give the path of a JSON program "
        "(`autobatch ir SAMPLE --json` writes one) or of its text (`autobatch ir SAMPLE`)"));
  }
  std::ifstream in(what);
  if (!in) {
    return absl::NotFoundError(absl::StrCat("cannot open program file '", what, "'"));
  }
  std::stringstream contents;
  contents << in.rdbuf();
  const std::string text = contents.str();
  absl::StatusOr<Program> program =
      LooksLikeJson(text) ? LoadProgramJson(text) : ParseProgram(text);
  if (!program.ok()) {
    return absl::InvalidArgumentError(absl::StrCat(
        what, LooksLikeJson(text) ? ": " : ":", program.status().message()));
  }
  absl::Status verified = VerifyProgram(*program);
  if (!verified.ok()) {
    return absl::InvalidArgumentError(
        absl::StrCat(what, ": the program is not valid IR:\n", verified.message()));
  }
  NamedProgram named{std::move(*program), {}};
  for (VarId p : named.program.entry_function().params) {
    const Variable& var = named.program.module.var(p);
    if (!var.type) break;
    named.default_types.push_back(*var.type);
  }
  if (named.default_types.size() != named.program.entry_function().params.size()) {
    named.default_types.clear();
  }
  return named;
}

}  // namespace autobatch
