// Tests of the DOT writer (ir/dot.h): a golden, the graph's structure,
// escaping of hostile names (checked by Graphviz itself when it is
// installed), bad indices and determinism.
#include "ir/dot.h"

#include <sys/wait.h>

#include <cstdlib>
#include <fstream>
#include <sstream>
#include <string>

#include "gmock/gmock.h"
#include "gtest/gtest.h"
#include "ir/testing/fib_program.h"
#include "tests/testing/golden.h"

namespace autobatch {
namespace {

using ::testing::HasSubstr;
using ::testing::Not;

int CountOccurrences(const std::string& text, const std::string& needle) {
  int count = 0;
  for (size_t pos = text.find(needle); pos != std::string::npos;
       pos = text.find(needle, pos + 1)) {
    ++count;
  }
  return count;
}

// Scans `dot` as DOT's lexer would scan quoted strings: a string starts and
// ends at an unescaped `"`. Fails if a string holds a raw newline or a byte
// outside printable ASCII, or if the text ends inside a string.
::testing::AssertionResult StringsAreWellFormed(const std::string& dot) {
  bool in_string = false;
  for (size_t i = 0; i < dot.size(); ++i) {
    const auto byte = static_cast<unsigned char>(dot[i]);
    if (!in_string) {
      if (dot[i] == '"') in_string = true;
      continue;
    }
    if (dot[i] == '\\') {
      ++i;  // the escaped character
      continue;
    }
    if (dot[i] == '"') {
      in_string = false;
    } else if (byte < 0x20 || byte >= 0x7f) {
      return ::testing::AssertionFailure() << "byte " << static_cast<int>(byte)
                                           << " inside a string at offset " << i;
    }
  }
  if (in_string) return ::testing::AssertionFailure() << "the text ends inside a string";
  return ::testing::AssertionSuccess();
}

// Runs Graphviz's dot on `dot`; its exit code and output.
struct DotRun {
  int exit_code = -1;
  std::string svg;
};
DotRun RunGraphviz(const std::string& dot, const std::string& name) {
  const std::string in = ::testing::TempDir() + name + ".dot";
  const std::string out = ::testing::TempDir() + name + ".svg";
  std::ofstream(in, std::ios::binary) << dot;
  const std::string command = std::string(AUTOBATCH_DOT) + " -Tsvg " + in + " -o " + out;
  DotRun run;
  const int status = std::system(command.c_str());
  if (WIFEXITED(status)) run.exit_code = WEXITSTATUS(status);
  std::stringstream svg;
  svg << std::ifstream(out, std::ios::binary).rdbuf();
  run.svg = svg.str();
  return run;
}

bool HaveGraphviz() { return std::string(AUTOBATCH_DOT).find("NOTFOUND") == std::string::npos; }

TEST(DotTest, SmallLoweredProgramGolden) {
  const std::string dot = PrintDot(testing::MakeSmallLoweredProgram());
  EXPECT_TRUE(testing::MatchesGoldenFile(dot, "tests/ir/golden/dot", "small_lowered"));
  // The facts the golden must show, so a wrong golden cannot pass silently.
  EXPECT_THAT(dot, ::testing::StartsWith("digraph autobatch {\n"));
  EXPECT_THAT(dot, HasSubstr("label=\"program stage=lowered entry=@main\\l\""));
  EXPECT_EQ(CountOccurrences(dot, "subgraph cluster_f"), 2);
  EXPECT_THAT(dot, HasSubstr("\"start\" -> \"f0_b0\";"));
  // Every block is a node whose label starts with its index and label.
  EXPECT_THAT(dot, HasSubstr("\"f0_b0\" [label=\"^0 entry\\l"));
  EXPECT_THAT(dot, HasSubstr("\"f0_b1\" [label=\"^1 resume\\l"));
  EXPECT_THAT(dot, HasSubstr("\"f1_b0\" [label=\"^0 entry\\l"));
  // Ops in the printer's form, with their pushes and pops.
  EXPECT_THAT(dot, HasSubstr("%a: f64 full = copy %x  [push 1]\\l"));
  EXPECT_THAT(dot, HasSubstr("push_goto @twice, ^1  [push pc]\\l"));
  EXPECT_THAT(dot, HasSubstr("%r: f64 register = copy %b\\l"));  // no push
  EXPECT_THAT(dot, HasSubstr("pop %a, %b  [pop 2]\\l"));
  EXPECT_THAT(dot, HasSubstr("indirect_goto  [pop pc]\\l"));
  // push_goto: a call edge to the callee's entry and a return edge.
  EXPECT_THAT(dot, HasSubstr("\"f0_b0\" -> \"f1_b0\" [label=\"call\", color=blue, style=bold];"));
  EXPECT_THAT(dot, HasSubstr("\"f0_b0\" -> \"f0_b1\" [label=\"return to\", style=dashed];"));
  EXPECT_THAT(dot, HasSubstr("\"f1_b0\" -> \"f1_return\";"));
  EXPECT_THAT(dot, HasSubstr("\"f0_b1\" -> \"f0_halt\";"));
  EXPECT_TRUE(StringsAreWellFormed(dot));
}

TEST(DotTest, UntypedProgramHasOneNodePerBlockAndItsEdges) {
  const Program program = testing::MakeFibonacciProgram();
  const std::string dot = PrintDot(program);
  int blocks = 0;
  int calls = 0;
  int branches = 0;
  int returns = 0;
  for (const Function& fn : program.module.functions) {
    blocks += static_cast<int>(fn.blocks.size());
    for (const Block& block : fn.blocks) {
      for (const Op& op : block.ops) calls += std::holds_alternative<CallOp>(op) ? 1 : 0;
      branches += std::holds_alternative<Branch>(block.terminator) ? 1 : 0;
      returns += std::holds_alternative<Return>(block.terminator) ? 1 : 0;
    }
  }
  EXPECT_EQ(CountOccurrences(dot, "subgraph cluster_f"),
            static_cast<int>(program.module.functions.size()));
  EXPECT_EQ(CountOccurrences(dot, " [label=\"^"), blocks);
  EXPECT_EQ(CountOccurrences(dot, "[label=\"call\""), calls);
  EXPECT_EQ(CountOccurrences(dot, "[label=\"then\"]"), branches);
  EXPECT_EQ(CountOccurrences(dot, "[label=\"else\"]"), branches);
  EXPECT_EQ(CountOccurrences(dot, "_return\";\n"), returns);
  EXPECT_THAT(dot, HasSubstr("label=\"func @main(%n: ?) -> (%r: ?)  (entry)\\l\""));
  EXPECT_THAT(dot, HasSubstr("\"f1_b0\" -> \"f1_b1\" [label=\"then\"];"));
  EXPECT_THAT(dot, HasSubstr("%one: ? = fill_like %n {literal = i64 1}\\l"));
  EXPECT_THAT(dot, HasSubstr("\"f1_b2\" -> \"f1_b3\";"));  // goto
  // No storage classes before allocation, so no pushes or pops.
  EXPECT_THAT(dot, Not(HasSubstr("[push")));
  EXPECT_THAT(dot, Not(HasSubstr("[pop")));
  EXPECT_THAT(dot, Not(HasSubstr("_halt")));
  EXPECT_EQ(dot, PrintDot(program));  // deterministic
  EXPECT_TRUE(StringsAreWellFormed(dot));
}

TEST(DotTest, GradientStubIsOneNodeWithItsHeader) {
  const Program program = testing::MakeGradientStubProgram();
  const std::string dot = PrintDot(program);
  EXPECT_TRUE(testing::MatchesGoldenFile(dot, "tests/ir/golden/dot", "gradient_stub"));
  // main and f are clusters; the stub is a single node outside them.
  EXPECT_EQ(CountOccurrences(dot, "subgraph cluster_f"), 2);
  EXPECT_THAT(dot, Not(HasSubstr("cluster_f1")));
  EXPECT_THAT(dot, HasSubstr("  \"f1_b0\" [label=\"func @grad_f(%a: ?, %b: ?) -> (%value: ?, "
                             "%db: ?) = gradient @f wrt 1\\l\", style=dashed];\n"));
  // The call reaches the stub's node, and the stub points at its primal.
  EXPECT_THAT(dot, HasSubstr("\"f0_b0\" -> \"f1_b0\" [label=\"call\", color=blue, style=bold];"));
  EXPECT_THAT(dot, HasSubstr("\"f1_b0\" -> \"f2_b0\" [label=\"gradient of\", style=dashed];"));
  EXPECT_THAT(dot, Not(HasSubstr("color=red")));  // no bad node
  EXPECT_THAT(dot, Not(HasSubstr("signature")));   // the stub's signature line is skipped
  EXPECT_TRUE(StringsAreWellFormed(dot));
  // A stub as the entry: the start arrow points at it.
  Program stub_entry = program;
  stub_entry.entry = FunctionId(1);
  const std::string entry_dot = PrintDot(stub_entry);
  EXPECT_THAT(entry_dot, HasSubstr("\"start\" -> \"f1_b0\";"));
  EXPECT_THAT(entry_dot, HasSubstr("= gradient @f wrt 1  (entry)\\l\""));
  // A primal out of range is a bad node, as for calls.
  stub_entry.module.functions[1].gradient_of->function = FunctionId(8);
  EXPECT_THAT(PrintDot(stub_entry), HasSubstr("\"f8_b0\" [label=\"@<bad:8>\\l\""));
  if (HaveGraphviz()) {
    EXPECT_EQ(RunGraphviz(dot, "gradient_stub").exit_code, 0);
  }
}

// Names hold every character that means something in DOT: quotes,
// backslashes (with letters that would make \N, \l or \G escapes),
// newlines, braces, angle brackets, bars, and bytes that are not UTF-8.
Program ProgramWithHostileNames() {
  Program program = testing::MakeSmallLoweredProgram();
  const std::string hostile = "q\"b\\N\\l\\G\n{r}<h>|x\xff\t\"]; evil -> x [";
  program.module.functions[1].name = "twice" + hostile;
  program.module.functions[0].blocks[1].label = "resume" + hostile;
  program.module.variables[0].name = "x" + hostile;
  return program;
}

TEST(DotTest, HostileNamesAreEscaped) {
  const std::string dot = PrintDot(ProgramWithHostileNames());
  EXPECT_TRUE(StringsAreWellFormed(dot));
  EXPECT_THAT(dot, Not(HasSubstr("evil -> x [\"")));
  // The printer quotes the name (\" and \\, \x0a for the newline); DOT
  // escaping then escapes each of its quotes and backslashes once more.
  EXPECT_THAT(dot, HasSubstr(R"(push_goto @\"twiceq\\\"b\\\\N\\\\l\\\\G\\x0a{r}<h>|x\\xff\\x09)"
                             R"(\\\"]; evil -> x [\", ^1)"));
  // The graph's structure does not change.
  EXPECT_EQ(CountOccurrences(dot, " -> "),
            CountOccurrences(PrintDot(testing::MakeSmallLoweredProgram()), " -> ") +
                CountOccurrences(dot, "evil -> x"));
}

TEST(DotTest, GraphvizAcceptsHostileNames) {
  if (!HaveGraphviz()) GTEST_SKIP() << "Graphviz's dot is not installed (tools/install_deps.sh)";
  DotRun run = RunGraphviz(PrintDot(ProgramWithHostileNames()), "hostile");
  ASSERT_EQ(run.exit_code, 0);
  // The labels show the names literally (SVG escapes <, > and quotes).
  EXPECT_THAT(run.svg, HasSubstr("{r}&lt;h&gt;|x"));
  EXPECT_THAT(run.svg, HasSubstr("evil &#45;&gt; x ["));
  EXPECT_THAT(run.svg, HasSubstr("b\\\\N\\\\l\\\\G"));  // no escape is interpreted
}

// The verifier rejects these; the writer must still draw them.
TEST(DotTest, BadIndicesBecomeNodesOfTheirOwn) {
  Program program = testing::MakeSmallLoweredProgram();
  Function& main = program.module.functions[0];
  main.blocks[0].terminator = PushGoto{FunctionId(42), BlockId(-3)};
  main.blocks[1].terminator = Branch{VarId(999), BlockId(7), BlockId(0)};
  main.blocks[1].ops.push_back(CallOp{FunctionId(-1), {VarId(-5)}, {}, {}});
  program.entry = FunctionId(9);
  const std::string dot = PrintDot(program);
  EXPECT_THAT(dot, HasSubstr("\"f42_b0\" [label=\"@<bad:42>\\l\", style=dashed, color=red];"));
  EXPECT_THAT(dot, HasSubstr("\"f0_b-3\" [label=\"^<bad:-3> of function 0\\l\""));
  EXPECT_THAT(dot, HasSubstr("\"f0_b7\" [label=\"^<bad:7> of function 0\\l\""));
  EXPECT_THAT(dot, HasSubstr("\"f-1_b0\" [label=\"@<bad:-1>\\l\""));
  EXPECT_THAT(dot, HasSubstr("branch %<bad:999>, ^<bad:7>, ^0"));
  EXPECT_THAT(dot, Not(HasSubstr("\"start\"")));  // the entry does not exist
  EXPECT_TRUE(StringsAreWellFormed(dot));
  if (HaveGraphviz()) {
    EXPECT_EQ(RunGraphviz(dot, "bad_indices").exit_code, 0);
  }
}

TEST(DotTest, LongBlocksAndLinesAreCut) {
  Program program = testing::MakeSmallLoweredProgram();
  Block& block = program.module.functions[1].blocks[0];
  const Op mul = block.ops[1];
  for (int i = 0; i < 100; ++i) block.ops.insert(block.ops.begin() + 1, mul);
  program.module.variables[0].name = std::string(1000, 'y');  // x, read by ^0's copy
  const std::string dot = PrintDot(program);
  EXPECT_EQ(CountOccurrences(dot, "= mul %a, %two"), kDotMaxOpsPerBlock - 1);
  EXPECT_THAT(dot, HasSubstr("\\l... " + std::to_string(102 - kDotMaxOpsPerBlock) +
                             " more ops\\lindirect_goto  [pop pc]\\l"));
  EXPECT_THAT(dot, HasSubstr(std::string(kDotMaxLineChars - 3 - 20, 'y')));
  EXPECT_THAT(dot, Not(HasSubstr(std::string(kDotMaxLineChars, 'y'))));
  EXPECT_THAT(dot, HasSubstr("...\\l"));
  EXPECT_TRUE(StringsAreWellFormed(dot));
}

}  // namespace
}  // namespace autobatch
