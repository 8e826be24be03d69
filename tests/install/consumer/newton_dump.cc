// Writes newton_program.h's program as IR JSON (the file
// autobatch_compile_program compiles): newton_dump OUTPUT.json
#include <cstdio>
#include <fstream>

#include "ir/json.h"
#include "newton_program.h"

int main(int argc, char** argv) {
  if (argc != 2) {
    std::fprintf(stderr, "usage: newton_dump OUTPUT.json\n");
    return 2;
  }
  autobatch::Context ctx;
  absl::StatusOr<autobatch::Program> program = ctx.Program(DefineNewton(ctx));
  if (!program.ok()) {
    std::fprintf(stderr, "newton_dump: %s\n", std::string(program.status().message()).c_str());
    return 1;
  }
  std::ofstream out(argv[1], std::ios::binary);
  out << autobatch::DumpProgramJson(*program);
  return out.close(), out ? 0 : 1;
}
