// The tidy passes (passes/pipeline.h TidyPipelineText) on the frontend's
// output: fewer ops and blocks, the same values, the user's names kept. The
// passes' own rules are tested one pass at a time in tests/passes.
#include <cstdint>
#include <string>
#include <vector>

#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include "frontend/context.h"
#include "frontend/run.h"
#include "ir/printer.h"
#include "passes/pipeline.h"

namespace autobatch {
namespace {

void DefineSamples(Context& ctx, BatchFunction* fib, BatchFunction* loop) {
  *fib = ctx.Declare("fib");
  BatchFunction f = *fib;
  ctx.Batch(f)([f](Builder& b, Value n) {
    Var ans = b.Local("ans");
    b.If(n > 1).Then([&] { ans = f(n - 1) + f(n - 2); }).Else([&] { ans = 1; });
    return ans;
  });
  *loop = ctx.Batch("loop")([](Builder& b, Value n) {
    Var a = b.Local("a", 0), c = b.Local("c", 1), i = b.Local("i", 0);
    b.While([&] { return i < n; }).Do([&] {
      Value old = a;
      a = c;
      c = old + c;
      b.If(a > 100).Then([&] { b.Break(); });
      i += 1;
    });
    Tie(a, c) = Tie(c, a);
    return a - c;
  });
}

Program Tidy(const Program& raw) {
  absl::StatusOr<Pipeline> tidy = ParsePipeline(TidyPipelineText());
  EXPECT_TRUE(tidy.ok()) << tidy.status();
  absl::StatusOr<Program> tidied = RunPipeline(raw, *tidy, {});
  EXPECT_TRUE(tidied.ok()) << tidied.status();
  return tidied.ok() ? *tidied : raw;
}

int CountOps(const Function& f) {
  int n = 0;
  for (const Block& block : f.blocks) n += static_cast<int>(block.ops.size());
  return n;
}

std::vector<int64_t> DryRun(const Context& ctx, const Program& program,
                            const std::vector<int64_t>& n) {
  absl::StatusOr<Tensor> input = Tensor::FromVector(n);
  EXPECT_TRUE(input.ok()) << input.status();
  CallOptions options;
  options.dry_run = true;
  absl::StatusOr<std::vector<Tensor>> out =
      RunProgram(program, {*input}, &ctx.kernels(), options);
  EXPECT_TRUE(out.ok()) << out.status();
  if (!out.ok()) return {};
  absl::StatusOr<std::vector<int64_t>> values = (*out)[0].ToVector<int64_t>();
  EXPECT_TRUE(values.ok()) << values.status();
  return values.ok() ? *values : std::vector<int64_t>{};
}

TEST(TidyTest, TidiedProgramsComputeTheSameAsRawOnes) {
  Context ctx;
  BatchFunction fib, loop;
  DefineSamples(ctx, &fib, &loop);
  std::vector<int64_t> n;
  for (int64_t i = -1; i <= 15; ++i) n.push_back(i);
  for (const BatchFunction& f : {fib, loop}) {
    absl::StatusOr<Program> raw = ctx.Program(f);
    ASSERT_TRUE(raw.ok()) << raw.status();
    const Program tidied = Tidy(*raw);
    EXPECT_LT(CountOps(tidied.entry_function()), CountOps(raw->entry_function()))
        << PrintProgram(tidied) << PrintProgram(*raw);
    EXPECT_LE(tidied.entry_function().blocks.size(), raw->entry_function().blocks.size());
    EXPECT_LT(tidied.module.variables.size(), raw->module.variables.size());
    EXPECT_EQ(DryRun(ctx, tidied, n), DryRun(ctx, *raw, n));
  }
  // Spot checks of the loop against C++.
  auto reference = [](int64_t n) {
    int64_t a = 0, c = 1;
    for (int64_t i = 0; i < n; ++i) {
      int64_t old = a;
      a = c;
      c = old + c;
      if (a > 100) break;
    }
    return c - a;
  };
  absl::StatusOr<Program> raw = ctx.Program(loop);
  ASSERT_TRUE(raw.ok()) << raw.status();
  EXPECT_EQ(DryRun(ctx, Tidy(*raw), {0, 3, 12, 30}),
            (std::vector<int64_t>{reference(0), reference(3), reference(12), reference(30)}));
}

TEST(TidyTest, TheUsersNamedLocalsSurviveTidying) {
  Context ctx;
  BatchFunction fib, loop;
  DefineSamples(ctx, &fib, &loop);
  absl::StatusOr<Program> raw = ctx.Program(loop);
  ASSERT_TRUE(raw.ok()) << raw.status();
  const std::string text = PrintProgram(Tidy(*raw));
  for (const char* name : {"%a:", "%c:", "%i:"}) {
    EXPECT_THAT(text, ::testing::HasSubstr(name)) << text;
  }
}

}  // namespace
}  // namespace autobatch
