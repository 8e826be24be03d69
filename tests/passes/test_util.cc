// Helpers shared by the pass tests.
#include "tests/passes/test_util.h"

#include <chrono>
#include <cstdio>
#include <cstdlib>

#include <gtest/gtest.h>

#include "ir/parser.h"
#include "ir/printer.h"
#include "ir/verifier.h"
#include "passes/allocate_variables.h"
#include "passes/infer_types.h"
#include "passes/lower_calls.h"

namespace autobatch::testing {
namespace {

[[noreturn]] void Die(const std::string& message) {
  std::fprintf(stderr, "broken test: %s\n", message.c_str());
  std::abort();
}

Program Check(absl::StatusOr<Program> program, const char* pass) {
  if (!program.ok()) Die(std::string(pass) + ": " + program.status().ToString());
  absl::Status verified = VerifyProgram(*program);
  if (!verified.ok()) Die(std::string(pass) + " output: " + verified.ToString());
  return *std::move(program);
}

}  // namespace

const Function& FindFunction(const Program& program, const std::string& name) {
  std::optional<FunctionId> f = program.module.FindFunction(name);
  if (!f) Die("no function " + name);
  return program.module.function(*f);
}

VarId FindVar(const Program& program, const std::string& function, const std::string& name) {
  std::optional<FunctionId> f = program.module.FindFunction(function);
  if (!f) Die("no function " + function);
  for (size_t v = 0; v < program.module.variables.size(); ++v) {
    const Variable& var = program.module.variables[v];
    if (var.function == *f && var.name == name) return VarId(static_cast<int32_t>(v));
  }
  Die("no variable " + function + "." + name);
}

StorageClass StorageOf(const Program& program, const std::string& function,
                       const std::string& name) {
  return program.module.var(FindVar(program, function, name)).storage;
}

int FindBlock(const Program& program, const std::string& function, const std::string& label) {
  const Function& fn = FindFunction(program, function);
  for (size_t b = 0; b < fn.blocks.size(); ++b) {
    if (fn.blocks[b].label == label) return static_cast<int>(b);
  }
  return -1;
}

Program Parse(const std::string& text) {
  absl::StatusOr<Program> program = ParseProgram(text);
  EXPECT_TRUE(program.ok()) << program.status();
  return program.ok() ? *program : Program{};
}

Program Checked(absl::StatusOr<Program> program, const char* pass) {
  return Check(std::move(program), pass);
}

int CountOps(const Program& program, const std::function<bool(const Op&)>& counted) {
  int n = 0;
  for (const Function& f : program.module.functions) {
    for (const Block& b : f.blocks) {
      for (const Op& op : b.ops) n += counted(op) ? 1 : 0;
    }
  }
  return n;
}

Deadline PassedDeadline() {
  return Deadline(Deadline::Clock::now() - std::chrono::seconds(1), /*seconds=*/1);
}

Program Typed(Program program, std::vector<TensorType> inputs) {
  return Check(InferTypes(std::move(program), inputs), "infer_types");
}

Program Allocated(Program program, std::vector<TensorType> inputs) {
  return Check(AllocateVariables(Typed(std::move(program), std::move(inputs))),
               "allocate_variables");
}

Program Lowered(Program program, std::vector<TensorType> inputs) {
  return Check(LowerCalls(Allocated(std::move(program), std::move(inputs))), "lower_calls");
}

std::vector<std::string> BlockText(const Program& program, const std::string& function,
                                   int block) {
  const Function& fn = FindFunction(program, function);
  std::vector<std::string> lines;
  const PrintOptions options{.storage_classes = true};
  for (const Op& op : fn.blocks.at(block).ops) {
    lines.push_back(PrintOp(program.module, op, options));
  }
  lines.push_back(PrintTerminator(program.module, fn.blocks.at(block).terminator));
  return lines;
}

}  // namespace autobatch::testing
