// Writes the fused blocks of the test programs (fused_test_programs.h) as one
// C++ file, at build time: emit_fused_test_blocks OUTPUT.cc; or with
// --whole-program, the programs compiled whole (EmitCompiledProgram), with
// the eight-schools HMC and RWMH samplers besides NUTS; and
// testing::GeneratedCode, which finds each by name.
#include <cstdio>
#include <cstdlib>
#include <fstream>
#include <string>

#include "absl/strings/str_cat.h"
#include "tests/vm/fused_test_programs.h"
#include "codegen/codegen.h"

int main(int argc, char** argv) {
  const bool whole = argc == 3 && std::string(argv[1]) == "--whole-program";
  if (argc != 2 && !whole) {
    std::fprintf(stderr, "usage: emit_fused_test_blocks [--whole-program] OUTPUT.cc\n");
    return 2;
  }
  const char* output = argv[argc - 1];
  std::string source;
  // testing::GeneratedCode (fused_test_programs.h): each program's code by
  // its name.
  std::string lookup =
      "namespace autobatch::testing {\n\n"
      "const FusedProgram* GeneratedCode(std::string_view name) {\n";
  auto add = [&](const autobatch::Program& program, const std::string& name) {
    const std::string symbol = absl::StrCat(whole ? "CompiledProgram_" : "FusedBlocks_", name);
    absl::StatusOr<std::string> code = whole ? autobatch::EmitCompiledProgram(program, symbol)
                                             : autobatch::EmitFusedBlocks(program, symbol);
    if (!code.ok()) {
      std::fprintf(stderr, "emit_fused_test_blocks: %s: %s\n", name.c_str(),
                   code.status().ToString().c_str());
      std::exit(1);
    }
    // One translation unit: each program's helpers are in a namespace named
    // after its function.
    absl::StrAppend(&source, *code, "\n");
    absl::StrAppend(&lookup, "  if (name == \"", name, "\") return &", symbol, "();\n");
  };
  for (const autobatch::testing::FusedTestProgram& p : autobatch::testing::FusedTestPrograms()) {
    add(p.lowered, p.name);
  }
  add(*autobatch::testing::EightSchoolsNuts().lowered, "nuts_eight_schools");
  if (whole) {
    using autobatch::mcmc::Algorithm;
    add(*autobatch::testing::EightSchoolsSampler(Algorithm::kHmc).lowered, "hmc_eight_schools");
    add(*autobatch::testing::EightSchoolsSampler(Algorithm::kRwmh).lowered, "rwmh_eight_schools");
  }
  absl::StrAppend(&lookup, "  return nullptr;\n}\n\n}  // namespace autobatch::testing\n");
  std::ofstream out(output, std::ios::binary);
  out << "#include <string_view>\n\n#include \"tests/vm/fused_test_programs.h\"\n\n" << source
      << lookup;
  out.close();
  return out ? 0 : 1;
}
